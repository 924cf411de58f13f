import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateNameFrom, GENERATED_NAME_ALPHABET } from '../../src/validation/generate-name.js';
import { nameRuleFor, validateName } from '../../src/validation/name-rules.js';
import { resolveObjectNamespace } from '../../src/validation/request-namespace.js';
import { ApiError } from '../../src/api/errors.js';

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start " +
  "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic " +
  "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

describe('nameRuleFor', () => {
  const cases: Array<[string, string, string]> = [
    ['', 'pods', 'dns1123-subdomain'],
    ['', 'configmaps', 'dns1123-subdomain'],
    ['', 'nodes', 'dns1123-subdomain'],
    ['', 'serviceaccounts', 'dns1123-subdomain'],
    ['', 'namespaces', 'dns1123-label'],
    ['', 'services', 'dns1123-label'],
    ['', 'events', 'path-segment'],
    ['events.k8s.io', 'events', 'dns1123-subdomain'],
    ['apps', 'statefulsets', 'dns1123-label'],
    ['apps', 'deployments', 'dns1123-subdomain'],
    ['batch', 'cronjobs', 'cronjob'],
    ['rbac.authorization.k8s.io', 'roles', 'path-segment'],
    ['rbac.authorization.k8s.io', 'clusterroles', 'path-segment'],
    ['rbac.authorization.k8s.io', 'rolebindings', 'path-segment'],
    ['rbac.authorization.k8s.io', 'clusterrolebindings', 'path-segment'],
    ['certificates.k8s.io', 'certificatesigningrequests', 'any'],
    ['apiextensions.k8s.io', 'customresourcedefinitions', 'crd'],
    ['apiregistration.k8s.io', 'apiservices', 'apiservice'],
    ['scheduling.k8s.io', 'priorityclasses', 'dns1123-subdomain'],
    ['coordination.k8s.io', 'leases', 'dns1123-subdomain'],
    ['stable.example.com', 'crontabs', 'dns1123-subdomain'],
  ];
  for (const [group, resource, kind] of cases) {
    test(`${resource}.${group || 'core'} uses ${kind}`, () => assert.equal(nameRuleFor(group, resource).kind, kind));
  }

  test('standard finalizer rule only for core-validated types', () => {
    assert.equal(nameRuleFor('', 'pods').standardFinalizers, true);
    assert.equal(nameRuleFor('', 'events').standardFinalizers, false);
    assert.equal(nameRuleFor('admissionregistration.k8s.io', 'validatingwebhookconfigurations').standardFinalizers, false);
    assert.equal(nameRuleFor('example.com', 'widgets').standardFinalizers, false);
  });
});

describe('validateName', () => {
  test('DNS-1123 label', () => {
    assert.deepEqual(validateName('dns1123-label', 'my-ns', false), []);
    assert.deepEqual(validateName('dns1123-label', 'My_ns', false), [LABEL_MSG]);
    assert.deepEqual(validateName('dns1123-label', 'a.b', false), ['must not contain dots']);
    assert.deepEqual(validateName('dns1123-label', 'x'.repeat(64), false), ['must be no more than 63 characters']);
  });

  test('DNS-1035 label (services)', () => {
    assert.deepEqual(validateName('dns1035-label', 'web', false), []);
    assert.deepEqual(validateName('dns1035-label', '1web', false), [DNS1035_MSG]);
    assert.deepEqual(validateName('dns1035-label', 'web-', true), []);
  });

  test('path segment (RBAC)', () => {
    assert.deepEqual(validateName('path-segment', 'system:controller:Foo', false), []);
    assert.deepEqual(validateName('path-segment', '.', false), ["may not be '.'"]);
    assert.deepEqual(validateName('path-segment', 'a/b', false), ["may not contain '/'"]);
  });

  test('cronjob names are at most 52 bytes', () => {
    assert.deepEqual(validateName('cronjob', 'c'.repeat(52), false), []);
    assert.deepEqual(validateName('cronjob', 'c'.repeat(53), false), ['must be no more than 52 characters']);
  });

  test('CRD names are <plural>.<group>', () => {
    const crd = { spec: { group: 'stable.example.com', names: { plural: 'crontabs' } } };
    assert.deepEqual(validateName('crd', 'crontabs.stable.example.com', false, crd), []);
    assert.deepEqual(validateName('crd', 'crontab.stable.example.com', false, crd), ['must be spec.names.plural+"."+spec.group']);
  });

  test('IPAddress names are canonical IPs', () => {
    assert.deepEqual(validateName('ip-address', '10.0.0.1', false), []);
    assert.deepEqual(validateName('ip-address', 'fd00::1', false), []);
    assert.equal(validateName('ip-address', 'fd00:0::1', false).length, 1);
    assert.equal(validateName('ip-address', 'not-an-ip', false).length, 1);
  });

  test('APIService names are <version>.<group>', () => {
    const svc = { spec: { group: 'metrics.k8s.io', version: 'v1beta1' } };
    assert.deepEqual(validateName('apiservice', 'v1beta1.metrics.k8s.io', false, svc), []);
    assert.equal(validateName('apiservice', 'v1.metrics.k8s.io', false, svc).length, 1);
  });
});

describe('generateNameFrom', () => {
  test("appends 5 characters from kube's alphabet", () => {
    for (let i = 0; i < 200; i++) {
      const name = generateNameFrom('web-');
      assert.equal(name.length, 9);
      assert.ok(name.startsWith('web-'));
      for (const ch of name.slice(4)) assert.ok(GENERATED_NAME_ALPHABET.includes(ch), ch);
    }
    assert.equal(GENERATED_NAME_ALPHABET, 'bcdfghjklmnpqrstvwxz2456789');
  });

  test('truncates the prefix so the name is at most 63 characters', () => {
    const prefix = 'p'.repeat(100);
    const name = generateNameFrom(prefix);
    assert.equal(name.length, 63);
    assert.ok(name.startsWith('p'.repeat(58)));
    // The suffix is 5 generated characters (the alphabet itself contains 'p', so only the length and alphabet are checkable).
    assert.match(name.slice(58), /^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  test('names differ', () => {
    const names = new Set(Array.from({ length: 50 }, () => generateNameFrom('x-')));
    assert.ok(names.size > 45);
  });
});

describe('resolveObjectNamespace', () => {
  test('defaults, clears and rejects as kube does', () => {
    assert.equal(resolveObjectNamespace('ns', true, ''), 'ns');
    assert.equal(resolveObjectNamespace('ns', true, 'ns'), 'ns');
    assert.equal(resolveObjectNamespace('', false, 'whatever'), '');
    assert.throws(
      () => resolveObjectNamespace('ns', true, 'other'),
      (err: unknown) =>
        err instanceof ApiError &&
        err.code === 400 &&
        err.reason === 'BadRequest' &&
        err.message === 'the namespace of the provided object does not match the namespace sent on the request',
    );
  });
});
