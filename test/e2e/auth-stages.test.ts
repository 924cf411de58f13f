/**
 * Authentication and authorization are stages of every request (answers checked on the reference
 * started with --authorization-mode=AlwaysDeny): the administrator (system:masters) may do anything in
 * every mode; another user under AlwaysDeny gets kube's 403 for resource and non-resource requests;
 * a request nobody can authenticate gets 401.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Authenticator } from '../../src/auth/authenticator.js';
import type { User } from '../../src/api/user.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const ANONYMOUS: User = { name: 'system:anonymous', uid: '', groups: ['system:unauthenticated'], extra: {} };

/** Requests with header `x-test-user: anonymous` are the anonymous user, `nobody` are unauthenticated, others the admin. */
const byHeader: Authenticator = {
  async authenticate(req: IncomingMessage) {
    const who = req.headers['x-test-user'];
    if (who === 'nobody') return undefined;
    if (who === 'anonymous') return ANONYMOUS;
    return { name: 'system:admin', uid: '', groups: ['system:masters', 'system:authenticated'], extra: {} };
  },
};

describe('AlwaysDeny', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ authorizationMode: 'AlwaysDeny' }, undefined, { authenticator: byHeader });
  });
  after(async () => {
    await srv?.stop();
  });

  test('the administrator is allowed anyway (system:masters)', async () => {
    const pods = await api(srv.url, '/api/v1/namespaces/default/pods');
    assert.equal(pods.status, 200, pods.text);
  });

  test("another user is refused with kube's message, naming the resource and scope", async () => {
    const anon = { headers: { 'x-test-user': 'anonymous' } };
    const list = await api(srv.url, '/api/v1/pods', anon);
    assert.equal(list.status, 403);
    assert.deepEqual(list.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      reason: 'Forbidden',
      code: 403,
      message: 'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" at the cluster scope: Everything is forbidden.',
      details: { kind: 'pods' },
    });
    const status = await api(srv.url, '/apis/apps/v1/namespaces/x/deployments/d/status', anon);
    assert.equal(
      status.body.message,
      'deployments.apps "d" is forbidden: User "system:anonymous" cannot get resource "deployments/status" in API group "apps" in the namespace "x": Everything is forbidden.',
    );
    assert.deepEqual(status.body.details, { name: 'd', group: 'apps', kind: 'deployments' });
    const version = await api(srv.url, '/version', anon);
    assert.equal(version.status, 403);
    assert.equal(version.body.message, 'forbidden: User "system:anonymous" cannot get path "/version": Everything is forbidden.');
  });

  test('a request nobody can authenticate gets 401 Unauthorized', async () => {
    const r = await api(srv.url, '/api/v1/pods', { headers: { 'x-test-user': 'nobody' } });
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  });
});

test('AlwaysAllow (the default) lets another user through', async () => {
  const srv = await startTestServer({}, undefined, { authenticator: byHeader });
  try {
    const r = await api(srv.url, '/api/v1/pods', { headers: { 'x-test-user': 'anonymous' } });
    assert.equal(r.status, 200, r.text);
  } finally {
    await srv.stop();
  }
});
