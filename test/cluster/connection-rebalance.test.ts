/**
 * `--storage=redis --workers 2`: a worker whose event loop stays much busier than the other's is
 * asked by the primary to move one HTTP/2 client: it sends GOAWAY on the connection whose requests
 * would even the two workers out, and the client's next connection goes to the other worker. Go
 * clients carry every request on one connection, so without this a control plane's few clients
 * can keep one worker saturated and the other idle. Connections of the other worker are left alone.
 * The moved client's watches end with the move, so that it opens them again beside its requests.
 * With `--worker-rebalance-interval=0` nothing moves and the primary logs the imbalance instead.
 * Needs `redis-server` (scripts/ensure-test-deps.sh installs it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type ClientHttp2Session } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually, startRedisWorkers, workersThatServed, type RedisWorkers } from '../helpers/redis-workers.js';

const TOKEN = 'rebalance-admin-token';

/** GET `path` on `session` as an administrator; the status, the body dropped. */
function getOn(session: ClientHttp2Session, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, authorization: `Bearer ${TOKEN}` });
    let status = 0;
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', () => undefined);
    stream.on('end', () => resolve(status));
    stream.on('error', reject);
    stream.end();
  });
}

/** A server-side apply of a ConfigMap of 300 keys on `session`: much work for the server, little for the client. */
function applyOn(session: ClientHttp2Session, name: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = session.request({
      ':method': 'PATCH',
      ':path': `/api/v1/namespaces/default/configmaps/${name}?fieldManager=busy&force=true`,
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/apply-patch+yaml',
    });
    let status = 0;
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', () => undefined);
    stream.on('end', () => resolve(status));
    stream.on('error', reject);
    stream.end(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'default' },
        data: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`key-${i}`, `value-${i}`])),
      }),
    );
  });
}

/** The worker that logged the request whose path holds `marker`. */
async function workerOf(env: RedisWorkers, marker: string): Promise<number> {
  await eventually(() => workersThatServed(env.cap.stderr(), marker).length > 0, `the request log line of ${marker}`);
  const workers = workersThatServed(env.cap.stderr(), marker);
  assert.equal(workers.length, 1, `one worker served ${marker}: ${JSON.stringify(workers)}`);
  return workers[0];
}

const LIST = '/api/v1/namespaces/default/configmaps';

/** Two workers on Redis, HTTPS with an administrator token, `args` added; HTTP/2 sessions opened on it. */
interface Cluster {
  env: RedisWorkers;
  open(): ClientHttp2Session;
  stop(): Promise<void>;
}

