/**
 * `kill -9` of a worker of `capstan --storage=redis --workers 2` under a steady write load (5
 * concurrent writers, every request on a fresh connection): requests in flight on the killed worker
 * may fail with a connection error, but every acknowledged write is in the final LIST with its
 * data; the primary restarts the worker and service continues; watchers (connections cut by the
 * kill are re-opened from the last resourceVersion, as clients do) see every change exactly once
 * and in order.
 *
 * The second test kills a worker in the middle of a burst of fresh connections: the primary hands
 * each connection to a worker and keeps its own copy until the worker acknowledges it, so a
 * connection handed to the worker as it dies goes to the other worker instead. None is left open
 * without an answer; only requests the killed worker had already taken fail, as a lost connection.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { badFailures, configMapsRv, faultProblems, finalConfigMaps, openWatchers } from '../helpers/fault-checks.js';
import { createNamespace, fresh, sleep, startRedisWorkers, type RedisWorkers } from '../helpers/redis-workers.js';
import type { ResumingWatch } from '../helpers/resuming-watch.js';
import { acknowledged, runWriteLoad, summarize } from '../helpers/write-load.js';

let env: RedisWorkers;
let watchers: ResumingWatch[] = [];

before(async () => {
  env = await startRedisWorkers({ redis: { appendOnly: true } });
});

after(async () => {
  await Promise.all(watchers.map((w) => w.stop()));
  await env?.stop();
});

/** Request timeout of the load: a request unanswered this long is counted as hung. */
const HUNG_MS = 5000;

test('kill -9 of each worker in turn under write load loses no acknowledged write and no watch event', { timeout: 90_000 }, async (t) => {
  await createNamespace(env.url, 'kill-worker');
  const from = await configMapsRv(env.url);
  // Opened one after the other, so the primary's round-robin puts half of them on each worker.
  watchers = await openWatchers(env.url, 6, from);

  let stop = false;
  const load = runWriteLoad({ url: env.url, namespace: 'kill-worker', writers: 5, shouldStop: () => stop, timeoutMs: HUNG_MS });
  const original = env.cap.workerPids();
  assert.equal(original.length, 2);
  const killedAt: number[] = [];
  try {
    for (const victim of original) {
      await sleep(1200);
      const mark = env.cap.stderr().length;
      process.kill(victim, 'SIGKILL');
      killedAt.push(Date.now());
      await env.cap.waitForLog(/"msg":"worker restarted"/, 15_000, mark);
    }
    await sleep(1200);
  } finally {
    stop = true;
  }
  const attempts = await load;

  const pids = env.cap.workerPids();
  assert.equal(pids.length, 2, 'both slots have a live worker again');
  assert.ok(
    pids.every((p) => !original.includes(p)),
    'both workers were replaced',
  );
  assert.equal(env.cap.child.exitCode, null, 'the primary keeps running');

  const outcome = summarize(attempts);
  t.diagnostic(`outcomes ${JSON.stringify(outcome)}`);
  for (const a of attempts.filter((x) => !acknowledged(x))) {
    t.diagnostic(
      `failed ${a.op} ${a.name}: ${a.error ?? String(a.status)} (started ${killedAt.map((k) => a.startedAt - k).join(' / ')} ms from the kills, took ${a.ms} ms)`,
    );
  }
  const acked = attempts.filter(acknowledged);
  assert.ok(acked.length >= 50, `steady load: ${JSON.stringify(outcome)}`);
  const last = killedAt[killedAt.length - 1] ?? 0;
  assert.ok(
    acked.some((a) => a.startedAt > last + 500),
    'writes are acknowledged after the restarts',
  );
  // Only requests caught by a kill may fail, and only as a lost connection (or a retryable 503).
  assert.deepEqual(badFailures(attempts, true), [], JSON.stringify(outcome));

  const final = await finalConfigMaps(env.url);
  const problems = await faultProblems(attempts, final, watchers, from);
  assert.deepEqual(problems, [], `outcomes ${JSON.stringify(outcome)}`);
  assert.ok(
    watchers.some((w) => w.opened > 1),
    'the watches held by the killed workers were cut and resumed',
  );
  assert.ok(!/uncaught exception|unhandled promise rejection/.test(env.cap.stderr()), env.cap.stderr().slice(-2000));
});

test('no connection hangs when it reaches a worker as the worker is killed', { timeout: 60_000 }, async (t) => {
  const [victim] = env.cap.workerPids();
  assert.ok(victim !== undefined);
  const results: { ok: boolean; error?: string; ms: number }[] = [];
  const started = Date.now();
  let killed = false;
  // 40 clients in a tight loop of fresh-connection GETs; the kill lands in the middle of it.
  await Promise.all(
    Array.from({ length: 40 }, async () => {
      while (Date.now() - started < 1500) {
        if (!killed && Date.now() - started > 500) {
          killed = true;
          process.kill(victim, 'SIGKILL');
        }
        const t0 = Date.now();
        try {
          const r = await fresh(env.url, '/api/v1/namespaces/default', { timeoutMs: HUNG_MS });
          results.push({ ok: r.status === 200, error: r.status === 200 ? undefined : `status ${r.status}`, ms: r.ms });
        } catch (err) {
          results.push({ ok: false, error: err instanceof Error ? err.message : String(err), ms: Date.now() - t0 });
        }
      }
    }),
  );
  const hung = results.filter((r) => r.error?.includes('got no response'));
  t.diagnostic(`${results.length} requests, ${results.filter((r) => !r.ok).length} failed, ${hung.length} hung for ${HUNG_MS} ms`);
  // On failure, the primary's and workers' lines other than request lines say where the connections went.
  if (hung.length > 0)
    t.diagnostic(
      env.cap
        .stderr()
        .split('\n')
        .filter((l) => !l.includes('"msg":"request"'))
        .slice(-40)
        .join('\n'),
    );
  assert.equal(hung.length, 0, `${hung.length} connections were left open without an answer`);
  // Only requests the killed worker had already taken may fail, and only as a lost connection.
  const other = results.filter((r) => !r.ok && !/socket hang up|ECONNRESET/.test(r.error ?? ''));
  assert.deepEqual(other, [], 'failures other than a lost connection');
});
