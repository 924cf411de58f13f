/**
 * Validation of webhook configurations (src/validation/webhook-configuration.ts): the causes kube-apiserver
 * 1.36 reports (texts recorded from the reference), including its swapped service name/namespace fields
 * and the leniency for stored objects whose side effects v1 no longer accepts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { causeText } from '../../src/validation/field-errors.js';
import { validateWebhookConfiguration } from '../../src/validation/webhook-configuration.js';
import { matchConditionCompiler } from '../../src/cel/match-conditions.js';

type Obj = Record<string, unknown>;
const ok: Obj = { name: 'a.b.c', clientConfig: { url: 'https://127.0.0.1:1/x' }, sideEffects: 'None', admissionReviewVersions: ['v1'] };
const texts = (hooks: Obj[], old?: Obj[], mutating = false): string[] =>
  validateWebhookConfiguration({ webhooks: hooks }, old === undefined ? undefined : { webhooks: old }, mutating, (e) => matchConditionCompiler().check(e)).map(
    causeText,
  );

test('a valid webhook has no causes', () => {
  assert.deepEqual(texts([ok]), []);
});

test('names, side effects, client config', () => {
  assert.deepEqual(texts([{ ...ok, name: 'ab' }]), [
    'webhooks[0].name: Invalid value: "ab": should be a domain with at least three segments separated by dots',
  ]);
  assert.deepEqual(texts([{ ...ok, sideEffects: undefined }]), ['webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun']);
  assert.deepEqual(texts([{ ...ok, sideEffects: 'Some' }]), ['webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"']);
  assert.deepEqual(texts([{ ...ok, clientConfig: {} }]), ['webhooks[0].clientConfig: Required value: exactly one of url or service is required']);
  assert.deepEqual(texts([{ ...ok, clientConfig: { url: 'http://u:p@x/y?q=1#f' } }]), [
    `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
    'webhooks[0].clientConfig.url: Invalid value: "u:p": user information is not permitted in the URL',
    'webhooks[0].clientConfig.url: Invalid value: "f": fragments are not permitted in the URL',
    'webhooks[0].clientConfig.url: Invalid value: "q=1": query parameters are not permitted in the URL',
  ]);
  assert.deepEqual(texts([{ ...ok, clientConfig: { service: { namespace: '', name: 'b', path: '/ok', port: 0 } } }]), [
    'webhooks[0].clientConfig.service.name: Required value',
    'webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
  ]);
  assert.deepEqual(texts([ok, ok]), ['webhooks[1].name: Duplicate value: "a.b.c"']);
});

test('rules', () => {
  assert.deepEqual(
    texts([
      { ...ok, rules: [{ operations: ['*', 'GET'], apiGroups: ['*', 'a'], apiVersions: [''], resources: ['*', 'pods', 'a/*', 'a/b', '*/*'], scope: 'Bad' }] },
    ]),
    [
      `webhooks[0].rules[0].operations: Invalid value: ["*","GET"]: if '*' is present, must not specify other operations`,
      'webhooks[0].rules[0].operations[1]: Unsupported value: "GET": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
      `webhooks[0].rules[0].apiGroups: Invalid value: ["*","a"]: if '*' is present, must not specify other API groups`,
      'webhooks[0].rules[0].apiVersions[0]: Required value',
      `webhooks[0].rules[0].resources[3]: Invalid value: "a/b": if 'a/*' is present, must not specify a/b`,
      `webhooks[0].rules[0].resources: Invalid value: ["*","pods","a/*","a/b","*/*"]: if '*/*' is present, must not specify other resources`,
      `webhooks[0].rules[0].resources: Invalid value: ["*","pods","a/*","a/b","*/*"]: if '*' is present, must not specify other resources without subresources`,
      'webhooks[0].rules[0].scope: Unsupported value: "Bad": supported values: "*", "Cluster", "Namespaced"',
    ],
  );
});

test('match conditions must compile; unchanged ones are not checked again on update', () => {
  const bad = { ...ok, matchConditions: [{ name: 'x', expression: '... [] bad expression' }] };
  const [first] = texts([bad]);
  assert.match(
    first ?? '',
    /^webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "\.\.\. \[\] bad expression": compilation failed: ERROR: <input>:1:2: /,
  );
  assert.deepEqual(texts([{ ...bad, timeoutSeconds: 5 }], [bad]), []);
});

test('match conditions: the authorizer variables are declared; the output must be exactly bool (texts from the reference)', () => {
  const conditions = [
    "authorizer.check('x')",
    "authorizer.requestResource.check('create')",
    "authorizer.requestResource.check('create').allowed() && params.x",
    'object.spec.enabled',
    'object.metadata.name.startsWith(1)',
    "'x'",
    "authorizer.path('/x').check('get').reason() == 'a' && authorizer.serviceAccount('a','b').group('').resource('pods').subresource('x').name('y').check('get').errored()",
  ];
  const hook = { ...ok, matchConditions: conditions.map((expression, i) => ({ name: `c${i}`, expression })) };
  assert.deepEqual(texts([hook]), [
    `webhooks[0].matchConditions[0].expression: Invalid value: "authorizer.check('x')": compilation failed: ERROR: <input>:1:17: found no matching overload for 'check' applied to 'kubernetes.authorization.Authorizer.(string)'\n | authorizer.check('x')\n | ................^`,
    `webhooks[0].matchConditions[1].expression: Invalid value: "authorizer.requestResource.check('create')": must evaluate to bool but got kubernetes.authorization.Decision`,
    `webhooks[0].matchConditions[2].expression: Invalid value: "authorizer.requestResource.check('create').allowed() && params.x": compilation failed: ERROR: <input>:1:57: undeclared reference to 'params' (in container '')\n | authorizer.requestResource.check('create').allowed() && params.x\n | ........................................................^`,
    'webhooks[0].matchConditions[3].expression: Invalid value: "object.spec.enabled": must evaluate to bool but got dyn',
    `webhooks[0].matchConditions[4].expression: Invalid value: "object.metadata.name.startsWith(1)": compilation failed: ERROR: <input>:1:32: found no matching overload for 'startsWith' applied to 'dyn.(int)'\n | object.metadata.name.startsWith(1)\n | ...............................^`,
    `webhooks[0].matchConditions[5].expression: Invalid value: "'x'": must evaluate to bool but got string`,
  ]);
});

test('an update may keep side effects v1 no longer accepts when the stored object has them', () => {
  const legacy = { ...ok, sideEffects: 'Unknown' };
  assert.deepEqual(texts([{ ...legacy, timeoutSeconds: 5 }], [legacy], true), []);
  assert.equal(texts([legacy], [ok]).length, 1);
});
