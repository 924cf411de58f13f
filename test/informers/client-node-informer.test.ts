/**
 * Conformance of @kubernetes/client-node's informer (`makeInformer`, a ListWatch over ConfigMaps
 * of one namespace) with Capstan: initial list, writes, deletions, server-side watch timeouts, cut
 * connections and a 410 relist, with the informer's cache compared to a direct LIST after each phase.
 *
 * What client-node's ListWatch does (dist/cache.js; 1.4 and 2.0 agree on these points), which these tests rely on:
 * - a watch that ends cleanly (server timeout) is re-opened from the last resourceVersion seen;
 * - an `ERROR` event with code 410, or a watch answered with HTTP 410, clears its resourceVersion so
 *   the next round relists; the relist reports objects that disappeared as deletes (with their last
 *   known state) and changed ones as updates (unchanged ones are not reported);
 * - any other failure (connection reset, refused) calls the `error` callbacks and STOPS the informer:
 *   the application restarts it (`informer.start()`, as client-node's README shows), which resumes
 *   the watch from the last resourceVersion. The tests' informers do exactly that.
 * client-node neither asks for bookmarks nor sends timeoutSeconds, so the server's randomised
 * --min-request-timeout decides when its watches end.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Informer, ObjectCache, V1ConfigMap, V1ConfigMapList } from '@kubernetes/client-node';
import type { ServerConfig } from '../../src/cli/flags.js';
import { kubeconfigFor } from '../../src/cli/kubeconfig.js';
import type { Storage } from '../../src/storage/storage.js';
import { allBackends } from '../helpers/backends.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const NS = 'informers';

type ClientNode = typeof import('@kubernetes/client-node');
/** Loaded in `before`, so that a client-node that cannot load on this Node.js fails with a clear reason. */
let k8s: ClientNode;

async function loadClientNode(): Promise<ClientNode> {
  try {
    return await import('@kubernetes/client-node');
  } catch (err) {
    throw new Error(`@kubernetes/client-node cannot be loaded on Node.js ${process.version}: ${err instanceof Error ? err.message : String(err)}\n`
      + 'client-node 2.x depends on undici 8, which needs Node.js >= 22.19 (undici 8 uses zlib zstd and '
      + 'worker_threads.markAsUncloneable). On Node.js 20 use client-node 1.x, or pin undici 7 (package.json '
      + '"overrides": {"undici": "^7.16.0"}), or run the tests on Node.js 22.19+.');
  }
}

interface Item { name: string; rv: string }
interface InformerEvent {
  event: 'add' | 'update' | 'delete';
  name: string;
  rv: string;
  /** Reported by a (re)list rather than by a watch event. */
  fromList: boolean;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function byName(a: Item, b: Item): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// The informer under test

class NodeInformer {
  readonly events: InformerEvent[] = [];
  readonly errors: unknown[] = [];
  private readonly informer: Informer<V1ConfigMap> & ObjectCache<V1ConfigMap>;
  private listing = false;
  private stopped = false;

  constructor(kubeconfig: string) {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const listFn = async (): Promise<V1ConfigMapList> => {
      const list = await core.listNamespacedConfigMap({ namespace: NS });
      // ListWatch applies the list synchronously right after this promise settles.
      this.listing = true;
      setImmediate(() => { this.listing = false; });
      return list;
    };
    this.informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/configmaps`, listFn);
    const record = (event: InformerEvent['event']) => (obj: V1ConfigMap): void => {
      this.events.push({ event, name: obj.metadata?.name ?? '', rv: obj.metadata?.resourceVersion ?? '', fromList: this.listing });
    };
    this.informer.on(k8s.ADD, record('add'));
    this.informer.on(k8s.UPDATE, record('update'));
    this.informer.on(k8s.DELETE, record('delete'));
    this.informer.on(k8s.ERROR, (err: unknown) => {
      this.errors.push(err);
      if (!this.stopped) setTimeout(() => { if (!this.stopped) void this.informer.start(); }, 100);
    });
  }

  /** Resolves once the initial list is in the cache and the watch is open. */
  async start(): Promise<void> {
    await this.informer.start();
    if (this.errors.length > 0) throw new Error(`informer failed to start: ${String(this.errors[0])}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.informer.stop();
  }

  dump(): Item[] {
    return this.informer.list(NS)
      .map((o) => ({ name: o.metadata?.name ?? '', rv: o.metadata?.resourceVersion ?? '' }))
      .sort(byName);
  }

