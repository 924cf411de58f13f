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
import type { Informer, ObjectCache, V1ConfigMap, V1ConfigMapList } from '@kubernetes/client-node';
import type { ServerConfig } from '../../src/config/server-config.js';
import { allBackends } from '../helpers/backends.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';
import {
  NS,
  byName,
  checkPerObjectOrder,
  churn,
  configMapRequests,
  cutEvery20th,
  listItems,
  overrunWhileCutOff,
  seedWriter,
  sleep,
  startEnv,
  summary,
  markStart,
  waitForEqualStore,
  writeMarker,
  writePhases,
  type Writer,
  type ConfigMapRequest,
  type Env,
  type Item,
  type Write,
} from './informer-fixtures.js';

// eslint-disable-next-line @typescript-eslint/consistent-type-imports -- the module is imported dynamically in `before`
type ClientNode = typeof import('@kubernetes/client-node');
/** Loaded in `before`, so that a client-node that cannot load on this Node.js fails with a clear reason. */
let k8s: ClientNode;

async function loadClientNode(): Promise<ClientNode> {
  try {
    return await import('@kubernetes/client-node');
  } catch (err) {
    throw new Error(
      `@kubernetes/client-node cannot be loaded on Node.js ${process.version}: ${err instanceof Error ? err.message : String(err)}\n` +
        'client-node 2.x depends on undici 8, which needs Node.js >= 22.19 (undici 8 uses zlib zstd and ' +
        'worker_threads.markAsUncloneable). On Node.js 20 use client-node 1.x, or pin undici 7 (package.json ' +
        '"overrides": {"undici": "^7.16.0"}), or run the tests on Node.js 22.19+.',
    );
  }
}

