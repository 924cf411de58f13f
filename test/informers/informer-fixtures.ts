/**
 * What the informer conformance tests (client-go-informer.test.ts, client-node-informer.test.ts)
 * share: a Capstan server behind a TCP proxy with a kubeconfig for the proxy, a writer of ConfigMaps
 * that records what the server acknowledged, a direct LIST to compare informer stores with, and the
 * checks on the callbacks and on the requests that reached the server.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerConfig } from '../../src/config/server-config.js';
import { kubeconfigFor } from '../../src/cli/kubeconfig.js';
import type { Storage } from '../../src/storage/storage.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

/** The namespace the informers watch and the writer writes to. */
export const NS = 'informers';

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** An object as an informer's store or a LIST holds it. */
export interface Item {
  name: string;
  rv: string;
}

/** Orders items by name. */
export function byName(a: Item, b: Item): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** A request init with a JSON body. */
export function json(method: string, body: unknown, contentType = 'application/json'): RequestInit {
  return { method, headers: { 'content-type': contentType }, body: JSON.stringify(body) };
}

// ---------------------------------------------------------------------------------------------
// Server, proxy and writes

export interface Env {
  server: TestServer;
  proxy: TcpProxy;
  /** A kubeconfig pointing at the proxy. */
  kubeconfig: string;
  close(): Promise<void>;
}

