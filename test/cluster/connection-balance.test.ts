/**
 * `--storage=redis --workers 2`: the primary hands a new connection to the worker serving the
 * fewest open connections. Clients such as kube-controller-manager open a short connection, close
 * it, then hold one long HTTP/2 connection: handed out in turn, the long ones of every client would
 * land on the same worker. Each worker's open connections are in `capstan_worker_connections`. A
 * worker much busier than another (event loop utilization, `capstan_worker_event_loop_utilization`)
 * is passed over, however few connections it serves.
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

/** A server-side apply of a ConfigMap of 300 keys: much work for the server, little for the client. */
const APPLIED = JSON.stringify({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'busy', namespace: 'default' },
  data: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`key-${i}`, `value-${i}`])),
});

/** Applies APPLIED through `agent`, the answer read and dropped. */
function applyThrough(agent: Agent, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/api/v1/namespaces/default/configmaps/busy?fieldManager=busy&force=true`,
      { agent, method: 'PATCH', headers: { 'content-type': 'application/apply-patch+yaml' } },
      (res) => {
        res.resume();
        res.on('end', resolve);
      },
    );
    req.on('error', reject);
    req.end(APPLIED);
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

/** Each worker's event loop utilization, from the cluster's metrics text. */
function busyByWorker(metrics: string): Map<number, number> {
  const busy = new Map<number, number>();
  for (const m of metrics.matchAll(/^capstan_worker_event_loop_utilization\{worker="(\d+)"\} ([\d.e-]+)/gm)) busy.set(Number(m[1]), Number(m[2]));
  return busy;
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
      // Both workers about as busy (their start-up work done), so connections go by their count.
      await eventually(
        async () => {
          const busy = [...busyByWorker((await getThrough(long1, env.url, '/metrics')).text).values()];
          return busy.length === 2 && Math.abs(busy[0] - busy[1]) < 0.1;
        },
        'both workers about as busy',
        60_000,
      );
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

  test('a new connection goes to a much less busy worker, even one serving more connections', async (t) => {
    const agents = [0, 1, 2].map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
    let busyLoop = false;
    let loop: Promise<void> | undefined;
    try {
      const workerOf: number[] = [];
      for (const [i, agent] of agents.entries()) {
        assert.equal((await getThrough(agent, env.url, `/api/v1/namespaces/default?conn=idle${i}`)).status, 200);
        workerOf.push((await servedBy(env, `conn=idle${i}`))[0] ?? -1);
      }
      // Three connections on two workers: one serves two, the other one.
      let counts = new Map<number, number>();
      await eventually(async () => {
        counts = connectionsByWorker((await getThrough(agents[0], env.url, '/metrics')).text);
        return [...counts.values()].reduce((a, b) => a + b, 0) === 3;
      }, 'the three connections counted, and none before them');
      const lone = [...counts].find(([, n]) => n === 1)?.[0];
      const crowded = [...counts].find(([, n]) => n === 2)?.[0];
      assert.ok(lone !== undefined && crowded !== undefined, `connections by worker: ${JSON.stringify([...counts])}`);
      const loneAgent = agents[workerOf.indexOf(lone)];
      // The lone worker's connection keeps it busy.
      busyLoop = true;
      loop = (async () => {
        while (busyLoop) await applyThrough(loneAgent, env.url);
      })();
      const crowdedAgent = agents[workerOf.indexOf(crowded)];
      let busy = new Map<number, number>();
      await eventually(
        async () => {
          busy = busyByWorker((await getThrough(crowdedAgent, env.url, '/metrics')).text);
          return (busy.get(lone) ?? 0) > 0.6 && (busy.get(lone) ?? 0) > (busy.get(crowded) ?? 0) + 0.3;
        },
        'the lone worker reported much busier',
        60_000,
      );
      t.diagnostic(`event loop utilization: lone ${busy.get(lone)}, crowded ${busy.get(crowded)}`);
      // By the connections alone the new one would go to the lone worker; it is too busy.
      const next = await fresh(env.url, '/api/v1/namespaces/default?conn=next');
      assert.equal(next.status, 200);
      assert.deepEqual(await servedBy(env, 'conn=next'), [crowded]);
    } finally {
      busyLoop = false;
      await loop;
      for (const agent of agents) agent.destroy();
    }
  });
});
