/**
 * NamespaceLifecycle and ResourceQuota admission answer from watched caches on every worker of a
 * Redis-backed cluster (as kube's plugins answer from informers): a quota is never overspent by
 * creates spread over the workers, in parallel or one after another (each worker's cache lags its
 * own quota writes), and a namespace being deleted refuses new content at once. Requests go on fresh
 * connections, so they land on either worker.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, eventually, fresh, startRedisWorkers, type RedisWorkers } from '../helpers/redis-workers.js';

let env: RedisWorkers;
before(async () => {
  env = await startRedisWorkers({ workers: 2, args: ['--controllers=resourcequota'] });
});
after(async () => {
  await env?.stop();
});

async function quotaOf(ns: string, hard: number, used = 0): Promise<void> {
  const made = await fresh(env.url, `/api/v1/namespaces/${ns}/resourcequotas`, {
    method: 'POST',
    body: { metadata: { name: 'q' }, spec: { hard: { 'count/secrets': String(hard) } } },
  });
  assert.equal(made.status, 201, made.text);
  await eventually(
    async () => (await fresh(env.url, `/api/v1/namespaces/${ns}/resourcequotas/q`)).body?.status?.used?.['count/secrets'] === String(used),
    'quota counted',
  );
}

const secret = (ns: string, name: string): Promise<{ status: number; text: string }> =>
  fresh(env.url, `/api/v1/namespaces/${ns}/secrets`, { method: 'POST', body: { metadata: { name } } });

test('creates spread over the workers never spend more than the quota holds', async () => {
  await createNamespace(env.url, 'aq-par');
  await quotaOf('aq-par', 5);
  const parallel = await Promise.all(Array.from({ length: 12 }, (_, i) => secret('aq-par', `p${i}`)));
  assert.equal(parallel.filter((r) => r.status === 201).length, 5, parallel.map((r) => r.status).join(','));

  await createNamespace(env.url, 'aq-seq');
  await quotaOf('aq-seq', 4);
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await secret('aq-seq', `s${i}`)).status);
  assert.deepEqual(statuses, [201, 201, 201, 201, 403, 403, 403, 403]);
  const listed = await fresh(env.url, '/api/v1/namespaces/aq-seq/secrets');
  assert.equal(listed.body.items.length, 4);
});

test('a quota created just before a create is enforced on every worker', async () => {
  await createNamespace(env.url, 'aq-new');
  // A first create with no quota: the workers learn that the namespace has none.
  assert.equal((await secret('aq-new', 'before')).status, 201);
  await quotaOf('aq-new', 2, 1);
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await secret('aq-new', `after${i}`)).status);
  // The quota counts the secret made before it: one more fits.
  assert.deepEqual(statuses, [201, 403, 403, 403]);
});

test('a namespace being deleted refuses new content at once, on every worker', async () => {
  await createNamespace(env.url, 'aq-gone');
  assert.equal((await secret('aq-gone', 'a')).status, 201);
  const deleted = await fresh(env.url, '/api/v1/namespaces/aq-gone', { method: 'DELETE' });
  assert.equal(deleted.status, 200, deleted.text);
  for (let i = 0; i < 6; i++) {
    const r = await secret('aq-gone', `b${i}`);
    assert.ok(r.status === 403 || r.status === 404, `${r.status} ${r.text}`);
  }
});
