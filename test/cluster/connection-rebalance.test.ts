/**
 * `--storage=redis --workers 2`: a worker whose event loop stays much busier than the other's is
 * asked by the primary to move one HTTP/2 client: it sends GOAWAY on the connection whose requests
 * would even the two workers out, and the client's next connection goes to the other worker. Go
 * clients carry every request on one connection, so without this a control plane's few clients
 * can keep one worker saturated and the other idle. Connections of the other worker are left alone.
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

describe('a worker much busier than the other moves one of its HTTP/2 clients', () => {
  let env: RedisWorkers;
  let secureUrl: string;
  const sessions: ClientHttp2Session[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'capstan-rebalance-'));
  before(async () => {
    const tokens = join(dir, 'tokens.csv');
    writeFileSync(tokens, `${TOKEN},admin,admin-uid,"system:masters"\n`);
    env = await startRedisWorkers({ args: [`--token-auth-file=${tokens}`] });
    secureUrl = /"secureUrl":"(https:[^"]+)"/.exec(env.cap.stderr())?.[1] ?? '';
    assert.ok(secureUrl !== '', 'the cluster serves HTTPS');
  });
  after(async () => {
    for (const s of sessions) s.destroy();
    await env?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function open(): ClientHttp2Session {
    const session = connect(secureUrl, { rejectUnauthorized: false });
    session.on('error', () => undefined);
    sessions.push(session);
    return session;
  }

  test('the client whose share evens the load out gets GOAWAY; its next connection is served by the other worker', async () => {
    // Three connections: two of them are on the same worker, whichever way the primary hands them.
    const opened = [open(), open(), open()];
    const workers: number[] = [];
    for (let i = 0; i < opened.length; i++) {
      assert.equal(await getOn(opened[i], `${LIST}?limit=1&rebalance=probe-${i}`), 200);
      workers.push(await workerOf(env, `rebalance=probe-${i}`));
    }
    const busyWorker = workers.find((w, i) => workers.indexOf(w) !== i);
    assert.ok(busyWorker !== undefined, `two connections share a worker: ${JSON.stringify(workers)}`);
    const [heavy, light] = opened.filter((_, i) => workers[i] === busyWorker);
    const others = opened.filter((_, i) => workers[i] !== busyWorker);
    const goaway = (s: ClientHttp2Session): Promise<ClientHttp2Session> => new Promise((resolve) => s.once('goaway', () => resolve(s)));
    const moved = Promise.race([goaway(heavy), goaway(light)]);
    let othersGotGoaway = false;
    for (const s of others) s.once('goaway', () => (othersGotGoaway = true));
    // Load on the two connections of one worker, twice as much on one as on the other, until one is moved.
    let loading = true;
    const loop = async (s: ClientHttp2Session, name: string): Promise<void> => {
      while (loading && !s.closed && !s.destroyed) await applyOn(s, name).catch(() => undefined);
    };
    const loops = [...Array.from({ length: 8 }, (_, i) => loop(heavy, `heavy-${i}`)), ...Array.from({ length: 4 }, (_, i) => loop(light, `light-${i}`))];
    const movedSession = await moved;
    loading = false;
    await Promise.all(loops);
    assert.match(env.cap.stderr(), /"msg":"asking a client to reconnect, to a less busy worker"/);
    assert.equal(othersGotGoaway, false, 'connections of the other worker stay');
    assert.equal([heavy, light].filter((s) => s.closed || s.destroyed).length >= 1, true);
    // The moved client reconnects: the primary hands the new connection to the less busy worker.
    const reconnected = open();
    assert.equal(await getOn(reconnected, `${LIST}?limit=1&rebalance=after-move`), 200);
    const servedAfter = await workerOf(env, 'rebalance=after-move');
    assert.notEqual(servedAfter, busyWorker, `the reconnected client is served by the other worker (moved: ${movedSession === heavy ? 'heavy' : 'light'})`);
  });
});
