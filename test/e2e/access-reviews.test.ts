/**
 * Review types (access reviews, self subject review, token review) are create-only resources answered
 * by the server's authorization stage and stored nowhere. Expected answers were taken from
 * kube-apiserver 1.36: object paths of a review type are not routed (404), other verbs on the
 * collection are 405, and invalid reviews get kube's 422 (whose internal review objects name no kind).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { kubectlFor } from './kubectl.js';

const AUTHZ = '/apis/authorization.k8s.io/v1';

function post(srv: TestServer, path: string, body: unknown) {
  return api(srv.url, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function invalidStatus(field: string, detail: string) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `.authorization.k8s.io "" is invalid: ${field}: ${detail}`,
    reason: 'Invalid',
    details: { group: 'authorization.k8s.io', causes: [{ reason: 'FieldValueInvalid', message: detail, field }] },
    code: 422,
  };
}

describe('review types under AlwaysAllow', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(async () => {
    await srv?.stop();
  });

  test('only POST to the collection is served: object paths 404, other collection verbs 405', async () => {
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE', 'POST']) {
      const r = await api(srv.url, '/apis/authentication.k8s.io/v1/selfsubjectreviews/x', { method });
      assert.equal(r.status, 404, `${method} object path: ${r.text}`);
      assert.equal(r.body.message, 'the server could not find the requested resource');
    }
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
      const r = await api(srv.url, `${AUTHZ}/subjectaccessreviews`, { method });
      assert.equal(r.status, 405, `${method} collection: ${r.text}`);
      assert.equal(r.body.reason, 'MethodNotAllowed');
    }
  });

  test('a SubjectAccessReview is answered by the authorizer and echoes its spec', async () => {
    const spec = { user: 'alice', resourceAttributes: { namespace: 'ns1', verb: 'get', resource: 'pods' } };
    const r = await post(srv, `${AUTHZ}/subjectaccessreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body, { kind: 'SubjectAccessReview', apiVersion: 'authorization.k8s.io/v1', metadata: {}, spec, status: { allowed: true } });
    const again = await api(srv.url, `${AUTHZ}/subjectaccessreviews`, { method: 'GET' });
    assert.equal(again.status, 405, 'nothing was stored to list');
  });

  test("invalid access reviews get kube's 422 for each rule", async () => {
    const cases: [string, unknown, ReturnType<typeof invalidStatus>][] = [
      [
        `${AUTHZ}/selfsubjectaccessreviews`,
        { spec: {} },
        invalidStatus('spec.resourceAttributes', 'Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified'),
      ],
      [
        `${AUTHZ}/selfsubjectaccessreviews`,
        { spec: { resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/x', verb: 'get' } } },
        invalidStatus('spec.nonResourceAttributes', 'Invalid value: {"Path":"/x","Verb":"get"}: cannot be specified in combination with resourceAttributes'),
      ],
      [
        `${AUTHZ}/subjectaccessreviews`,
        { spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } },
        invalidStatus('spec.user', 'Invalid value: "": at least one of user or group must be specified'),
      ],
      [
        `${AUTHZ}/namespaces/ns1/localsubjectaccessreviews`,
        { spec: { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'ns2' } } },
        invalidStatus('spec.resourceAttributes.namespace', 'Invalid value: "ns2": must match metadata.namespace'),
      ],
      [
        `${AUTHZ}/namespaces/ns1/localsubjectaccessreviews`,
        { spec: { user: 'alice', nonResourceAttributes: { verb: 'get', path: '/x' } } },
        invalidStatus('spec.nonResourceAttributes', 'Invalid value: {"Path":"/x","Verb":"get"}: disallowed on this kind of request'),
      ],
    ];
    for (const [path, body, expected] of cases) {
      const r = await post(srv, path, body);
      assert.equal(r.status, 422, r.text);
      assert.deepEqual(r.body, expected);
    }
  });

  test('SelfSubjectReview reports the requesting user; TokenReview needs a token; rules reviews need a namespace', async () => {
    const self = await post(srv, '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    assert.equal(self.status, 201, self.text);
    assert.deepEqual(self.body.status, { userInfo: { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] } });
    assert.match(self.body.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const token = await post(srv, '/apis/authentication.k8s.io/v1/tokenreviews', { spec: {} });
    assert.equal(token.status, 400);
    assert.equal(token.body.message, 'token is required for TokenReview in authentication');
    const rules = await post(srv, `${AUTHZ}/selfsubjectrulesreviews`, { spec: {} });
    assert.equal(rules.status, 400);
    assert.equal(rules.body.message, 'no namespace on request');
  });

  test('reviews and token requests are not served as Tables (406, as their kube storage has no Table conversion); stored objects are', async () => {
    const table = 'application/json;as=Table;v=v1;g=meta.k8s.io';
    const send = (path: string, body: unknown, accept: string) =>
      api(srv.url, path, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify(body) });
    assert.equal((await post(srv, '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'table-robot' } })).status, 201);
    const reviews: [string, unknown][] = [
      [`${AUTHZ}/selfsubjectaccessreviews`, { spec: { nonResourceAttributes: { path: '/', verb: 'get' } } }],
      [`${AUTHZ}/subjectaccessreviews`, { spec: { user: 'alice', nonResourceAttributes: { path: '/', verb: 'get' } } }],
      [`${AUTHZ}/selfsubjectrulesreviews`, { spec: { namespace: 'default' } }],
      ['/apis/authentication.k8s.io/v1/selfsubjectreviews', {}],
      ['/apis/authentication.k8s.io/v1/tokenreviews', { spec: { token: 'x' } }],
      ['/api/v1/namespaces/default/serviceaccounts/table-robot/token', { spec: {} }],
    ];
    for (const [path, body] of reviews) {
      const r = await send(path, body, table);
      assert.equal(r.status, 406, `${path}: ${r.text}`);
      assert.equal(r.body.reason, 'NotAcceptable');
      assert.equal(r.body.message, 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf');
      const fallback = await send(path, body, `${table}, application/json`);
      assert.equal(fallback.status, 201, `${path} with a JSON fallback: ${fallback.text}`);
      assert.notEqual(fallback.body.kind, 'Table');
    }
    const cm = await send('/api/v1/namespaces/default/configmaps', { metadata: { name: 'table-cm' } }, table);
    assert.equal(cm.status, 201, cm.text);
    assert.equal(cm.body.kind, 'Table');
  });

  test('kubectl auth whoami and auth can-i work', async () => {
    const k = kubectlFor(srv.kubeconfig);
    const whoami = await k.ok(['auth', 'whoami', '-o', 'json']);
    assert.equal(JSON.parse(whoami).status.userInfo.username, 'system:admin');
    assert.equal((await k.ok(['auth', 'can-i', 'delete', 'pods', '-n', 'default'])).trim(), 'yes');
  });
});

describe('access reviews under AlwaysDeny', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ authorizationMode: 'AlwaysDeny' });
  });
  after(async () => {
    await srv?.stop();
  });

  test("another user is denied with the mode's reason; system:masters is allowed", async () => {
    const ask = (subject: object) =>
      post(srv, `${AUTHZ}/subjectaccessreviews`, { spec: { ...subject, resourceAttributes: { verb: 'delete', resource: 'pods', namespace: 'default' } } });
    const alice = await ask({ user: 'alice' });
    assert.equal(alice.status, 201, alice.text);
    assert.deepEqual(alice.body.status, { allowed: false, reason: 'Everything is forbidden.' });
    const admin = await ask({ user: 'bob', groups: ['system:masters'] });
    assert.deepEqual(admin.body.status, { allowed: true });
  });
});