interface InformerEvent {
  event: 'add' | 'update' | 'delete';
  name: string;
  rv: string;
  /** Reported by a (re)list rather than by a watch event. */
  fromList: boolean;
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
      setImmediate(() => {
        this.listing = false;
      });
      return list;
    };
    this.informer = k8s.makeInformer(kc, `/api/v1/namespaces/${NS}/configmaps`, listFn);
    const record =
      (event: InformerEvent['event']) =>
      (obj: V1ConfigMap): void => {
        this.events.push({ event, name: obj.metadata?.name ?? '', rv: obj.metadata?.resourceVersion ?? '', fromList: this.listing });
      };
    this.informer.on(k8s.ADD, record('add'));
    this.informer.on(k8s.UPDATE, record('update'));
    this.informer.on(k8s.DELETE, record('delete'));
    this.informer.on(k8s.ERROR, (err: unknown) => {
      this.errors.push(err);
      if (!this.stopped)
        setTimeout(() => {
          if (!this.stopped) void this.informer.start();
        }, 100);
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
    return this.informer
      .list(NS)
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
// Checks

/** Waits until the informer's cache equals a LIST (names and resourceVersions), else fails with the diff. */
async function assertInSync(inf: NodeInformer, url: string, phase: string, timeoutMs = 15_000): Promise<void> {
  await waitForEqualStore(
    async () => {
      const listed = (await listItems(url)).items;
      return { store: inf.dump(), listed };
    },
    () => `${phase}: informer cache differs from LIST; errors: ${inf.errors.map(String).join('; ')}`,
    timeoutMs,
  );
}

/** Per object, callbacks in strictly increasing resourceVersion order; added before changed. */
function assertPerObjectOrder(events: InformerEvent[]): void {
  // A delete found by a relist carries the last state the informer knew.
  checkPerObjectOrder(events, (e) => e.fromList, 'relist delete');
}

/** The GETs of NS's ConfigMaps through `proxy` from `since` on; client-node lists with a plain GET. */
function seenRequests(proxy: TcpProxy, since = 0): ConfigMapRequest[] {
  return configMapRequests(proxy, since, (q) => q.get('watch') !== 'true');
}

// ---------------------------------------------------------------------------------------------

for (const backend of allBackends())
  describe(`@kubernetes/client-node informer stays in sync with Capstan (${backend.name})`, () => {
    const cleanups: (() => Promise<void>)[] = [];

    before(async () => {
      k8s = await loadClientNode();
    });

    after(async () => {
      for (const c of cleanups.reverse()) await c();
      await backend.stop();
    });

    async function setup(
      opts: { config?: Partial<ServerConfig>; historyMaxEvents?: number; preexisting?: string[] } = {},
    ): Promise<{ env: Env; inf: NodeInformer; writer: Writer }> {
      const env = await startEnv(await backend.open({ historyMaxEvents: opts.historyMaxEvents }), opts.config ?? {});
      cleanups.push(() => env.close());
      const writer = await seedWriter(env.server.url, opts.preexisting);
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
      await writePhases(writer, pre, phase);

      assertPerObjectOrder(inf.events);
      assert.deepEqual(inf.errors, []);
      assert.equal(seenRequests(env.proxy).filter((r) => r.list).length, 1, 'one list, then the watch');
    });

    test('server-side watch timeouts: the informer re-watches from its last resourceVersion and misses nothing', async () => {
      const { env, inf, writer } = await setup({ config: { minRequestTimeoutSeconds: 1 }, preexisting: ['a', 'b', 'c'] });
      const { start, before, since } = markStart(inf, writer);
      await churn(writer, ['a', 'b', 'c', 'd', 'e'], 40, 7, () => sleep(100));
      await assertInSync(inf, env.server.url, 'after writes across watch timeouts');
      await sleep(300);
      assert.deepEqual(summary(inf.events.slice(start)), summary(writer.writes.slice(before)), 'every write seen exactly once, in order');
      assertPerObjectOrder(inf.events);
      const requests = seenRequests(env.proxy, since);
      const rewatches = requests.filter((r) => !r.list);
      assert.ok(rewatches.length >= 2, `the server should have ended watches after 1-2 s: ${JSON.stringify(requests)}`);
      for (const r of rewatches) assert.ok(r.rv !== null && r.rv !== '' && r.rv !== '0', `re-watch without a resourceVersion: ${r.target}`);
      assert.deepEqual(
        requests.filter((r) => r.list),
        [],
        'no relist after a watch timeout',
      );
      assert.deepEqual(inf.errors, [], 'a server-side timeout is a clean end of the watch');
    });

    test('cut connections while writes continue: re-watch from the last resourceVersion, no duplicate or missed event', async () => {
      const { env, inf, writer } = await setup({ preexisting: ['a', 'b', 'c', 'd'] });
      const { start, before, since } = markStart(inf, writer);
      await churn(writer, ['a', 'b', 'c', 'd', 'e', 'f'], 60, 11, cutEvery20th(env.proxy, 300));
      await assertInSync(inf, env.server.url, 'after cuts');
      await sleep(300);
      assertPerObjectOrder(inf.events);
      assert.deepEqual(summary(inf.events.slice(start)), summary(writer.writes.slice(before)), 'every write seen exactly once, in order');
      const requests = seenRequests(env.proxy, since);
      assert.ok(requests.filter((r) => !r.list).length >= 3, `a re-watch after each cut: ${JSON.stringify(requests)}`);
      assert.deepEqual(
        requests.filter((r) => r.list),
        [],
        'watches resumed from their resourceVersion, without relisting',
      );
    });

    test('410 relist: history overrun while the client is cut off; it relists, sees deletions, ends in sync', async (t) => {
      const pre = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'];
      const { env, inf, writer } = await setup({ historyMaxEvents: 20, preexisting: pre });
      const url = env.server.url;
      const lastRv = await writeMarker(inf, writer);

      const deleted = ['k1', 'k2', 'k3'];
      const { since, from } = await overrunWhileCutOff(env, writer, inf, deleted, lastRv);
      await assertInSync(inf, url, 'after 410 relist', 20_000);
      await sleep(200);
      const events = inf.events.slice(from);
      assertPerObjectOrder(inf.events);

      // Deleted objects are reported by the relist, with the last state the informer had.
      assert.deepEqual(
        events
          .filter((e) => e.event === 'delete')
          .map((e) => e.name)
          .sort(),
        deleted,
      );
      assert.ok(
        events.every((e) => e.fromList),
        `everything after the gap comes from the relist: ${JSON.stringify(events)}`,
      );
      assert.ok(!inf.events.some((e) => e.name === 'n3'), 'an object created and deleted during the gap is not reported');
      assert.deepEqual(
        events
          .filter((e) => e.event === 'add')
          .map((e) => e.name)
          .sort(),
        ['n0', 'n1', 'n2'],
      );
      assert.deepEqual(
        events
          .filter((e) => e.event === 'update')
          .map((e) => e.name)
          .sort(),
        ['k4', 'k5'],
        'only changed objects are updates',
      );

      const requests = seenRequests(env.proxy, since);
      t.diagnostic(`requests after the pause: ${requests.map((r) => r.target).join(' | ')}`);
      const rewatch = requests.findIndex((r) => !r.list && r.rv === lastRv);
      assert.ok(rewatch >= 0, `a re-watch from ${lastRv}: ${JSON.stringify(requests)}`);
      assert.ok(
        requests.slice(rewatch + 1).some((r) => r.list),
        `a relist after the 410: ${JSON.stringify(requests)}`,
      );

      const next = await writer.update('k4');
      await inf.waitFor('update after relist', () => inf.events.some((e) => e.rv === next.rv));
      await assertInSync(inf, url, 'after relist and one more write');
    });
  });
