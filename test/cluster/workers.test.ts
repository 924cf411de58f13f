/**
 * `capstan --workers`: refused over the memory store; over Redis, two workers behind one port
 * serve a shared store, survive a SIGKILLed worker, aggregate /metrics and exit 0 on SIGTERM; the
 * workers run with MALLOC_ARENA_MAX=2 unless it is set.
 * Needs `redis-server` (scripts/ensure-test-deps.sh installs it).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CAPSTAN_MAIN, uniqueName, withFreeSecurePort } from '../helpers/capstan.js';
import { freePort, startRedis, type RedisServer } from '../helpers/redis-process.js';
import { freshRequest, metricSum, requestLines, requestWithRetry, spawnCluster, type ClusterProcess } from './cluster-process.js';

function runToExit(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CAPSTAN_MAIN, ...withFreeSecurePort(args)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

describe('--workers over the memory store', () => {
  for (const workers of ['2', 'auto']) {
    test(`--workers ${workers} is refused with a clear message`, async () => {
      const r = await runToExit(['--port', '0', '--workers', workers]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /--workers greater than 1 requires --storage=redis: the memory store lives in one process/);
    });
  }

  test('--workers 1 serves from a single process (no cluster workers)', async () => {
    const cap = await spawnCluster(CAPSTAN_MAIN, ['--port', '0', '--workers', '1']);
    try {
      assert.deepEqual(cap.workerPids(), []);
      assert.equal((await freshRequest(cap.url, '/readyz')).status, 200);
    } finally {
      assert.equal(await cap.stop('SIGTERM'), 0);
    }
  });
});

describe('--storage=redis --workers 2', () => {
  let redis: RedisServer;
  let cap: ClusterProcess;
  const ns = uniqueName('workers');

  before(async () => {
    redis = await startRedis({ appendOnly: true });
    const port = await freePort();
    cap = await spawnCluster(CAPSTAN_MAIN, [
      '--storage=redis',
      '--redis-url',
      redis.url,
      '--workers',
      '2',
      '--port',
      String(port),
      '--shutdown-delay-duration',
      '300ms',
    ]);
  });
  after(async () => {
    await cap?.stop('SIGKILL');
    await redis?.stop();
  });

  test('serves from two workers sharing one store', async () => {
    assert.equal(cap.workerPids().length, 2);
    const created = await freshRequest(cap.url, '/api/v1/namespaces', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
    });
    assert.equal(created.status, 201, created.text);
    for (let i = 0; i < 6; i++) {
      const r = await freshRequest(cap.url, `/api/v1/namespaces/${ns}/configmaps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { i: String(i) } }),
      });
      assert.equal(r.status, 201, r.text);
    }
    // Every object written through either worker is readable through both.
    for (let i = 0; i < 6; i++) {
      const r = await freshRequest(cap.url, `/api/v1/namespaces/${ns}/configmaps/cm-${i}`);
      assert.equal(r.status, 200, r.text);
    }
    const lines = requestLines(cap.stderr()).filter((l) => typeof l.path === 'string' && l.path.includes(`/namespaces/${ns}/configmaps`));
    assert.deepEqual([...new Set(lines.map((l) => l.worker))].sort(), [0, 1], 'both workers served requests');
  });

  test('workers run with two malloc arenas unless the environment says otherwise', async () => {
    const arenasOf = (pid: number): string | undefined =>
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((v) => v.startsWith('MALLOC_ARENA_MAX='))
        ?.slice('MALLOC_ARENA_MAX='.length);
    const pids = cap.workerPids();
    assert.equal(pids.length, 2);
    for (const pid of pids) assert.equal(arenasOf(pid), process.env.MALLOC_ARENA_MAX ?? '2');
    const own = await spawnCluster(
      CAPSTAN_MAIN,
      ['--storage=redis', '--redis-url', redis.url, '--workers', '2', '--port', String(await freePort()), '--shutdown-delay-duration', '0s'],
      { MALLOC_ARENA_MAX: '4' },
    );
    try {
      assert.equal(own.workerPids().length, 2);
      for (const pid of own.workerPids()) assert.equal(arenasOf(pid), '4');
    } finally {
      assert.equal(await own.stop('SIGTERM'), 0);
    }
  });

  test('/metrics counts requests from every worker', async () => {
    const n = 20;
    for (let i = 0; i < n; i++) assert.equal((await freshRequest(cap.url, `/api/v1/namespaces/${ns}/secrets`)).status, 200);
    const metrics = await freshRequest(cap.url, '/metrics');
    assert.equal(metrics.status, 200);
    assert.equal(metricSum(metrics.text, 'apiserver_request_total', { verb: 'LIST', resource: 'secrets', scope: 'namespace', code: '200' }), n);
  });

  test('a SIGKILLed worker is restarted and the cluster keeps answering', async () => {
    const [victim] = cap.workerPids();
    assert.ok(victim !== undefined);
    const mark = cap.stderr().length;
    process.kill(victim, 'SIGKILL');
    for (let i = 0; i < 10; i++) assert.equal((await requestWithRetry(cap.url, '/readyz')).status, 200);
    await cap.waitForLog(/"msg":"worker restarted"/, 30_000, mark);
    assert.equal(cap.workerPids().length, 2);
    assert.ok(!cap.workerPids().includes(victim));
    assert.equal((await requestWithRetry(cap.url, `/api/v1/namespaces/${ns}/configmaps/cm-0`)).status, 200);
  });

  test('SIGTERM drains both workers and exits 0', async () => {
    assert.equal(await cap.stop('SIGTERM'), 0);
  });
});
