/**
 * CustomResourceDefinitions across the workers of `capstan --storage=redis --workers 2`: every worker
 * watches the CRDs in the store, so a CRD created through one worker is served by both within a
 * second, its status is written once (the workers race with compare-and-swap and converge), and a
 * deleted CRD stops being served everywhere once its custom resources are gone.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { redisPid } from '../helpers/fault-checks.js';
import { eventually, fresh, sleep, startRedisWorkers, workersThatServed, type RedisWorkers } from '../helpers/redis-workers.js';

let env: RedisWorkers;

before(async () => {
  env = await startRedisWorkers({ args: ['--log-level', 'info'] });
});

after(async () => {
  await env?.stop();
});

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function crd(group: string): unknown {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

/** The workers whose request lines in `log` answered `path` with `status`. */
function workersAnswering(log: string, path: string, status: number): number[] {
  const seen = new Set<number>();
  for (const line of log.split('\n')) {
    if (!line.includes('"msg":"request"') || !line.includes(path)) continue;
    let parsed: { worker?: unknown; status?: unknown; path?: unknown };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      continue; // a line still being written
    }
    if (parsed.path === path && parsed.status === status && typeof parsed.worker === 'number') seen.add(parsed.worker);
  }
  return [...seen].sort();
}

/**
 * Resolves once `n` consecutive fresh connections answer `status` and each worker has answered it
 * since this wait began. The primary hands a new connection to the worker with the fewest open
 * ones, so consecutive connections need not alternate: the request log says who answered.
 */
async function consecutively(path: string, status: number, n: number, what: string): Promise<void> {
  const from = env.cap.stderr().length;
  let streak = 0;
  await eventually(
    async () => {
      const r = await fresh(env.url, path);
      streak = r.status === status ? streak + 1 : 0;
      return streak >= n && workersAnswering(env.cap.stderr().slice(from), path, status).length === 2;
    },
    what,
    10_000,
  );
}

test('a CRD created through one worker is served by both at once (within a second on an idle machine), with one converged status', async (t) => {
  const group = `xw${Date.now().toString(36)}.example.com`;
  const path = `/apis/${group}/v1/namespaces/default/widgets`;
  const started = Date.now();
  const created = await fresh(env.url, CRDS, { method: 'POST', body: crd(group) });
  assert.equal(created.status, 201, created.text);
  await consecutively(path, 200, 6, 'both workers serve the custom resource');
  const elapsed = Date.now() - started;
  t.diagnostic(`served by both workers ${elapsed} ms after the create`);
  // The target is one second; the bound only catches a registrar that waits for a periodic resync
  // instead of the change stream (it must hold on a machine whose cores are all busy).
  assert.ok(elapsed < 5000, `served by both workers after ${elapsed}ms`);
  assert.deepEqual(workersThatServed(env.cap.stderr(), path), [0, 1]);

  const stored = await fresh(env.url, `${CRDS}/widgets.${group}`);
  assert.deepEqual(
    stored.body.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status]),
    [
      ['NamesAccepted', 'True'],
      ['Established', 'True'],
    ],
  );
  // kube adds the cleanup finalizer on DELETE, not before.
  assert.equal(stored.body.metadata.finalizers, undefined);
  // Converged: later passes of either worker write nothing more.
  const rv = stored.body.metadata.resourceVersion as string;
  for (let i = 0; i < 4; i++) assert.equal((await fresh(env.url, `${CRDS}/widgets.${group}`)).body.metadata.resourceVersion, rv);

  // A custom resource written through one worker is read through the other.
  const w = await fresh(env.url, path, { method: 'POST', body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w' }, spec: { a: 1 } } });
  assert.equal(w.status, 201, w.text);
  for (let i = 0; i < 4; i++) assert.equal((await fresh(env.url, `${path}/w`)).body.spec.a, 1);

  const del = await fresh(env.url, `${CRDS}/widgets.${group}`, { method: 'DELETE' });
  assert.equal(del.status, 200, del.text);
  await eventually(async () => (await fresh(env.url, `${CRDS}/widgets.${group}`)).status === 404, 'CRD finalized and removed', 10_000);
  await consecutively(path, 404, 6, 'no worker serves the custom resource any more');
});

test('the CRD watch of every worker outlives a Redis freeze: a CRD created afterwards is served by both', { timeout: 60_000 }, async () => {
  const pid = await redisPid(env.redis.port);
  process.kill(pid, 'SIGSTOP');
  try {
    await sleep(3000);
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  await eventually(async () => (await fresh(env.url, '/readyz')).status === 200, 'ready again after the freeze', 30_000);
  const group = `fz${Date.now().toString(36)}.example.com`;
  const path = `/apis/${group}/v1/namespaces/default/widgets`;
  const created = await fresh(env.url, CRDS, { method: 'POST', body: crd(group) });
  assert.equal(created.status, 201, created.text);
  const started = Date.now();
  await consecutively(path, 200, 6, 'both workers serve the custom resource after the freeze');
  // As above: the bound catches a watch that never came back (served only after a relist), with room
  // for a machine whose cores are all busy; about one second was measured at load 6.
  assert.ok(Date.now() - started < 5000, `served by both workers ${Date.now() - started}ms after creation`);
  assert.deepEqual(workersThatServed(env.cap.stderr(), path), [0, 1]);
});
