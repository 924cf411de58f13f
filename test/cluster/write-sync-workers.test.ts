/**
 * `--storage=redis --workers 2`: a write answers only once the other worker's watches have its
 * change (--worker-write-sync-timeout), so a client whose watch one worker serves and whose writes
 * the other does sees each write at its watch before the write's response; a stopped worker holds
 * writes up for one bound at most, and its watches get every change, in order, once it runs again.
 * Needs `redis-server` (scripts/ensure-test-deps.sh installs it).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request, type IncomingMessage } from 'node:http';
import { uniqueName } from '../helpers/capstan.js';
import { createNamespace, startRedisWorkers, type RedisWorkers } from '../helpers/redis-workers.js';
import { requestLines, type ClusterProcess } from './cluster-process.js';

/**
 * The bound on a write's wait. Generous on purpose: a write that waits this long answers without
 * its event (and the late worker is not waited for until it catches up), which is the flag's
 * documented behaviour, not a fault; at 400 ms a CI run with every core busy hit it once. Only the
 * stopped-worker test waits through it, once.
 */
const SYNC_TIMEOUT_MS = 3000;

/** How long a writing worker may take to hear that the other one now watches (see untilSynced). */
const SYNC_NEWS_LIMIT_MS = 20_000;

/** One kept-alive connection: every request through it goes to the worker that took the connection. */
class Connection {
  readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });
  constructor(readonly url: string) {}

  send(method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request(`${this.url}${path}`, { method, agent: this.agent, headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  /** Starts a watch on this connection; `onEvent` gets each event's type and object name. */
  watch(path: string, onEvent: (type: string, name: string, rv: string) => void): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const req = request(`${this.url}${path}`, { agent: this.agent }, (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          reject(new Error(`watch: HTTP ${String(res.statusCode)}`));
          return;
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          let nl: number;
          while ((nl = buffered.indexOf('\n')) >= 0) {
            const event = JSON.parse(buffered.slice(0, nl)) as { type: string; object: { metadata: { name: string; resourceVersion: string } } };
            buffered = buffered.slice(nl + 1);
            onEvent(event.type, event.object.metadata.name, event.object.metadata.resourceVersion);
          }
        });
        resolve(() => req.destroy());
      });
      req.on('error', (err) => {
        if (!req.destroyed) reject(err);
      });
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** The events one watch received, in order, with when each arrived (performance.now()). */
class EventLog {
  readonly order: string[] = [];
  private readonly arrived = new Map<string, number>();
  private waiters: Array<() => void> = [];

  add(type: string, name: string): void {
    const event = `${type} ${name}`;
    this.order.push(event);
    this.arrived.set(event, performance.now());
    for (const wake of this.waiters.splice(0)) wake();
  }

  has(event: string): boolean {
    return this.arrived.has(event);
  }

  /** When `event` arrived, once it has. */
  async arrival(event: string): Promise<number> {
    for (;;) {
      const at = this.arrived.get(event);
      if (at !== undefined) return at;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

/**
 * Events allowed in after their write's response among a test's 70 writes. The server writes the
 * watch frame before the other worker's answer lets the response go, but the two connections'
 * packets can still cross on their way to the client when every core is busy (the kernel hands a
 * loopback packet on from the sending core, and a starved core hands it on later): seen once in
 * about ten runs under load, 0.3 ms late, and three at once (0.2-0.3 ms late) in a fresh-clone CI
 * run on 4 December 2026. Without the wait about 28% of events come after the response
 * (docs/control-plane.md), 20 of 70 here, so five still tells a missing wait from crossed packets.
 */
const CROSSED_ALLOWED = 5;

/** Each late event (not in when its write was answered) with how long after the response it came. */
async function lateness(log: EventLog, late: Array<{ event: string; answered: number }>): Promise<string[]> {
  const out: string[] = [];
  for (const { event, answered } of late) out.push(`${event} ${((await log.arrival(event)) - answered).toFixed(1)} ms after its response`);
  return out;
}

describe('--storage=redis --workers 2: writes and the other worker watches', () => {
  let env: RedisWorkers;
  let cap: ClusterProcess;
  const ns = uniqueName('write-sync');

  /** The worker index and pid that served a GET of `marker` (a unique path) through `conn`. */
  async function workerOf(conn: Connection, marker: string): Promise<number> {
    assert.equal((await conn.send('GET', `/api/v1/namespaces/${ns}/configmaps?labelSelector=marker%3D${marker}`)).status, 200);
    await cap.waitForLog(new RegExp(`"path":"[^"]*marker%3D${marker}`));
    const line = requestLines(cap.stderr()).find((l) => typeof l.path === 'string' && l.path.includes(`marker%3D${marker}`));
    assert.equal(typeof line?.worker, 'number');
    return line?.worker as number;
  }

  /** A watch connection and a write connection served by different workers. */
  async function twoWorkers(tag: string): Promise<{ watcher: Connection; writer: Connection; watcherIndex: number }> {
    const watcher = new Connection(cap.url);
    const watcherIndex = await workerOf(watcher, `${tag}-w`);
    for (let attempt = 0; attempt < 10; attempt++) {
      const writer = new Connection(cap.url);
      if ((await workerOf(writer, `${tag}-c${attempt}`)) !== watcherIndex) return { watcher, writer, watcherIndex };
      writer.close();
    }
    throw new Error('no connection reached the other worker');
  }

  before(async () => {
    env = await startRedisWorkers({ args: ['--worker-write-sync-timeout', `${SYNC_TIMEOUT_MS}ms`] });
    cap = env.cap;
    await createNamespace(cap.url, ns);
  });
  after(async () => {
    await env?.stop();
  });

  /**
   * Writes ConfigMaps named `<prefix>-warm-N` (labelled set=<tag>) until three in a row had their
   * event at the watch when their response came: the writing worker has heard that the other one
   * reads ConfigMaps (a watch answers 200 as that news travels). One such write is not enough: most
   * writes' events beat their response even without the wait, and a write that did by luck left
   * the next one unsynced (flaked once here).
   */
  async function untilSynced(writer: Connection, seen: (event: string) => boolean, tag: string, prefix = tag): Promise<void> {
    let inARow = 0;
    // Bounded by time, not by a count of writes: on a loaded machine the news can take longer than
    // fifty quick writes (a full-suite run saw none of fifty synced within 114 ms).
    const deadline = performance.now() + SYNC_NEWS_LIMIT_MS;
    for (let i = 0; performance.now() < deadline; i++) {
      const name = `${prefix}-warm-${i}`;
      const r = await writer.send('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, labels: { set: tag } },
      });
      assert.equal(r.status, 201, r.text);
      inARow = seen(`ADDED ${name}`) ? inARow + 1 : 0;
      if (inARow === 3) return;
    }
    throw new Error(`no three writes in a row were seen at the watch before their responses within ${SYNC_NEWS_LIMIT_MS} ms`);
  }

  test("each write's event reaches a watch on the other worker before the write's response", async () => {
    const { watcher, writer } = await twoWorkers('order');
    const log = new EventLog();
    const stop = await watcher.watch(`/api/v1/namespaces/${ns}/configmaps?watch=1&labelSelector=set%3Dorder`, (type, name) => log.add(type, name));
    try {
      await untilSynced(writer, (e) => log.has(e), 'order');
      /** Events that were not in when their write was answered, with when that was. */
      const late: Array<{ event: string; answered: number }> = [];
      const expect = (event: string): void => {
        if (!log.has(event)) late.push({ event, answered: performance.now() });
      };
      for (let i = 0; i < 30; i++) {
        const name = `order-${i}`;
        const path = `/api/v1/namespaces/${ns}/configmaps`;
        const created = await writer.send('POST', path, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, labels: { set: 'order' } },
          data: { i: String(i) },
        });
        assert.equal(created.status, 201, created.text);
        expect(`ADDED ${name}`);
        const object = JSON.parse(created.text) as { metadata: Record<string, unknown> };
        const updated = await writer.send('PUT', `${path}/${name}`, { ...object, data: { i: String(i), updated: 'yes' } });
        assert.equal(updated.status, 200, updated.text);
        expect(`MODIFIED ${name}`);
        if (i % 3 === 0) {
          const deleted = await writer.send('DELETE', `${path}/${name}`);
          assert.equal(deleted.status, 200, deleted.text);
          expect(`DELETED ${name}`);
        }
      }
      // Every late event still comes; how late tells a missed wait (the bound, or none at all) from crossed packets.
      const crossed = await lateness(log, late);
      assert.ok(crossed.length <= CROSSED_ALLOWED, `events that came after their write's response: ${crossed.join('; ')}`);
    } finally {
      stop();
      watcher.close();
      writer.close();
    }
  });

  test('a stopped worker holds writes up for one bound at most, and its watch gets every change in order once it runs again', async () => {
    const { watcher, writer, watcherIndex } = await twoWorkers('stall');
    const log = new EventLog();
    const events = log.order;
    const stop = await watcher.watch(`/api/v1/namespaces/${ns}/configmaps?watch=1&labelSelector=set%3Dstall`, (type, name) => log.add(type, name));
    await untilSynced(writer, (e) => log.has(e), 'stall');
    events.length = 0;
    const first = await writer.send('POST', `/api/v1/namespaces/${ns}/configmaps`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'stall-0', labels: { set: 'stall' } },
    });
    assert.equal(first.status, 201, first.text);
    await log.arrival('ADDED stall-0');
    const pid = workerPid(cap, watcherIndex);
    process.kill(pid, 'SIGSTOP');
    try {
      const started = performance.now();
      for (let i = 1; i <= 5; i++) {
        const r = await writer.send('POST', `/api/v1/namespaces/${ns}/configmaps`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `stall-${i}`, labels: { set: 'stall' } },
        });
        assert.equal(r.status, 201, r.text);
      }
      // The first write waited for the stopped worker until the bound; the next ones did not wait for it.
      assert.ok(performance.now() - started >= SYNC_TIMEOUT_MS, 'the first write waited for the stopped worker');
      assert.deepEqual(events, ['ADDED stall-0'], 'the stopped worker delivered nothing');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // Running again, the worker hands out the changes it missed, in order.
    await log.arrival('ADDED stall-5');
    assert.deepEqual(events.slice(0, 6), ['ADDED stall-0', 'ADDED stall-1', 'ADDED stall-2', 'ADDED stall-3', 'ADDED stall-4', 'ADDED stall-5']);
    // Its late answer reaches the primary on its own channel, in no set order with the next write's
    // question: once a write's event comes first again, it is waited for again, and stays so.
    await untilSynced(writer, (e) => log.has(e), 'stall', 'stall-again');
    const late: Array<{ event: string; answered: number }> = [];
    for (let i = 0; i < 20; i++) {
      const r = await writer.send('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `stall-after-${i}`, labels: { set: 'stall' } },
      });
      assert.equal(r.status, 201, r.text);
      if (!log.has(`ADDED stall-after-${i}`)) late.push({ event: `ADDED stall-after-${i}`, answered: performance.now() });
    }
    const crossed = await lateness(log, late);
    assert.ok(crossed.length <= 1, `after the worker caught up, events that came after their write's response: ${crossed.join('; ')}`);
    stop();
    watcher.close();
    writer.close();
  });
});

/** The pid of the worker with slot `index`, from its request log lines. */
function workerPid(cap: ClusterProcess, index: number): number {
  const line = requestLines(cap.stderr()).find((l) => l.worker === index && typeof l.pid === 'number');
  assert.ok(line !== undefined, `a request line of worker ${index}`);
  return line.pid as number;
}