async function startCluster(args: string[] = []): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-rebalance-'));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, `${TOKEN},admin,admin-uid,"system:masters"\n`);
  const sessions: ClientHttp2Session[] = [];
  const env = await startRedisWorkers({ args: [`--token-auth-file=${tokens}`, ...args] });
  const secureUrl = /"secureUrl":"(https:[^"]+)"/.exec(env.cap.stderr())?.[1] ?? '';
  assert.ok(secureUrl !== '', 'the cluster serves HTTPS');
  return {
    env,
    open: () => {
      const session = connect(secureUrl, { rejectUnauthorized: false });
      session.on('error', () => undefined);
      sessions.push(session);
      return session;
    },
    stop: async () => {
      for (const s of sessions) s.destroy();
      await env.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Three connections, two of which share a worker (whichever way the primary hands them): those two, the rest, and their worker. */
async function twoOnOneWorker(c: Cluster): Promise<{ heavy: ClientHttp2Session; light: ClientHttp2Session; others: ClientHttp2Session[]; busyWorker: number }> {
  const opened = [c.open(), c.open(), c.open()];
  const workers: number[] = [];
  for (let i = 0; i < opened.length; i++) {
    assert.equal(await getOn(opened[i], `${LIST}?limit=1&rebalance=probe-${i}`), 200);
    workers.push(await workerOf(c.env, `rebalance=probe-${i}`));
  }
  const busyWorker = workers.find((w, i) => workers.indexOf(w) !== i);
  assert.ok(busyWorker !== undefined, `two connections share a worker: ${JSON.stringify(workers)}`);
  const [heavy, light] = opened.filter((_, i) => workers[i] === busyWorker);
  return { heavy, light, others: opened.filter((_, i) => workers[i] !== busyWorker), busyWorker };
}

/** Load on `heavy` and `light`, twice as much on the first, until `until` resolves; then waits for the requests in flight. */
async function loadUntil<T>(heavy: ClientHttp2Session, light: ClientHttp2Session, until: Promise<T>): Promise<T> {
  let loading = true;
  const loop = async (s: ClientHttp2Session, name: string): Promise<void> => {
    while (loading && !s.closed && !s.destroyed) await applyOn(s, name).catch(() => undefined);
  };
  const loops = [...Array.from({ length: 8 }, (_, i) => loop(heavy, `heavy-${i}`)), ...Array.from({ length: 4 }, (_, i) => loop(light, `light-${i}`))];
  try {
    return await until;
  } finally {
    loading = false;
    await Promise.all(loops);
  }
}

const goaway = (s: ClientHttp2Session): Promise<ClientHttp2Session> => new Promise((resolve) => s.once('goaway', () => resolve(s)));

/** A watch of ConfigMaps on `session` (headers received); `ended` resolves when its stream ends. */
async function watchOn(session: ClientHttp2Session): Promise<{ ended: Promise<void>; open(): boolean }> {
  const stream = session.request({ ':path': `${LIST}?watch=1&timeoutSeconds=600`, authorization: `Bearer ${TOKEN}` });
  stream.on('data', () => undefined);
  stream.on('error', () => undefined);
  const ended = new Promise<void>((resolve) => stream.once('close', () => resolve()));
  const status = await new Promise<number>((resolve) => stream.once('response', (headers) => resolve(Number(headers[':status']))));
  assert.equal(status, 200);
  return { ended, open: () => !stream.closed && !stream.destroyed };
}

describe('a worker much busier than the other moves one of its HTTP/2 clients', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    await cluster?.stop();
  });

  test('the client whose share evens the load out gets GOAWAY; its next connection is served by the other worker', async () => {
    const { heavy, light, others, busyWorker } = await twoOnOneWorker(cluster);
    let othersGotGoaway = false;
    for (const s of others) s.once('goaway', () => (othersGotGoaway = true));
    const watches = new Map<ClientHttp2Session, Awaited<ReturnType<typeof watchOn>>>();
    for (const s of [heavy, light, ...others]) watches.set(s, await watchOn(s));
    const movedSession = await loadUntil(heavy, light, Promise.race([goaway(heavy), goaway(light)]));
    // The moved client's watch ends with the move (it reopens it beside its requests); the others' stay.
    await watches.get(movedSession)?.ended;
    for (const s of [heavy, light, ...others]) if (s !== movedSession) assert.equal(watches.get(s)?.open(), true, 'a watch of a client that stays is open');
    assert.match(cluster.env.cap.stderr(), /"msg":"asking a client to reconnect, to a less busy worker"/);
    assert.equal(othersGotGoaway, false, 'connections of the other worker stay');
    assert.equal([heavy, light].filter((s) => s.closed || s.destroyed).length >= 1, true);
    // The moved client reconnects: the primary hands the new connection to the less busy worker.
    const reconnected = cluster.open();
    assert.equal(await getOn(reconnected, `${LIST}?limit=1&rebalance=after-move`), 200);
    const servedAfter = await workerOf(cluster.env, 'rebalance=after-move');
    assert.notEqual(servedAfter, busyWorker, `the reconnected client is served by the other worker (moved: ${movedSession === heavy ? 'heavy' : 'light'})`);
  });
});

describe('--worker-rebalance-interval=0: clients stay where they were handed', () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster(['--worker-rebalance-interval=0']);
  });
  after(async () => {
    await cluster?.stop();
  });

  test('the same imbalance is logged, and no connection gets GOAWAY', async () => {
    const { heavy, light, others } = await twoOnOneWorker(cluster);
    let goaways = 0;
    for (const s of [heavy, light, ...others]) s.on('goaway', () => goaways++);
    // The primary logs the imbalance where it would otherwise have asked for a move.
    await loadUntil(
      heavy,
      light,
      eventually(() => cluster.env.cap.stderr().includes('moving clients is off (--worker-rebalance-interval=0)'), 'the imbalance logged', 120_000),
    );
    assert.doesNotMatch(cluster.env.cap.stderr(), /asking a client to reconnect/);
    assert.equal(goaways, 0);
    for (const s of [heavy, light, ...others]) assert.equal(await getOn(s, `${LIST}?limit=1`), 200, 'every connection still serves');
  });
});