  async waitFor(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; errors: ${this.errors.map(String).join('; ')}`);
      await sleep(20);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Server, proxy and writes

interface Env {
  server: TestServer;
  proxy: TcpProxy;
  kubeconfig: string;
  close(): Promise<void>;
}

function json(method: string, body: unknown, contentType = 'application/json'): RequestInit {
  return { method, headers: { 'content-type': contentType }, body: JSON.stringify(body) };
}

async function startEnv(config: Partial<ServerConfig>, storage: Storage): Promise<Env> {
  const server = await startTestServer(config, storage);
  const proxy = await startTcpProxy(server.url);
  const dir = mkdtempSync(join(tmpdir(), 'capstan-informer-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigFor(proxy.url));
  const ns = await api(server.url, '/api/v1/namespaces', json('POST', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
  assert.equal(ns.status, 201, ns.text);
  return {
    server, proxy, kubeconfig,
    close: async () => {
      await proxy.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Write { type: 'add' | 'update' | 'delete'; name: string; rv: string }

/** Writes ConfigMaps directly to the server (not through the proxy) and remembers what it did. */
class Writer {
  readonly writes: Write[] = [];
  private n = 0;
  constructor(private readonly url: string, private readonly ns = NS) {}

  async create(name: string): Promise<Write> {
    const r = await api(this.url, `/api/v1/namespaces/${this.ns}/configmaps`,
      json('POST', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: String(this.n++) } }));
    assert.equal(r.status, 201, `create ${name}: ${r.text}`);
    return this.record('add', name, r.body.metadata.resourceVersion as string);
  }

  async update(name: string): Promise<Write> {
    const r = await api(this.url, `/api/v1/namespaces/${this.ns}/configmaps/${name}`,
      json('PATCH', { data: { n: String(this.n++) } }, 'application/merge-patch+json'));
    assert.equal(r.status, 200, `update ${name}: ${r.text}`);
    return this.record('update', name, r.body.metadata.resourceVersion as string);
  }

  async delete(name: string): Promise<Write> {
    const r = await api(this.url, `/api/v1/namespaces/${this.ns}/configmaps/${name}`, { method: 'DELETE' });
    assert.equal(r.status, 200, `delete ${name}: ${r.text}`);
    return this.record('delete', name, '');
  }

  private record(type: Write['type'], name: string, rv: string): Write {
    const w = { type, name, rv };
    if (this.ns === NS) this.writes.push(w);
    return w;
  }
}

async function listItems(url: string): Promise<Item[]> {
  const r = await api(url, `/api/v1/namespaces/${NS}/configmaps`);
  assert.equal(r.status, 200, r.text);
  return (r.body.items as { metadata: { name: string; resourceVersion: string } }[])
    .map((i) => ({ name: i.metadata.name, rv: i.metadata.resourceVersion }))
    .sort(byName);
}

/** Waits until the informer's cache equals a LIST (names and resourceVersions), else fails with the diff. */
async function assertInSync(inf: NodeInformer, url: string, phase: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const listed = await listItems(url);
    const store = inf.dump();
    if (JSON.stringify(store) === JSON.stringify(listed)) return;
    if (Date.now() > deadline) {
      assert.deepEqual(store, listed, `${phase}: informer cache differs from LIST; errors: ${inf.errors.map(String).join('; ')}`);
    }
    await sleep(100);
  }
}

/** Per object, callbacks in strictly increasing resourceVersion order; added before changed. */
function assertPerObjectOrder(events: InformerEvent[]): void {
  const last = new Map<string, { rv: bigint; deleted: boolean }>();
  for (const [i, e] of events.entries()) {
    const rv = BigInt(e.rv);
    const prev = last.get(e.name);
    const where = `event #${i} ${JSON.stringify(e)} after ${prev ? `rv ${prev.rv}${prev.deleted ? ' (deleted)' : ''}` : 'nothing'}`;
    if (e.event === 'add') assert.ok(prev === undefined || prev.deleted, `add of a live object: ${where}`);
    else assert.ok(prev !== undefined && !prev.deleted, `${e.event} of an unknown object: ${where}`);
    if (prev !== undefined) {
      // A delete found by a relist carries the last state the informer knew.
      if (e.event === 'delete' && e.fromList) assert.ok(rv >= prev.rv, `relist delete older than the object: ${where}`);
      else assert.ok(rv > prev.rv, `resourceVersion not increasing: ${where}`);
    }
    last.set(e.name, { rv, deleted: e.event === 'delete' });
  }
}

function summary(events: readonly (InformerEvent | Write)[]): string[] {
  return events.map((e) => ('event' in e ? `${e.event} ${e.name} ${e.event === 'delete' ? '' : e.rv}` : `${e.type} ${e.name} ${e.type === 'delete' ? '' : e.rv}`));
}

function configMapRequests(proxy: TcpProxy, since = 0): { target: string; list: boolean; rv: string | null }[] {
  return proxy.requests()
    .filter((r) => r.at >= since && r.method === 'GET' && r.target.startsWith(`/api/v1/namespaces/${NS}/configmaps`))
    .map((r) => {
      const q = new URL(r.target, 'http://x').searchParams;
      return { target: r.target, list: q.get('watch') !== 'true', rv: q.get('resourceVersion') };
    });
}

// ---------------------------------------------------------------------------------------------

for (const backend of allBackends()) describe(`@kubernetes/client-node informer stays in sync with Capstan (${backend.name})`, () => {
  const cleanups: (() => Promise<void>)[] = [];

  before(async () => {
    k8s = await loadClientNode();
  });

  after(async () => {
    for (const c of cleanups.reverse()) await c();
    await backend.stop();
  });

  async function setup(opts: { config?: Partial<ServerConfig>; historyMaxEvents?: number; preexisting?: string[] } = {}): Promise<{ env: Env; inf: NodeInformer; writer: Writer }> {
    const env = await startEnv(opts.config ?? {}, await backend.open({ historyMaxEvents: opts.historyMaxEvents }));
    cleanups.push(() => env.close());
    const writer = new Writer(env.server.url);
    for (const name of opts.preexisting ?? []) await writer.create(name);
    await new Writer(env.server.url, 'default').create('elsewhere');
    const inf = new NodeInformer(env.kubeconfig);
    cleanups.push(() => inf.stop());
    await inf.start();
    return { env, inf, writer };
  }

  test('initial list, then creates, updates and deletes arrive in order; cache equals LIST after each phase', async () => {
    const pre = ['pre-a', 'pre-b', 'pre-c', 'pre-d', 'pre-e'];
    const { env, inf, writer } = await setup({ preexisting: pre });
    const url = env.server.url;

    assert.deepEqual(summary(inf.events), summary(writer.writes), 'initial adds, in LIST order');
    await assertInSync(inf, url, 'after initial list');

    const phase = async (name: string, run: () => Promise<Write[]>): Promise<void> => {
      const from = inf.events.length;
      const done = await run();
      await inf.waitFor(`${name} events`, () => inf.events.length >= from + done.length);
      await sleep(200);
      assert.deepEqual(summary(inf.events.slice(from)), summary(done), `${name}: callbacks`);
      await assertInSync(inf, url, `after ${name}`);
    };
    await phase('creates', async () => {
      await Promise.all(['new-1', 'new-2', 'new-3', 'new-4', 'new-5'].map((n) => writer.create(n)));
      // Concurrent creates are acknowledged in any order; the watch delivers them in version order.
      return writer.writes.slice(-5).sort((a, b) => Number(a.rv) - Number(b.rv));
    });
    await phase('updates', async () => {
      const out: Write[] = [];
      for (const n of [...pre, 'new-1', 'new-2']) out.push(await writer.update(n));
      return out;
    });
    await phase('deletes', async () => {
      const out: Write[] = [];
      for (const n of ['pre-a', 'new-3', 'pre-e']) out.push(await writer.delete(n));
      return out;
    });
    await phase('re-create of a deleted name', async () => [await writer.create('pre-a'), await writer.update('pre-a')]);

    assertPerObjectOrder(inf.events);
    assert.deepEqual(inf.errors, []);
    assert.equal(configMapRequests(env.proxy).filter((r) => r.list).length, 1, 'one list, then the watch');
  });

  test('server-side watch timeouts: the informer re-watches from its last resourceVersion and misses nothing', async () => {
    const { env, inf, writer } = await setup({ config: { minRequestTimeoutSeconds: 1 }, preexisting: ['a', 'b', 'c'] });
    const start = inf.events.length;
    const before = writer.writes.length;
    const since = Date.now();
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (let i = 0; i < 40; i++) {
      const name = names[i % names.length] as string;
      const live = new Set((await listItems(env.server.url)).map((x) => x.name));
      if (!live.has(name)) await writer.create(name);
      else if (i % 7 === 6) await writer.delete(name);
      else await writer.update(name);
      await sleep(100);
    }
    await assertInSync(inf, env.server.url, 'after writes across watch timeouts');
    await sleep(300);
    assert.deepEqual(summary(inf.events.slice(start)), summary(writer.writes.slice(before)), 'every write seen exactly once, in order');
    assertPerObjectOrder(inf.events);
    const requests = configMapRequests(env.proxy, since);
    const rewatches = requests.filter((r) => !r.list);
    assert.ok(rewatches.length >= 2, `the server should have ended watches after 1-2 s: ${JSON.stringify(requests)}`);
    for (const r of rewatches) assert.ok(r.rv !== null && r.rv !== '' && r.rv !== '0', `re-watch without a resourceVersion: ${r.target}`);
    assert.deepEqual(requests.filter((r) => r.list), [], 'no relist after a watch timeout');
    assert.deepEqual(inf.errors, [], 'a server-side timeout is a clean end of the watch');
  });

  test('cut connections while writes continue: re-watch from the last resourceVersion, no duplicate or missed event', async () => {
    const { env, inf, writer } = await setup({ preexisting: ['a', 'b', 'c', 'd'] });
    const start = inf.events.length;
    const before = writer.writes.length;
    const since = Date.now();
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (let i = 0; i < 60; i++) {
      const name = names[i % names.length] as string;
      const live = new Set((await listItems(env.server.url)).map((x) => x.name));
      if (!live.has(name)) await writer.create(name);
      else if (i % 11 === 10) await writer.delete(name);
      else await writer.update(name);
      if (i % 20 === 19) {
        env.proxy.cutAll();
        await sleep(300);
      } else {
        await sleep(15);
      }
    }
    await assertInSync(inf, env.server.url, 'after cuts');
    await sleep(300);
    assertPerObjectOrder(inf.events);
    assert.deepEqual(summary(inf.events.slice(start)), summary(writer.writes.slice(before)), 'every write seen exactly once, in order');
    const requests = configMapRequests(env.proxy, since);
    assert.ok(requests.filter((r) => !r.list).length >= 3, `a re-watch after each cut: ${JSON.stringify(requests)}`);
    assert.deepEqual(requests.filter((r) => r.list), [], 'watches resumed from their resourceVersion, without relisting');
  });

  test('410 relist: history overrun while the client is cut off; it relists, sees deletions, ends in sync', async (t) => {
    const pre = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'];
    const { env, inf, writer } = await setup({ historyMaxEvents: 20, preexisting: pre });
    const url = env.server.url;
    const marker = await writer.update('k0');
    await inf.waitFor('marker update', () => inf.events.some((e) => e.rv === marker.rv));
    const lastRv = marker.rv;

    env.proxy.pause('hold');
    const since = Date.now();
    const deleted = ['k1', 'k2', 'k3'];
    for (const n of deleted) await writer.delete(n);
    for (const n of ['n0', 'n1', 'n2', 'n3']) await writer.create(n);
    await writer.delete('n3');
    for (let i = writer.writes.length; i < 58; i++) await writer.update(['k4', 'k5', 'n0', 'n1'][i % 4] as string);
    const expired = await api(url, `/api/v1/namespaces/${NS}/configmaps?watch=true&resourceVersion=${lastRv}&timeoutSeconds=1`);
    assert.match(expired.text, /"code":410/, `watch from ${lastRv} after 50 writes should be Expired: ${expired.text}`);

    const from = inf.events.length;
    env.proxy.resume();
    await assertInSync(inf, url, 'after 410 relist', 20_000);
    await sleep(200);
    const events = inf.events.slice(from);
    assertPerObjectOrder(inf.events);

    // Deleted objects are reported by the relist, with the last state the informer had.
    assert.deepEqual(events.filter((e) => e.event === 'delete').map((e) => e.name).sort(), deleted);
    assert.ok(events.every((e) => e.fromList), `everything after the gap comes from the relist: ${JSON.stringify(events)}`);
    assert.ok(!inf.events.some((e) => e.name === 'n3'), 'an object created and deleted during the gap is not reported');
    assert.deepEqual(events.filter((e) => e.event === 'add').map((e) => e.name).sort(), ['n0', 'n1', 'n2']);
    assert.deepEqual(events.filter((e) => e.event === 'update').map((e) => e.name).sort(), ['k4', 'k5'], 'only changed objects are updates');

    const requests = configMapRequests(env.proxy, since);
    t.diagnostic(`requests after the pause: ${requests.map((r) => r.target).join(' | ')}`);
    const rewatch = requests.findIndex((r) => !r.list && r.rv === lastRv);
    assert.ok(rewatch >= 0, `a re-watch from ${lastRv}: ${JSON.stringify(requests)}`);
    assert.ok(requests.slice(rewatch + 1).some((r) => r.list), `a relist after the 410: ${JSON.stringify(requests)}`);

    const next = await writer.update('k4');
    await inf.waitFor('update after relist', () => inf.events.some((e) => e.rv === next.rv));
    await assertInSync(inf, url, 'after relist and one more write');
  });
});
