/**
 * `--storage=redis --workers 2`: the primary hands a new connection to the worker serving the
 * fewest open connections. Clients such as kube-controller-manager open a short connection, close
 * it, then hold one long HTTP/2 connection: handed out in turn, the long ones of every client would
 * land on the same worker. Each worker's open connections are in `capstan_worker_connections`.
 * Needs `redis-server` (scripts/ensure-test-deps.sh installs it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { eventually, fresh, startRedisWorkers, workersThatServed, type RedisWorkers } from '../helpers/redis-workers.js';

/** GET `path` through `agent` (a kept-alive connection); the status and body. */
function getThrough(agent: Agent, url: string, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The worker whose request log names `marker`, once the line is written. */
async function servedBy(env: RedisWorkers, marker: string): Promise<number[]> {
  await eventually(() => workersThatServed(env.cap.stderr(), marker).length > 0, `the request log line of ${marker}`);
  return workersThatServed(env.cap.stderr(), marker);
}

/** Each worker's open connections, from the cluster's metrics text. */
function connectionsByWorker(metrics: string): Map<number, number> {
  const counts = new Map<number, number>();
  for (const m of metrics.matchAll(/^capstan_worker_connections\{worker="(\d+)"\} (\d+)/gm)) counts.set(Number(m[1]), Number(m[2]));
  return counts;
}

describe('connections go to the worker serving the fewest', () => {
  let env: RedisWorkers;
  before(async () => {
    env = await startRedisWorkers();
  });
  after(async () => {
    await env?.stop();
  });

  test('a long connection, a short one closed, then the next long one goes to the worker the short one left', async () => {
    const long1 = new Agent({ keepAlive: true, maxSockets: 1 });
    const long2 = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      assert.equal((await getThrough(long1, env.url, '/api/v1/namespaces/default?conn=long1')).status, 200);
      const [first] = await servedBy(env, 'conn=long1');
      // The short connection goes to the other worker, which serves none.
      const short = await fresh(env.url, '/api/v1/namespaces/default?conn=short');
      assert.equal(short.status, 200);
      const [other] = await servedBy(env, 'conn=short');
      assert.notEqual(other, first, 'the short connection went to the worker serving none');
      // Once the short connection's worker no longer counts it (read through the long connection,
      // so no other connection is open meanwhile)...
      await eventually(async () => {
        const r = await getThrough(long1, env.url, '/metrics');
        const counts = connectionsByWorker(r.text);
        return counts.get(first) === 1 && (counts.get(other) ?? 0) === 0;
      }, 'the short connection counted closed');
      // ...the next long connection goes to it, not to the next worker in turn (the first one).
      assert.equal((await getThrough(long2, env.url, '/api/v1/namespaces/default?conn=long2')).status, 200);
      assert.deepEqual(await servedBy(env, 'conn=long2'), [other]);
      const r = await getThrough(long2, env.url, '/metrics');
      const counts = connectionsByWorker(r.text);
      assert.equal(counts.get(first), 1);
      assert.equal(counts.get(other), 1);
    } finally {
      long1.destroy();
      long2.destroy();
    }
  });
});
