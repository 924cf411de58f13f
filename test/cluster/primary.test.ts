/**
 * The cluster primary and worker processes (src/cluster) over the memory fixture: one `serving`
 * line, requests spread over workers, aggregated /metrics, SIGKILLed workers restarted in their
 * slot, crash loops given up on, SIGTERM draining to exit 0.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshRequest, metricSum, requestLines, requestWithRetry, spawnCluster, type ClusterProcess } from './cluster-process.js';

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), 'memory-cluster-fixture.js');

describe('cluster primary over two workers', () => {
  let cap: ClusterProcess;
  before(async () => {
    cap = await spawnCluster(FIXTURE, ['--port', '0', '--shutdown-delay-duration', '300ms']);
  });
  after(async () => {
    await cap.stop('SIGKILL');
  });

  test('prints the serving line once, after both workers listen', () => {
    assert.equal(cap.stderr().match(/"msg":"serving"/g)?.length, 1);
    assert.match(cap.stderr(), /"msg":"serving","url":"http:\/\/127\.0\.0\.1:\d+","secureUrl":"https:\/\/127\.0\.0\.1:\d+","storage":"memory","workers":2/);
    assert.equal(cap.workerPids().length, 2);
  });

  test('spreads connections over both workers and aggregates /metrics across them', async () => {
    const n = 30;
    for (let i = 0; i < n; i++) {
      const r = await freshRequest(cap.url, '/api/v1/namespaces/default/secrets?token=s3cr3t');
      assert.equal(r.status, 200);
    }
    await cap.waitForLog(/"msg":"request"/);
    const lines = requestLines(cap.stderr()).filter((l) => typeof l.path === 'string' && l.path.includes('/secrets'));
    const workers = new Set(lines.map((l) => l.worker));
    assert.deepEqual([...workers].sort(), [0, 1], 'both workers served some of the requests');
    for (const l of lines) {
      assert.equal(l.path, '/api/v1/namespaces/default/secrets', 'token query parameter is dropped');
      assert.equal(l.verb, 'list');
      assert.equal(l.resource, 'secrets');
      assert.equal(l.status, 200);
    }
    const metrics = await freshRequest(cap.url, '/metrics');
    assert.equal(metrics.status, 200);
    const total = metricSum(metrics.text, 'apiserver_request_total', { verb: 'LIST', resource: 'secrets', scope: 'namespace', code: '200' });
    assert.equal(total, n, 'the count sums both workers');
    assert.match(metrics.text, /^nodejs_eventloop_lag_seconds /m);
    assert.match(metrics.text, /^nodejs_heap_size_used_bytes /m);
  });

  test('restarts a SIGKILLed worker in the same slot while the other keeps serving', async () => {
    const before = cap.workerPids();
    const victim = before[0];
    assert.ok(victim !== undefined);
    const mark = cap.stderr().length;
    process.kill(victim, 'SIGKILL');
    for (let i = 0; i < 10; i++) {
      const r = await requestWithRetry(cap.url, '/readyz');
      assert.equal(r.status, 200);
    }
    await cap.waitForLog(/"msg":"worker exited unexpectedly; restarting","worker":\d,"pid":\d+,"code":null,"signal":"SIGKILL"/, 10_000, mark);
    await cap.waitForLog(/"msg":"worker restarted"/, 30_000, mark);
    const after = cap.workerPids();
    assert.equal(after.length, 2);
    assert.ok(!after.includes(victim));
    assert.equal((await freshRequest(cap.url, '/readyz')).status, 200);
  });

  test('SIGTERM: readyz fails during the shutdown delay, then every worker and the primary exit 0', async () => {
    const exit = cap.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    const r = await freshRequest(cap.url, '/readyz');
    assert.equal(r.status, 500);
    assert.match(r.text, /\[-\]shutdown failed/);
    assert.equal(await exit, 0);
    assert.match(cap.stderr(), /"msg":"all workers exited","code":0/);
  });
});

test('the primary gives up on workers that crash on every start, and exits 1', async () => {
  await assert.rejects(
    spawnCluster(FIXTURE, ['--port', '0'], {
      FIXTURE_CRASH_ON_START: '1',
      FIXTURE_RESTART: JSON.stringify({ baseDelayMs: 10, maxCrashes: 4 }),
    }),
    (err: Error) => {
      assert.match(err.message, /exited with 1 before serving/);
      assert.match(err.message, /"msg":"workers are crashing repeatedly; giving up"/);
      assert.match(err.message, /fixture: crashing on start as asked/);
      return true;
    },
  );
});
