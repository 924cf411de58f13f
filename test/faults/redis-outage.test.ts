/**
 * Redis outages under `capstan --storage=redis --workers 2` with a steady write load, open
 * watches, and probes of /readyz and of a LIST:
 * - `kill -9` of a redis-server running with AOF (`appendfsync always`), restarted on the same
 *   port and data directory 3 s later;
 * - redis-server frozen for 10 s (SIGSTOP, then SIGCONT): connections stay open, nothing answers.
 * In both: every acknowledged write survives; while Redis is out every failed request is a 503/504
 * `Status` with Retry-After (never a connection error, a hang, or a 500) and /readyz fails; the
 * server processes never exit and /readyz recovers; watchers see every change exactly once and in
 * order. Open watches are not ended by the outage: the worker's stream reader retries and the
 * watch resumes where it was (the tests record how many connections each watcher needed).
 */
import { describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { badFailures, configMapsRv, faultProblems, finalConfigMaps, openWatchers, probe, redisPid } from '../helpers/fault-checks.js';
import { createNamespace, eventually, fresh, sleep, startRedisWorkers, type RedisWorkers } from '../helpers/redis-workers.js';
import type { ResumingWatch } from '../helpers/resuming-watch.js';
import { acknowledged, runWriteLoad, summarize, type WriteAttempt } from '../helpers/write-load.js';

interface Fault {
  down(env: RedisWorkers): Promise<void>;
  up(env: RedisWorkers): Promise<void>;
  /** How long Redis stays out. */
  downMs: number;
}

/** A failed answer is retryable: 503/504, a Status body, a Retry-After header. */
function retryable(s: { status: number; retryAfter?: string; kind?: string }): boolean {
  return (s.status === 503 || s.status === 504) && s.kind === 'Status' && s.retryAfter !== undefined;
}

/**
 * A watch that cannot start because Redis is out answers with a retryable Status as its HTTP
 * response (503/504 with Retry-After), as kube-apiserver does when storage is unavailable.
 */
function refusedWatch(a: { status: number; retryAfter?: string; kind?: string; text: string } | undefined): boolean {
  return a !== undefined && a.status !== 200 && retryable(a);
}

async function outage(t: TestContext, env: RedisWorkers, ns: string, fault: Fault): Promise<void> {
  await createNamespace(env.url, ns);
  const from = await configMapsRv(env.url);
  const watchers: ResumingWatch[] = await openWatchers(env.url, 4, from);
  const pids = env.cap.workerPids();
  const ready = probe(env.url, '/readyz', 200);
  const lists = probe(env.url, `/api/v1/namespaces/${ns}/configmaps?limit=1`, 300);
  let stop = false;
  const load = runWriteLoad({ url: env.url, namespace: ns, writers: 5, shouldStop: () => stop, timeoutMs: 12_000 });
  let downAt = 0;
  let upAt = 0;
  let newWatch: Promise<{ status: number; retryAfter?: string; kind?: string; ms: number; text: string }> | undefined;
  let attempts: WriteAttempt[];
  try {
    await sleep(1000);
    downAt = Date.now();
    await fault.down(env);
    await sleep(500);
    // A watch opened while Redis is out is refused with a retryable Status.
    newWatch = fresh(env.url, `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${from}`, { timeoutMs: 12_000 })
      .then((r) => ({
        status: r.status,
        retryAfter: r.headers['retry-after'],
        kind: r.body?.kind as string | undefined,
        ms: r.ms,
        text: r.text,
      }))
      .catch((err: unknown) => ({ status: 0, ms: 0, text: String(err) }));
    await sleep(Math.max(0, fault.downMs - (Date.now() - downAt)));
    upAt = Date.now();
    await fault.up(env);
    await eventually(async () => (await fresh(env.url, '/readyz')).status === 200, '/readyz to pass again', 20_000);
    t.diagnostic(`/readyz passed again ${Date.now() - upAt} ms after Redis came back`);
    await sleep(1500);
  } catch (err) {
    await Promise.all(watchers.map((w) => w.stop()));
    throw err;
  } finally {
    stop = true;
    attempts = await load;
    await ready.stop();
    await lists.stop();
  }

  const outcome = summarize(attempts);
  t.diagnostic(`outcomes ${JSON.stringify(outcome)}; slowest write ${Math.max(...attempts.map((a) => a.ms))} ms`);
  // Every check adds to `problems`, so one run reports everything that went wrong.
  const problems: string[] = [];
  const check = (ok: boolean, what: string): void => {
    if (!ok) problems.push(what);
  };
  try {
    // The processes survived: same primary, same workers, no crash log.
    check(env.cap.child.exitCode === null, 'the primary exited');
    check(JSON.stringify(env.cap.workerPids()) === JSON.stringify(pids), `workers changed: ${JSON.stringify(pids)} -> ${JSON.stringify(env.cap.workerPids())}`);
    check(!/worker exited unexpectedly|uncaught exception|unhandled promise rejection/.test(env.cap.stderr()), 'a worker crashed');

    // Every failure was retryable, none hung or reset the connection.
    const bad = new Map<string, number>();
    for (const a of badFailures(attempts, false)) {
      const key = `${a.op}: ${a.error ?? `${String(a.status)} ${a.reason ?? ''} ${a.message ?? ''}`}${a.retryAfter === undefined ? '' : ' (Retry-After)'}`;
      bad.set(key, (bad.get(key) ?? 0) + 1);
    }
    for (const [key, n] of bad) problems.push(`${n} write(s) failed without a retryable Status: ${key}`);
    check(
      attempts.some((a) => a.status === 503 || a.status === 504),
      'no write failed while Redis was out',
    );
    check(
      attempts.some((a) => acknowledged(a) && a.startedAt > upAt),
      'no write succeeded after Redis came back',
    );
    const failedLists = lists.samples.filter((s) => s.status !== 200);
    t.diagnostic(
      `LIST probes during the outage: ${lists.samples
        .filter((s) => s.at + s.ms >= downAt && s.at <= upAt)
        .map((s) => `${s.status} after ${s.ms} ms`)
        .join(', ')}`,
    );
    check(failedLists.length > 0, 'no LIST failed while Redis was out');
    for (const s of failedLists.filter((x) => !retryable(x))) problems.push(`LIST failed without a retryable Status: ${JSON.stringify(s)}`);
    check(
      lists.samples.every((s) => s.ms < 11_000),
      'a LIST hung',
    );
    const watchAnswer = await newWatch;
    check(refusedWatch(watchAnswer), `a watch opened during the outage got ${JSON.stringify(watchAnswer)}`);

    // /readyz: fails during the outage (within 2 s), passes before and after; answers promptly.
    const during = ready.samples.filter((s) => s.at > downAt + 2000 && s.at + s.ms < upAt);
    check(during.length > 0 && during.every((s) => s.status !== 200), `/readyz during the outage: ${JSON.stringify(during.map((s) => s.status))}`);
    for (const s of ready.samples.filter((x) => x.status === 0 || x.ms >= 3000)) problems.push(`/readyz did not answer promptly: ${JSON.stringify(s)}`);
    check(ready.samples[ready.samples.length - 1]?.status === 200, '/readyz does not pass at the end');

    // No acknowledged write lost; every watcher saw every change once, in order.
    const final = await finalConfigMaps(env.url);
    problems.push(...(await faultProblems(attempts, final, watchers, from)));
    // A write answered 503/504 may still have been applied (e.g. queued on the frozen connection).
    const seen = new Set((watchers[0]?.events ?? []).map((e) => `${String(e.object?.metadata?.name)}=${String(e.object?.data?.v)}`));
    const appliedAnyway = attempts.filter((a) => !acknowledged(a) && seen.has(`${a.name}=${a.v}`));
    t.diagnostic(
      `failed writes applied anyway: ${appliedAnyway.length} of ${attempts.filter((a) => !acknowledged(a)).length} (${appliedAnyway.map((a) => `${a.op} ${String(a.status)} ${a.ms}ms`).join(', ')})`,
    );
    t.diagnostic(
      `watch connections per watcher: ${watchers.map((w) => w.opened).join(', ')}; refused reconnects: ${watchers.flatMap((w) => w.connections.filter((c) => c.status !== 200).map((c) => c.status)).join(',')}`,
    );
    check((await configMapsRv(env.url)) === final.rv, 'something changed after the load stopped');
  } finally {
    await Promise.all(watchers.map((w) => w.stop()));
  }
  assert.deepEqual(problems, []);
}

describe('Redis outages under --workers 2', () => {
  test('kill -9 of Redis (AOF, appendfsync always) and a restart 3 s later', { timeout: 90_000 }, async (t) => {
    const env = await startRedisWorkers({ redis: { appendOnly: true } });
    try {
      await outage(t, env, 'redis-kill', {
        downMs: 3000,
        down: (e) => e.redis.kill9(),
        up: (e) => e.redis.restart(),
      });
    } finally {
      await env.stop();
    }
  });

  test('Redis frozen for 10 s (SIGSTOP, SIGCONT)', { timeout: 90_000 }, async (t) => {
    const env = await startRedisWorkers({ redis: { appendOnly: true } });
    const pid = await redisPid(env.redis.port);
    let frozen = false;
    try {
      await outage(t, env, 'redis-stop', {
        downMs: 10_000,
        down: async () => {
          process.kill(pid, 'SIGSTOP');
          frozen = true;
        },
        up: async () => {
          process.kill(pid, 'SIGCONT');
          frozen = false;
        },
      });
    } finally {
      if (frozen) process.kill(pid, 'SIGCONT');
      await env.stop();
    }
  });
});

test("while Redis is down, 503 answers speak kube's words, not the Redis client's", { timeout: 90_000 }, async () => {
  const env = await startRedisWorkers({ redis: { appendOnly: true } });
  try {
    await createNamespace(env.url, 'words');
    await env.redis.kill9();
    const answers = [];
    for (const [method, path, body] of [
      ['POST', '/api/v1/namespaces/words/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }],
      ['GET', '/api/v1/namespaces/words/configmaps/x', undefined],
    ] as const) {
      const r = await fresh(env.url, path, { method, body, timeoutMs: 30_000 });
      answers.push({ method, status: r.status, text: r.text });
      if (r.status === 503) {
        assert.equal(r.body?.kind, 'Status', r.text);
        assert.equal(r.body?.reason, 'ServiceUnavailable', r.text);
        assert.equal(r.body?.message, 'the server is currently unable to handle the request', r.text);
        assert.equal(r.headers['retry-after'], '1');
      } else {
        assert.equal(r.status, 504, r.text);
        assert.equal(r.body?.reason, 'Timeout', r.text);
      }
      assert.doesNotMatch(r.text, /maxRetriesPerRequest|ioredis|Redis|ECONNREFUSED|Connection is closed/i);
    }
    assert.ok(
      answers.some((a) => a.status === 503),
      `a request failed 503: ${JSON.stringify(answers)}`,
    );
    // The detail is for the operator, in the log.
    await env.cap.waitForLog(/"msg":"storage unavailable","detail":"[^"]+"/, 10_000);
  } finally {
    await env.stop();
  }
});
