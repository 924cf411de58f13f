/**
 * RBAC decisions follow role and binding changes on every worker of a Redis-backed cluster: each
 * worker keeps its own copy of the RBAC objects, fed from Redis's change streams. Requests go on
 * fresh connections, so they land on either worker.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, eventually, fresh, startRedisWorkers, type RedisWorkers } from '../helpers/redis-workers.js';

let env: RedisWorkers;
before(async () => {
  env = await startRedisWorkers({ workers: 2, args: ['--authorization-mode=RBAC'] });
});
after(async () => {
  await env?.stop();
});

const RBAC = '/apis/rbac.authorization.k8s.io/v1/namespaces/rbacw';
const review = {
  apiVersion: 'authorization.k8s.io/v1',
  kind: 'SubjectAccessReview',
  spec: { user: 'rbacw-alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'rbacw' } },
};

/** Whether `count` reviews in a row, each on its own connection, all give `allowed`. */
async function everyWorkerSays(allowed: boolean, count = 8): Promise<boolean> {
  for (let i = 0; i < count; i++) {
    const r = await fresh(env.url, '/apis/authorization.k8s.io/v1/subjectaccessreviews', { method: 'POST', body: review });
    assert.equal(r.status, 201, r.text);
    if (r.body.status.allowed !== allowed) return false;
  }
  return true;
}

test('a binding made through one worker allows on every worker; its deletion and its role edit revoke everywhere', async () => {
  await createNamespace(env.url, 'rbacw');
  const role = { metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] };
  assert.equal((await fresh(env.url, `${RBAC}/roles`, { method: 'POST', body: role })).status, 201);
  const binding = {
    metadata: { name: 'alice' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'rbacw-alice' }],
  };
  assert.equal((await fresh(env.url, `${RBAC}/rolebindings`, { method: 'POST', body: binding })).status, 201);
  await eventually(() => everyWorkerSays(true), 'every worker allows');
  const edited = { ...role, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }] };
  assert.equal((await fresh(env.url, `${RBAC}/roles/reader`, { method: 'PUT', body: edited })).status, 200);
  await eventually(() => everyWorkerSays(false), 'every worker refuses after the role edit');
  assert.equal((await fresh(env.url, `${RBAC}/roles/reader`, { method: 'PUT', body: role })).status, 200);
  await eventually(() => everyWorkerSays(true), 'every worker allows again');
  assert.equal((await fresh(env.url, `${RBAC}/rolebindings/alice`, { method: 'DELETE' })).status, 200);
  await eventually(() => everyWorkerSays(false), 'every worker refuses after the deletion');
});