/** Starts a server on `storage`, a TCP proxy in front of it and a kubeconfig for the proxy; creates namespace NS. */
export async function startEnv(storage: Storage, config: Partial<ServerConfig> = {}): Promise<Env> {
  const server = await startTestServer(config, storage);
  const proxy = await startTcpProxy(server.url);
  const dir = mkdtempSync(join(tmpdir(), 'capstan-informer-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigFor(proxy.url));
  const ns = await api(server.url, '/api/v1/namespaces', json('POST', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
  assert.equal(ns.status, 201, ns.text);
  return {
    server,
    proxy,
    kubeconfig,
    close: async () => {
      await proxy.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A write as acknowledged by the server. */
export interface Write {
  type: 'add' | 'update' | 'delete';
  name: string;
  rv: string;
}

/** Writes ConfigMaps directly to the server (not through the proxy) and remembers what it did in NS. */
export class Writer {
  readonly writes: Write[] = [];
  private n = 0;
  constructor(
    readonly url: string,
    private readonly ns = NS,
  ) {}

  async create(name: string): Promise<Write> {
    const r = await api(
      this.url,
      `/api/v1/namespaces/${this.ns}/configmaps`,
      json('POST', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: String(this.n++) } }),
    );
    assert.equal(r.status, 201, `create ${name}: ${r.text}`);
    return this.record('add', name, r.body.metadata.resourceVersion as string);
  }

  async update(name: string): Promise<Write> {
    const r = await api(
      this.url,
      `/api/v1/namespaces/${this.ns}/configmaps/${name}`,
      json('PATCH', { data: { n: String(this.n++) } }, 'application/merge-patch+json'),
    );
    assert.equal(r.status, 200, `update ${name}: ${r.text}`);
    return this.record('update', name, r.body.metadata.resourceVersion as string);
  }

  async delete(name: string): Promise<Write> {
    const r = await api(this.url, `/api/v1/namespaces/${this.ns}/configmaps/${name}`, { method: 'DELETE' });
    assert.equal(r.status, 200, `delete ${name}: ${r.text}`);
    // The DELETED event carries the deletion's version, which the response does not tell.
    return this.record('delete', name, '');
  }

  private record(type: Write['type'], name: string, rv: string): Write {
    const w = { type, name, rv };
    if (this.ns === NS) this.writes.push(w);
    return w;
  }
}

/**
 * A Writer for NS that has created `preexisting`, after which one ConfigMap goes to namespace
 * default: objects of another namespace must never reach a namespaced informer.
 */
export async function seedWriter(url: string, preexisting: readonly string[] = []): Promise<Writer> {
  const writer = new Writer(url);
  for (const name of preexisting) await writer.create(name);
  await new Writer(url, 'default').create('elsewhere');
  return writer;
}

/**
 * The write phases of the in-order test, given to `phase` one by one: five concurrent creates,
 * updates of `pre` and two new objects, three deletes, and the re-create of a deleted name.
 * Each phase's `run` returns the writes whose callbacks it expects, in watch order.
 */
export async function writePhases(writer: Writer, pre: readonly string[], phase: (name: string, run: () => Promise<Write[]>) => Promise<void>): Promise<void> {
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
}

/** What the helpers below need of an informer under test. */
export interface WatchedInformer {
  readonly events: readonly Callback[];
  waitFor(what: string, cond: () => boolean): Promise<void>;
}

/** Where a stretch of writes begins: the informer's callback count, the writer's write count and the time. */
export function markStart(inf: WatchedInformer, writer: Writer): { start: number; before: number; since: number } {
  return { start: inf.events.length, before: writer.writes.length, since: Date.now() };
}

/** Updates k0 and waits for the informer's callback of it; returns the update's resourceVersion. */
export async function writeMarker(inf: WatchedInformer, writer: Writer): Promise<string> {
  const marker = await writer.update('k0');
  await inf.waitFor('marker update', () => inf.events.some((e) => e.rv === marker.rv));
  return marker.rv;
}

/**
 * The gap of the 410 test (over k0-k7): holds the client's connections at the proxy, then deletes
 * `deleted`, creates n0-n3, deletes n3 again and updates k4, k5, n0 and n1 until 58 writes are
 * recorded; asserts that a watch from `lastRv`, which has left the history, is 410 Expired; then
 * lets the client through again. Returns when the gap began and how many callbacks came before the resume.
 */
export async function overrunWhileCutOff(
  env: Env,
  writer: Writer,
  inf: WatchedInformer,
  deleted: readonly string[],
  lastRv: string,
): Promise<{ since: number; from: number }> {
  env.proxy.pause('hold');
  const since = Date.now();
  for (const n of deleted) await writer.delete(n);
  for (const n of ['n0', 'n1', 'n2', 'n3']) await writer.create(n);
  await writer.delete('n3'); // created and deleted while cut off: never seen at all
  for (let i = writer.writes.length; i < 58; i++) await writer.update(['k4', 'k5', 'n0', 'n1'][i % 4]);
  // The informer's version has left the history: a watch from it is 410 Expired.
  const expired = await api(env.server.url, `/api/v1/namespaces/${NS}/configmaps?watch=true&resourceVersion=${lastRv}&timeoutSeconds=1`);
  assert.match(expired.text, /"code":410/, `watch from ${lastRv} after 50 writes should be Expired: ${expired.text}`);
  const from = inf.events.length;
  env.proxy.resume();
  return { since, from };
}

/**
 * `count` writes cycling over `names`: the i-th creates its object when a LIST of NS does not hold
 * it, otherwise deletes it when i % deleteEvery === deleteEvery - 1, else updates it; `pause(i)`
 * runs after each write.
 */
export async function churn(writer: Writer, names: readonly string[], count: number, deleteEvery: number, pause: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; i < count; i++) {
    const name = names[i % names.length];
    const live = new Set((await listItems(writer.url)).items.map((x) => x.name));
    if (!live.has(name)) await writer.create(name);
    else if (i % deleteEvery === deleteEvery - 1) await writer.delete(name);
    else await writer.update(name);
    await pause(i);
  }
}

/** A `pause` for churn: after every 20th write cuts all connections through `proxy` and waits `cutPauseMs`, else waits 15 ms. */
export function cutEvery20th(proxy: TcpProxy, cutPauseMs: number): (i: number) => Promise<void> {
  return async (i) => {
    if (i % 20 === 19) {
      proxy.cutAll();
      await sleep(cutPauseMs);
    } else {
      await sleep(15);
    }
  };
}

/** The namespace's ConfigMaps by a direct LIST, sorted by name. */
export async function listItems(url: string): Promise<{ items: Item[]; resourceVersion: string }> {
  const r = await api(url, `/api/v1/namespaces/${NS}/configmaps`);
  assert.equal(r.status, 200, r.text);
  const items = (r.body.items as { metadata: { name: string; resourceVersion: string } }[])
    .map((i) => ({ name: i.metadata.name, rv: i.metadata.resourceVersion }))
    .sort(byName);
  return { items, resourceVersion: r.body.metadata.resourceVersion as string };
}

// ---------------------------------------------------------------------------------------------
// Checks

/**
 * Polls `snapshot` (the informer's store and a LIST) every 100 ms until both are equal and returns
 * the store; after `timeoutMs` fails with the diff and `message()`.
 */
export async function waitForEqualStore(snapshot: () => Promise<{ store: Item[]; listed: Item[] }>, message: () => string, timeoutMs: number): Promise<Item[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { store, listed } = await snapshot();
    if (JSON.stringify(store) === JSON.stringify(listed)) return store;
    if (Date.now() > deadline) {
      assert.deepEqual(store, listed, message());
    }
    await sleep(100);
  }
}

/** An informer callback: what happened to which object, at which resourceVersion. */
export interface Callback {
  event: 'add' | 'update' | 'delete';
  name: string;
  rv: string;
}

/**
 * Per object, callbacks come in strictly increasing resourceVersion order; an object is added before
 * it changes. A delete for which `lastKnown` holds carries the last version the informer knew rather
 * than the deletion's, so it may repeat the previous one; `lastKnownLabel` names such deletes in failures.
 */
export function checkPerObjectOrder<E extends Callback>(events: readonly E[], lastKnown: (e: E) => boolean, lastKnownLabel: string): void {
  const last = new Map<string, { rv: bigint; deleted: boolean }>();
  for (const [i, e] of events.entries()) {
    const rv = BigInt(e.rv);
    const prev = last.get(e.name);
    const where = `event #${i} ${JSON.stringify(e)} after ${prev ? `rv ${prev.rv}${prev.deleted ? ' (deleted)' : ''}` : 'nothing'}`;
    if (e.event === 'add') assert.ok(prev === undefined || prev.deleted, `add of a live object: ${where}`);
    else assert.ok(prev !== undefined && !prev.deleted, `${e.event} of an unknown object: ${where}`);
    if (prev !== undefined) {
      if (e.event === 'delete' && lastKnown(e)) assert.ok(rv >= prev.rv, `${lastKnownLabel} older than the object: ${where}`);
      else assert.ok(rv > prev.rv, `resourceVersion not increasing: ${where}`);
    }
    last.set(e.name, { rv, deleted: e.event === 'delete' });
  }
}

/** Callbacks and writes as comparable (type, name, rv) triples; deletes without their version. */
export function summary(events: readonly (Callback | Write)[]): string[] {
  return events.map((e) =>
    'event' in e ? `${e.event} ${e.name} ${e.event === 'delete' ? '' : e.rv}` : `${e.type} ${e.name} ${e.type === 'delete' ? '' : e.rv}`,
  );
}

/** A GET of NS's ConfigMaps seen by the proxy. */
export interface ConfigMapRequest {
  target: string;
  list: boolean;
  rv: string | null;
  at?: number;
}

/**
 * The GETs of NS's ConfigMaps that went through `proxy` from `since` on, each marked a list when
 * `isList` says so for its query, with the resourceVersion it asked for (and its time when `withTime`).
 */
export function configMapRequests(proxy: TcpProxy, since: number, isList: (query: URLSearchParams) => boolean, withTime = false): ConfigMapRequest[] {
  return proxy
    .requests()
    .filter((r) => r.at >= since && r.method === 'GET' && r.target.startsWith(`/api/v1/namespaces/${NS}/configmaps`))
    .map((r) => {
      const q = new URL(r.target, 'http://x').searchParams;
      return { target: r.target, list: isList(q), rv: q.get('resourceVersion'), ...(withTime ? { at: r.at } : {}) };
    });
}
