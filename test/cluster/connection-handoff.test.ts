/**
 * The primary's connection hand-off (src/cluster/connection-distributor.ts) with
 * `capstan --storage=redis --workers 2`, driving its faults deterministically: a worker stopped
 * with SIGSTOP cannot take the connections handed to it; when it is then SIGKILLed, those
 * connections are answered by the other worker (and, with both workers gone, by their restarted
 * successors) as if nothing happened; a stopped worker is handed at most 8 connections. A SIGTERM under a stream of fresh connections answers every
 * request during the shutdown delay and leaves none hanging afterwards.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, eventually, fresh, sleep, startRedisWorkers, type FreshResponse, type RedisWorkers } from '../helpers/redis-workers.js';
import { requestLines } from './cluster-process.js';

interface Outcome {
  path: string;
  status?: number;
  error?: string;
  /** When the answer (or the error) arrived, ms since the epoch. */
  at: number;
}

/** Starts GET `path` on a fresh connection; the outcome, never a rejection. */
function get(url: string, path: string, timeoutMs: number): Promise<Outcome> {
  return fresh(url, path, { timeoutMs }).then(
    (r: FreshResponse) => ({ path, status: r.status, at: Date.now() }),
    (err: unknown) => ({ path, error: err instanceof Error ? err.message : String(err), at: Date.now() }),
  );
}

/** PIDs of the processes that logged a request for `path`. */
function servedBy(stderr: string, path: string): number[] {
  return requestLines(stderr).filter((l) => l.path === path).map((l) => Number(l.pid));
}

/** Waits until every path in `paths` has its request log line (written as the response ends). */
async function logged(env: RedisWorkers, paths: string[], from = 0): Promise<void> {
  await eventually(() => paths.every((p) => servedBy(env.cap.stderr().slice(from), p).length > 0), 'the request log lines', 5000);
}

/** Starts one GET per path, one after the other (each connection is accepted before the next opens). */
async function openInTurn(url: string, paths: string[], timeoutMs: number): Promise<Promise<Outcome>[]> {
  const outcomes: Promise<Outcome>[] = [];
  for (const path of paths) {
    outcomes.push(get(url, path, timeoutMs));
    await sleep(30);
  }
  return outcomes;
}

