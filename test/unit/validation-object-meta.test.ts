import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { invalid } from '../../src/api/errors.js';
import { nameRuleFor } from '../../src/validation/name-rules.js';
import { validateObjectMeta, type ObjectMetaOptions } from '../../src/validation/object-meta.js';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
  "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', " +
  "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', " +
  "regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with " +
  "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

const pods: ObjectMetaOptions = { namespaced: true, nameRule: nameRuleFor('', 'pods'), isCreate: true };
const nodes: ObjectMetaOptions = { namespaced: false, nameRule: nameRuleFor('', 'nodes'), isCreate: true };

describe('validateObjectMeta on create', () => {
  test('a valid pod has no errors', () => {
    assert.deepEqual(validateObjectMeta({ name: 'web-0', namespace: 'default', labels: { app: 'web', 'example.com/tier': '' } }, pods), []);
  });

  test('invalid name: kube message, reason and field', () => {
    assert.deepEqual(validateObjectMeta({ name: 'Foo_', namespace: 'default' }, pods), [
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "Foo_": ${SUBDOMAIN_MSG}` },
    ]);
  });

  test('the Status message reads like kube-apiserver', () => {
    const causes = validateObjectMeta({ name: 'Foo_', namespace: 'default' }, pods);
    const status = invalid('Pod', '', 'Foo_', causes).toStatus();
    assert.equal(status.code, 422);
    assert.equal(status.message, `Pod "Foo_" is invalid: metadata.name: Invalid value: "Foo_": ${SUBDOMAIN_MSG}`);
  });

  test('too long subdomain reports its limit in characters (the wording of kube name checks)', () => {
    const name = 'a'.repeat(254);
    const causes = validateObjectMeta({ name, namespace: 'default' }, pods);
    assert.deepEqual(
      causes.map((c) => c.message),
      [`Invalid value: "${name}": must be no more than 253 characters`],
    );
  });

  test('name required unless generated', () => {
    assert.deepEqual(validateObjectMeta({ namespace: 'default' }, pods), [
      { reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' },
    ]);
  });

  test('invalid generateName is reported on generateName and name', () => {
    const causes = validateObjectMeta({ generateName: 'Web-', name: 'Web-x7k2p', namespace: 'default' }, pods);
    assert.deepEqual(
      causes.map((c) => c.field),
      ['metadata.generateName', 'metadata.name'],
    );
    assert.ok(causes[0]?.message?.startsWith('Invalid value: "Web-": a lowercase RFC 1123 subdomain'));
  });

  test('a generateName may end in a dash', () => {
    assert.deepEqual(validateObjectMeta({ generateName: 'web-', name: 'web-x7k2p', namespace: 'default' }, pods), []);
  });

  test('namespace required for namespaced types', () => {
    assert.deepEqual(validateObjectMeta({ name: 'a' }, pods), [{ reason: 'FieldValueRequired', field: 'metadata.namespace', message: 'Required value' }]);
  });

  test('namespace must be a DNS label', () => {
    const causes = validateObjectMeta({ name: 'a', namespace: 'a.b' }, pods);
    assert.deepEqual(causes, [{ reason: 'FieldValueInvalid', field: 'metadata.namespace', message: 'Invalid value: "a.b": must not contain dots' }]);
  });

  test('namespace forbidden for cluster-scoped types', () => {
    assert.deepEqual(validateObjectMeta({ name: 'node-1', namespace: 'default' }, nodes), [
      { reason: 'FieldValueForbidden', field: 'metadata.namespace', message: 'Forbidden: not allowed on this type' },
    ]);
  });

  test('label keys and values', () => {
    const causes = validateObjectMeta({ name: 'a', namespace: 'n', labels: { bad_: 'ok', good: 'bad value', ['x'.repeat(64)]: '' } }, pods);
    assert.deepEqual(causes, [
      { reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "bad_": ${NAME_PART_MSG}` },
      { reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "bad value": ${LABEL_VALUE_MSG}` },
      { reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "${'x'.repeat(64)}": name part must be no more than 63 bytes` },
    ]);
  });

  test('label value longer than 63 bytes', () => {
    const v = 'v'.repeat(64);
    assert.deepEqual(
      validateObjectMeta({ name: 'a', namespace: 'n', labels: { k: v } }, pods).map((c) => c.message),
      [`Invalid value: "${v}": must be no more than 63 bytes`],
    );
  });

  test('label key prefix must be a subdomain', () => {
    const causes = validateObjectMeta({ name: 'a', namespace: 'n', labels: { 'Example.com/a': 'b', '/a': 'b' } }, pods);
    assert.deepEqual(
      causes.map((c) => c.message),
      ['Invalid value: "/a": prefix part must be non-empty', `Invalid value: "Example.com/a": prefix part ${SUBDOMAIN_MSG}`],
    );
  });

  test('annotation keys are case-insensitive label keys', () => {
    assert.deepEqual(validateObjectMeta({ name: 'a', namespace: 'n', annotations: { 'Example.COM/Key': 'anything goes' } }, pods), []);
    const causes = validateObjectMeta({ name: 'a', namespace: 'n', annotations: { 'a b': 'x' } }, pods);
    assert.equal(causes[0]?.field, 'metadata.annotations');
    assert.equal(causes[0]?.message, `Invalid value: "a b": ${NAME_PART_MSG}`);
  });

  test('annotations larger than 256 KiB in total', () => {
    const ok = { a: 'x'.repeat(262144 - 1) };
    assert.deepEqual(validateObjectMeta({ name: 'a', namespace: 'n', annotations: ok }, pods), []);
    const tooBig = { a: 'x'.repeat(262144) };
    assert.deepEqual(validateObjectMeta({ name: 'a', namespace: 'n', annotations: tooBig }, pods), [
      { reason: 'FieldValueTooLong', field: 'metadata.annotations', message: 'Too long: may not be more than 262144 bytes' },
    ]);
  });

  test('finalizers: qualified names, standard names, orphan with foregroundDeletion', () => {
    assert.deepEqual(validateObjectMeta({ name: 'a', namespace: 'n', finalizers: ['kubernetes', 'example.com/cleanup'] }, pods), []);
    assert.deepEqual(validateObjectMeta({ name: 'a', namespace: 'n', finalizers: ['cleanup'] }, pods), [
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.finalizers[0]',
        message: 'Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
      },
    ]);
    assert.deepEqual(validateObjectMeta({ name: 'a', namespace: 'n', finalizers: ['orphan', 'foregroundDeletion'] }, pods), [
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.finalizers',
        message: 'Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
      },
    ]);
    const bad = validateObjectMeta({ name: 'a', namespace: 'n', finalizers: ['example.com/-x'] }, pods);
    assert.equal(bad[0]?.field, 'metadata.finalizers');
  });

  test('custom resources accept unqualified finalizers', () => {
    const cr: ObjectMetaOptions = { namespaced: true, nameRule: nameRuleFor('stable.example.com', 'crontabs'), isCreate: true };
    assert.deepEqual(validateObjectMeta({ name: 'a', namespace: 'n', finalizers: ['cleanup'] }, cr), []);
  });

  test('owner references', () => {
    const causes = validateObjectMeta(
      {
        name: 'a',
        namespace: 'n',
        ownerReferences: [
          { apiVersion: '', kind: '', name: '', uid: '' },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r1', uid: 'u1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r2', uid: 'u2', controller: true },
          { apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u3' },
        ],
      },
      pods,
    );
    assert.deepEqual(
      causes.map((c) => [c.field, c.message?.split(': ').slice(-1)[0]]),
      [
        ['metadata.ownerReferences.apiVersion', 'version must not be empty'],
        ['metadata.ownerReferences.kind', 'must not be empty'],
        ['metadata.ownerReferences.name', 'must not be empty'],
        ['metadata.ownerReferences.uid', 'must not be empty'],
        ['metadata.ownerReferences', 'Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/r1 and ReplicaSet/r2'],
        ['metadata.ownerReferences', '/v1, Kind=Event is disallowed from being an owner'],
      ],
    );
  });

  test('owner references in field errors are printed as JSON, as kube-apiserver 1.36 prints them', () => {
    const causes = validateObjectMeta(
      {
        name: 'o',
        namespace: 'n',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u1', controller: true },
          { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd', uid: 'u2', controller: true, blockOwnerDeletion: false },
        ],
      },
      pods,
    );
    // The reference's answer for the same object, cause by cause.
    assert.deepEqual(
      causes.map((c) => c.message),
      [
        'Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u1","controller":true}: /v1, Kind=Event is disallowed from being an owner',
        'Invalid value: [{"apiVersion":"v1","kind":"Event","name":"e","uid":"u1","controller":true},{"apiVersion":"apps/v1","kind":"Deployment","name":"d","uid":"u2","controller":true,"blockOwnerDeletion":false}]: Only one reference can have Controller set to true. Found "true" in references for Event/e and Deployment/d',
      ],
    );
  });

  test('negative generation', () => {
    assert.deepEqual(validateObjectMeta({ name: 'a', namespace: 'n', generation: -1 }, pods), [
      { reason: 'FieldValueInvalid', field: 'metadata.generation', message: 'Invalid value: -1: must be greater than or equal to 0' },
    ]);
  });

  test('path-segment check applies after the type rule passes', () => {
    const csr: ObjectMetaOptions = { namespaced: false, nameRule: nameRuleFor('certificates.k8s.io', 'certificatesigningrequests'), isCreate: true };
    assert.deepEqual(validateObjectMeta({ name: 'Any_Name:ok' }, csr), []);
    assert.deepEqual(validateObjectMeta({ name: 'a/b%c' }, csr), [
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: 'Invalid value: "a/b%c": may not contain \'/\'' },
      { reason: 'FieldValueInvalid', field: 'metadata.name', message: 'Invalid value: "a/b%c": may not contain \'%\'' },
    ]);
    assert.deepEqual(
      validateObjectMeta({ name: '..' }, csr).map((c) => c.message),
      ['Invalid value: "..": may not be \'..\''],
    );
  });

  test('managed fields', () => {
    const causes = validateObjectMeta({ name: 'a', namespace: 'n', managedFields: [{ manager: 'm', operation: 'Patch', fieldsType: 'FieldsV2' }] }, pods);
    assert.deepEqual(
      causes.map((c) => [c.field, c.message]),
      [
        ['metadata.managedFields[0].operation', 'Invalid value: "Patch": must be `Apply` or `Update`'],
        ['metadata.managedFields[0].fieldsType', 'Invalid value: "FieldsV2": must be `FieldsV1`'],
      ],
    );
  });
});