describe('connections handed to a worker that dies before taking them', () => {
  let env: RedisWorkers;
  const ns = 'handoff';
  const all = Array.from({ length: 20 }, (_, i) => `/api/v1/namespaces/${ns}/configmaps/cm-${i}`);
  const paths = all.slice(0, 8);

  before(async () => {
    env = await startRedisWorkers();
    await createNamespace(env.url, ns);
    for (let i = 0; i < all.length; i++) {
      const r = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps`, {
        method: 'POST', body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { i: String(i) } },
      });
      assert.equal(r.status, 201, r.text);
    }
  });
  after(async () => {
    await env?.stop();
  });

  test('are answered by the surviving worker when the stopped worker is killed', { timeout: 60_000 }, async () => {
    const [victim, survivor] = env.cap.workerPids();
    assert.ok(victim !== undefined && survivor !== undefined);
    process.kill(victim, 'SIGSTOP');
    let killedAt = 0;
    let mark = 0;
    try {
      const outcomes = await openInTurn(env.url, paths, 10_000);
      await sleep(500);
      const settled = await Promise.all(outcomes.map((o) => Promise.race([o, sleep(0).then(() => undefined)])));
      const answered = settled.filter((o) => o !== undefined);
      // Round-robin: every other connection went to the stopped worker and waits, the rest are answered.
      assert.equal(answered.length, paths.length / 2, `answered before the kill: ${JSON.stringify(answered)}`);
      assert.ok(answered.every((o) => o.status === 200), JSON.stringify(answered));

      mark = env.cap.stderr().length;
      process.kill(victim, 'SIGKILL');
      killedAt = Date.now();
      const all = await Promise.all(outcomes);
      assert.deepEqual(all.map((o) => o.status ?? o.error), paths.map(() => 200), JSON.stringify(all));
      const late = all.filter((o) => o.at >= killedAt);
      assert.equal(late.length, paths.length / 2, 'the held connections were answered after the kill');
      for (const o of late) assert.ok(o.at - killedAt < 3000, `answered ${o.at - killedAt} ms after the kill`);
      await logged(env, paths);
      for (const path of paths) assert.deepEqual(servedBy(env.cap.stderr(), path), [survivor], `${path} served once, by the surviving worker`);
      await env.cap.waitForLog(/"msg":"re-handing connections a worker did not take before it exited","pid":\d+,"connections":4/, 5000, mark);
    } finally {
      if (killedAt === 0) process.kill(victim, 'SIGKILL');
    }
    await env.cap.waitForLog(/"msg":"worker restarted"/, 20_000, mark);
    assert.equal(env.cap.workerPids().length, 2);
  });

  test('a stopped worker is passed over once it holds 8 unacknowledged connections', { timeout: 60_000 }, async () => {
    const [victim, survivor] = env.cap.workerPids();
    assert.ok(victim !== undefined && survivor !== undefined);
    process.kill(victim, 'SIGSTOP');
    let killed = false;
    let mark = 0;
    try {
      const outcomes = await openInTurn(env.url, all, 10_000);
      await sleep(500);
      const settled = await Promise.all(outcomes.map((o) => Promise.race([o, sleep(0).then(() => undefined)])));
      assert.equal(settled.filter((o) => o === undefined).length, 8, 'the stopped worker holds 8 connections; the other 12 were answered');
      mark = env.cap.stderr().length;
      process.kill(victim, 'SIGKILL');
      killed = true;
      const results = await Promise.all(outcomes);
      assert.deepEqual(results.map((o) => o.status ?? o.error), all.map(() => 200), JSON.stringify(results));
    } finally {
      if (!killed) process.kill(victim, 'SIGKILL');
    }
    await env.cap.waitForLog(/"msg":"worker restarted"/, 20_000, mark);
  });

  test('wait for a restarted worker when every worker dies before taking them', { timeout: 60_000 }, async () => {
    const victims = env.cap.workerPids();
    assert.equal(victims.length, 2);
    const mark = env.cap.stderr().length;
    for (const pid of victims) process.kill(pid, 'SIGSTOP');
    let killed = false;
    try {
      const outcomes = await openInTurn(env.url, paths.slice(0, 4), 15_000);
      await sleep(300);
      for (const pid of victims) process.kill(pid, 'SIGKILL');
      killed = true;
      const all = await Promise.all(outcomes);
      assert.deepEqual(all.map((o) => o.status ?? o.error), [200, 200, 200, 200], JSON.stringify(all));
      await logged(env, paths.slice(0, 4), mark);
      const servers = paths.slice(0, 4).flatMap((p) => servedBy(env.cap.stderr().slice(mark), p));
      assert.equal(servers.length, 4, 'each request served once');
      assert.ok(servers.every((pid) => !victims.includes(pid)), 'by the restarted workers');
    } finally {
      if (!killed) for (const pid of victims) process.kill(pid, 'SIGKILL');
    }
  });
});

test('SIGTERM under a stream of fresh connections: answered during the shutdown delay, none left hanging', { timeout: 60_000 }, async (t) => {
  const env = await startRedisWorkers({ args: ['--shutdown-delay-duration', '1s'] });
  try {
    const outcomes: Outcome[] = [];
    let termAt = 0;
    let refused = false;
    let exit: Promise<number | null> | undefined;
    const started = Date.now();
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (!refused && Date.now() - started < 20_000) {
        if (exit === undefined && Date.now() - started > 300) {
          termAt = Date.now();
          exit = env.cap.stop('SIGTERM');
        }
        const o = await get(env.url, '/api/v1/namespaces/default', 5000);
        outcomes.push(o);
        if (o.error?.includes('ECONNREFUSED')) refused = true;
      }
    }));
    assert.ok(exit !== undefined);
    assert.equal(await exit, 0, 'the primary exits 0');
    const kinds: Record<string, number> = {};
    for (const o of outcomes) {
      const kind = o.status !== undefined ? String(o.status) : (/ECONNREFUSED|ECONNRESET|socket hang up|got no response/.exec(o.error ?? '')?.[0] ?? String(o.error));
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
    t.diagnostic(`outcomes ${JSON.stringify(kinds)}`);
    assert.equal(kinds['got no response'] ?? 0, 0, 'no request hung');
    assert.ok(refused, 'the listener closes once the workers drain');
    const duringDelay = outcomes.filter((o) => o.at > termAt && o.at < termAt + 800);
    assert.ok(duringDelay.length > 10, `requests kept flowing during the shutdown delay (${duringDelay.length})`);
    assert.ok(duringDelay.every((o) => o.status === 200), JSON.stringify(duringDelay.filter((o) => o.status !== 200)));
    // Once the listener closes, connections are refused; one caught in the kernel's accept queue at
    // that instant is reset (as with any server closing its listener).
    assert.ok(outcomes.every((o) => o.status === 200 || /ECONNREFUSED|ECONNRESET|socket hang up/.test(o.error ?? '')), JSON.stringify(kinds));
    assert.match(env.cap.stderr(), /"msg":"all workers exited","code":0/);
  } finally {
    await env.stop();
  }
});