describe('validateObjectMeta on update', () => {
  const old = {
    name: 'a',
    namespace: 'n',
    uid: 'u-1',
    resourceVersion: '5',
    generation: 2,
    creationTimestamp: '2024-01-02T03:04:05Z',
  };
  const opts: ObjectMetaOptions = { namespaced: true, nameRule: nameRuleFor('', 'pods'), isCreate: false, old };

  test('unchanged metadata is valid', () => {
    assert.deepEqual(validateObjectMeta({ ...old, labels: { a: 'b' } }, opts), []);
  });

  test('name, namespace, uid and creationTimestamp are immutable', () => {
    const causes = validateObjectMeta({ ...old, name: 'b', namespace: 'm', uid: 'u-2', creationTimestamp: '2025-01-01T00:00:00Z' }, opts);
    assert.deepEqual(
      causes.map((c) => [c.reason, c.field, c.message]),
      [
        ['FieldValueInvalid', 'metadata.name', 'Invalid value: "b": field is immutable'],
        ['FieldValueInvalid', 'metadata.namespace', 'Invalid value: "m": field is immutable'],
        ['FieldValueInvalid', 'metadata.uid', 'Invalid value: "u-2": field is immutable'],
        ['FieldValueInvalid', 'metadata.creationTimestamp', 'Invalid value: 2025-01-01 00:00:00 +0000 UTC: field is immutable'],
      ],
    );
  });

  test('generation must not decrease; resourceVersion required when asked', () => {
    const causes = validateObjectMeta({ ...old, generation: 1, resourceVersion: '' }, { ...opts, requireResourceVersion: true });
    assert.deepEqual(
      causes.map((c) => [c.field, c.message]),
      [
        ['metadata.resourceVersion', 'Invalid value: "": must be specified for an update'],
        ['metadata.generation', 'Invalid value: 1: must not be decremented'],
      ],
    );
  });

  test('no new finalizers once deletion started', () => {
    const deleting = { ...old, deletionTimestamp: '2024-02-01T00:00:00Z', finalizers: ['example.com/a'] };
    const causes = validateObjectMeta({ ...deleting, finalizers: ['example.com/a', 'example.com/b'] }, { ...opts, old: deleting });
    assert.deepEqual(causes, [
      {
        reason: 'FieldValueForbidden',
        field: 'metadata.finalizers',
        message: 'Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"example.com/b"}',
      },
    ]);
  });

  test('labels are still validated', () => {
    assert.equal(validateObjectMeta({ ...old, labels: { k: 'bad value' } }, opts)[0]?.message, `Invalid value: "bad value": ${LABEL_VALUE_MSG}`);
  });
});
