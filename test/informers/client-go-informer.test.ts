/**
 * Conformance of a real client-go SharedInformer (test/informers/go-informer, client-go v0.36) with
 * Capstan: initial list (client-go 1.35+ streams it with sendInitialEvents), then writes, deletions,
 * server-side watch timeouts, cut connections and a 410 relist, with the informer's store compared to
 * a direct LIST after each phase. Clients reach the server through a TCP proxy that can cut them off.
 * client-go 0.36 hands callbacks over in watch order across objects (its InOrderInformers gate is GA,
 * a RealFIFO), so watch phases compare the callback sequence with the write sequence exactly.
 *
 * The Go program is built by scripts/build-go-informer.sh into ~/.cache/capstan/go-informer (or
 * $CAPSTAN_GO_CACHE), keyed by the hash of its sources. The first build downloads modules and compiles
 * client-go (minutes on this machine): run the script before the suite, since node's --test-timeout
 * covers a whole test file, build included.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { kubeconfigFor } from '../../src/cli/kubeconfig.js';
import type { Storage } from '../../src/storage/storage.js';
import { allBackends } from '../helpers/backends.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BUILD_SCRIPT = join(REPO, 'scripts', 'build-go-informer.sh');
const NS = 'informers';
const BUILD_TIMEOUT_MS = 9 * 60_000;

// ---------------------------------------------------------------------------------------------
// Building the Go program

/** Builds the Go informer with scripts/build-go-informer.sh (cached by source hash) and returns the binary's path. */
async function buildGoInformer(): Promise<string> {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error !== undefined || go.status !== 0) {
    throw new Error(`Go toolchain not found ("go version" failed: ${go.error?.message ?? go.stderr}). The client-go informer `
      + 'conformance test needs Go on PATH to build test/informers/go-informer.');
  }
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    const timer = setTimeout(() => { err += '\n(build timed out)'; child.kill('SIGKILL'); }, BUILD_TIMEOUT_MS);
    child.on('error', (e) => { err += String(e); });
    child.on('close', (c) => { clearTimeout(timer); resolve({ code: c, stdout: out, stderr: err }); });
  });
  const binary = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || binary === '' || !existsSync(binary)) throw new Error(`${BUILD_SCRIPT} failed (exit ${String(code)}):\n${stderr}`);
  return binary;
}

// ---------------------------------------------------------------------------------------------
// The running informer

interface Item { name: string; rv: string }
interface InformerEvent { event: 'add' | 'update' | 'delete'; name: string; rv: string; oldRv?: string; tombstone?: boolean }
type Line = InformerEvent | { event: 'synced' } | { event: 'dump'; items?: Item[] } | { event: 'watchError'; error: string };

class GoInformer {
  readonly events: InformerEvent[] = [];
  readonly watchErrors: string[] = [];
  synced = false;
  private stderrText = '';
  private readonly dumps: ((items: Item[]) => void)[] = [];
  private exited: string | undefined;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (text) => this.onLine(text));
    child.stderr.on('data', (d: Buffer) => { this.stderrText += d.toString(); });
    child.on('exit', (code, signal) => { this.exited = `exited with ${String(code ?? signal)}`; });
  }

  static start(binary: string, kubeconfig: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): GoInformer {
    const child = spawn(binary, ['--kubeconfig', kubeconfig, '--namespace', NS, '-v=4', ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    return new GoInformer(child);
  }

  private onLine(text: string): void {
    let line: Line;
    try {
      line = JSON.parse(text) as Line;
    } catch {
      this.stderrText += `(stdout) ${text}\n`;
      return;
    }
    if (line.event === 'synced') this.synced = true;
    else if (line.event === 'dump') this.dumps.shift()?.(line.items ?? []);
    else if (line.event === 'watchError') this.watchErrors.push(line.error);
    else this.events.push(line);
  }

  stderr(): string {
    return this.stderrText;
  }

  /** The informer's store, sorted by name. */
  dump(): Promise<Item[]> {
    if (this.exited !== undefined) return Promise.reject(new Error(`go-informer ${this.exited}:\n${this.stderrText.slice(-4000)}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('go-informer did not answer "dump"')), 5000);
      this.dumps.push((items) => { clearTimeout(timer); resolve(items); });
      this.child.stdin.write('dump\n');
    });
  }

  async waitFor(what: string, cond: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (this.exited !== undefined) throw new Error(`go-informer ${this.exited} while waiting for ${what}:\n${this.stderrText.slice(-4000)}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr tail:\n${this.stderrText.slice(-4000)}`);
      await sleep(20);
    }
  }

  async stop(): Promise<void> {
    if (this.exited !== undefined) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end('quit\n');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 3000);
    await gone;
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------------------------------------
// Server, proxy and writes

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

interface Env {
  server: TestServer;
  proxy: TcpProxy;
  /** A kubeconfig pointing at the proxy. */
  kubeconfig: string;
  close(): Promise<void>;
}

async function startEnv(storage: Storage): Promise<Env> {
  const server = await startTestServer({}, storage);
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

function json(method: string, body: unknown, contentType = 'application/json'): RequestInit {
  return { method, headers: { 'content-type': contentType }, body: JSON.stringify(body) };
}

/** A write as acknowledged by the server. */
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
    // The DELETED event carries the deletion's version, which the response does not tell.
    return this.record('delete', name, '');
  }

  private record(type: Write['type'], name: string, rv: string): Write {
    const w = { type, name, rv };
    if (this.ns === NS) this.writes.push(w);
    return w;
  }
}

/** The namespace's ConfigMaps by a direct LIST, sorted by name. */
async function listItems(url: string): Promise<{ items: Item[]; resourceVersion: string }> {
  const r = await api(url, `/api/v1/namespaces/${NS}/configmaps`);
  assert.equal(r.status, 200, r.text);
  const items = (r.body.items as { metadata: { name: string; resourceVersion: string } }[])
    .map((i) => ({ name: i.metadata.name, rv: i.metadata.resourceVersion }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { items, resourceVersion: r.body.metadata.resourceVersion as string };
}

/** Waits until the informer's store equals a LIST (names and resourceVersions), else fails with the diff. */
async function assertInSync(inf: GoInformer, url: string, phase: string, timeoutMs = 15_000): Promise<Item[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [store, listed] = [await inf.dump(), (await listItems(url)).items];
    if (JSON.stringify(store) === JSON.stringify(listed)) return store;
    if (Date.now() > deadline) {
      assert.deepEqual(store, listed, `${phase}: informer store differs from LIST; stderr tail:\n${inf.stderr().slice(-3000)}`);
    }
    await sleep(100);
  }
}

/**
 * Whether `e` is a resync notification: after a relist client-go calls OnUpdate for every object
 * still present, with old and new at the same resourceVersion (listeners without a resync period
 * get them too). They are not changes, so ordering and exactly-once checks leave them out.
 */
function isResync(e: InformerEvent): boolean {
  return e.event === 'update' && e.oldRv === e.rv;
}

/** Per object, callbacks come in strictly increasing resourceVersion order; an object is added before it changes. */
function assertPerObjectOrder(all: InformerEvent[]): void {
  const last = new Map<string, { rv: bigint; deleted: boolean }>();
  const events = all.filter((e) => !isResync(e));
  for (const [i, e] of events.entries()) {
    const rv = BigInt(e.rv);
    const prev = last.get(e.name);
    const where = `event #${i} ${JSON.stringify(e)} after ${prev ? `rv ${prev.rv}${prev.deleted ? ' (deleted)' : ''}` : 'nothing'}`;
    if (e.event === 'add') assert.ok(prev === undefined || prev.deleted, `add of a live object: ${where}`);
    else assert.ok(prev !== undefined && !prev.deleted, `${e.event} of an unknown object: ${where}`);
    if (prev !== undefined) {
      // A tombstone from a relist carries the last version the informer knew, not the deletion's.
      if (e.event === 'delete' && e.tombstone === true) assert.ok(rv >= prev.rv, `tombstone older than the object: ${where}`);
      else assert.ok(rv > prev.rv, `resourceVersion not increasing: ${where}`);
    }
    last.set(e.name, { rv, deleted: e.event === 'delete' });
  }
}

/** Callbacks as comparable (type, name, rv) triples; deletes without their version. */
function summary(events: readonly (InformerEvent | Write)[]): string[] {
  return events.map((e) => ('event' in e ? `${e.event} ${e.name} ${e.event === 'delete' ? '' : e.rv}` : `${e.type} ${e.name} ${e.type === 'delete' ? '' : e.rv}`));
}

function isList(target: string): boolean {
  const q = new URL(target, 'http://x').searchParams;
  return q.get('watch') !== 'true' || q.get('sendInitialEvents') === 'true';
}

function configMapRequests(proxy: TcpProxy, since = 0): { target: string; list: boolean; rv: string | null; at: number }[] {
  return proxy.requests()
    .filter((r) => r.at >= since && r.method === 'GET' && r.target.startsWith(`/api/v1/namespaces/${NS}/configmaps`))
    .map((r) => ({ target: r.target, list: isList(r.target), rv: new URL(r.target, 'http://x').searchParams.get('resourceVersion'), at: r.at }));
}

// ---------------------------------------------------------------------------------------------

/**
 * client-go 1.35+ starts informers with a streaming list (watch with sendInitialEvents=true) and
 * falls back to LIST only when that fails; the WatchListClient gate turned off gives the classic
 * LIST + WATCH reflector that older clients and most controllers in the field still run.
 */
const MODES = [
  { mode: 'streaming list (WatchListClient on, the default)', env: {} },
  { mode: 'LIST then WATCH (KUBE_FEATURE_WatchListClient=false)', env: { KUBE_FEATURE_WatchListClient: 'false' } },
];

let binaryPromise: Promise<string> | undefined;

for (const backend of allBackends()) for (const { mode, env: clientEnv } of MODES) describe(`client-go SharedInformer stays in sync with Capstan (${backend.name}): ${mode}`, () => {
  let binary = '';
  const cleanups: (() => Promise<void>)[] = [];

  before(async () => {
    binaryPromise ??= buildGoInformer();
    binary = await binaryPromise;
  }, { timeout: BUILD_TIMEOUT_MS + 60_000 });

  after(async () => {
    for (const c of cleanups.reverse()) await c();
    await backend.stop();
  });

  async function setup(opts: { historyMaxEvents?: number; args?: string[]; preexisting?: string[] } = {}): Promise<{ env: Env; inf: GoInformer; writer: Writer }> {
    const env = await startEnv(await backend.open({ historyMaxEvents: opts.historyMaxEvents }));
    cleanups.push(() => env.close());
    const writer = new Writer(env.server.url);
    for (const name of opts.preexisting ?? []) await writer.create(name);
    // Objects of another namespace must never reach a namespaced informer.
    await new Writer(env.server.url, 'default').create('elsewhere');
    const inf = GoInformer.start(binary, env.kubeconfig, opts.args, clientEnv);
    cleanups.push(() => inf.stop());
    await inf.waitFor('initial sync', () => inf.synced);
    return { env, inf, writer };
  }

  test('initial list, then creates, updates and deletes arrive in order; store equals LIST after each phase', async () => {
    const pre = ['pre-a', 'pre-b', 'pre-c', 'pre-d', 'pre-e'];
    const { env, inf, writer } = await setup({ preexisting: pre });
    const url = env.server.url;

    // Initial list: exactly the pre-existing objects, as adds with their versions.
    assert.deepEqual([...summary(inf.events)].sort(), [...summary(writer.writes)].sort(), 'initial adds');
    await assertInSync(inf, url, 'after initial list');

    const phase = async (name: string, run: () => Promise<Write[]>): Promise<void> => {
      const from = inf.events.length;
      const done = await run();
      await inf.waitFor(`${name} events`, () => inf.events.length >= from + done.length);
      await sleep(200); // nothing more may arrive
      const got = inf.events.slice(from);
      assert.deepEqual(summary(got), summary(done), `${name}: callbacks`);
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
    // The list is served once; everything after it comes from the watch.
    const lists = configMapRequests(env.proxy).filter((r) => r.list);
    assert.equal(lists.length, 1, `one initial list expected: ${JSON.stringify(configMapRequests(env.proxy))}`);
  });

  test('server-side watch timeouts: the informer re-watches from its last resourceVersion and misses nothing', async () => {
    const { env, inf, writer } = await setup({ preexisting: ['a', 'b', 'c'], args: ['--watch-timeout=1'] });
    const start = inf.events.length;
    const since = Date.now();
    const before = writer.writes.length;
    const names = ['a', 'b', 'c', 'd', 'e'];
    for (let i = 0; i < 36; i++) {
      const name = names[i % names.length] as string;
      const live = new Set((await listItems(env.server.url)).items.map((x) => x.name));
      if (!live.has(name)) await writer.create(name);
      else if (i % 7 === 6) await writer.delete(name);
      else await writer.update(name);
      await sleep(100);
    }
    await assertInSync(inf, env.server.url, 'after writes across watch timeouts');
    await sleep(300);
    const events = inf.events.slice(start);
    assert.deepEqual(summary(events), summary(writer.writes.slice(before)), 'every write seen exactly once, in order');
    assertPerObjectOrder(inf.events);

    const requests = configMapRequests(env.proxy, since);
    const rewatches = requests.filter((r) => !r.list);
    assert.ok(rewatches.length >= 2, `the server should have ended watches after 1 s: ${JSON.stringify(requests)}`);
    for (const r of rewatches) assert.ok(r.rv !== null && r.rv !== '' && r.rv !== '0', `re-watch without a resourceVersion: ${r.target}`);
    assert.deepEqual(requests.filter((r) => r.list), [], 'no relist after a watch timeout');
  });

  test('cut connections while writes continue: re-watch from the last resourceVersion, no duplicate or missed event', async () => {
    const { env, inf, writer } = await setup({ preexisting: ['a', 'b', 'c', 'd'] });
    await sleep(1100); // client-go relists when a watch dies younger than 1 s without events
    const start = inf.events.length;
    const before = writer.writes.length;
    const since = Date.now();
    const names = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (let i = 0; i < 60; i++) {
      const name = names[i % names.length] as string;
      const live = new Set((await listItems(env.server.url)).items.map((x) => x.name));
      if (!live.has(name)) await writer.create(name);
      else if (i % 11 === 10) await writer.delete(name);
      else await writer.update(name);
      if (i % 20 === 19) {
        env.proxy.cutAll();
        await sleep(1200);
      } else {
        await sleep(15);
      }
    }
    await assertInSync(inf, env.server.url, 'after cuts');
    await sleep(300);
    const events = inf.events.slice(start);
    assertPerObjectOrder(inf.events);
    const requests = configMapRequests(env.proxy, since);
    assert.ok(requests.filter((r) => !r.list).length >= 3, `a re-watch after each cut: ${JSON.stringify(requests)}`);
    assert.deepEqual(requests.filter((r) => r.list), [], 'watches resumed from their resourceVersion, without relisting');
    assert.deepEqual(summary(events), summary(writer.writes.slice(before)), 'every write seen exactly once, in order');
  });

  test('410 relist: history overrun while the client is cut off; it relists, sees deletions, ends in sync', async (t) => {
    const pre = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'];
    const { env, inf, writer } = await setup({ historyMaxEvents: 20, preexisting: pre });
    const url = env.server.url;
    // One event after the initial list, so the watch is established and has a version of its own.
    const marker = await writer.update('k0');
    await inf.waitFor('marker update', () => inf.events.some((e) => e.rv === marker.rv));
    await sleep(1100);
    const lastRv = marker.rv;

    env.proxy.pause('hold');
    const since = Date.now();
    const deleted = ['k1', 'k2', 'k3'];
    for (const n of deleted) await writer.delete(n);
    for (const n of ['n0', 'n1', 'n2', 'n3']) await writer.create(n);
    await writer.delete('n3'); // created and deleted while cut off: never seen at all
    for (let i = writer.writes.length; i < 58; i++) await writer.update(['k4', 'k5', 'n0', 'n1'][i % 4] as string);
    // The informer's version has left the history: a watch from it is 410 Expired.
    const expired = await api(url, `/api/v1/namespaces/${NS}/configmaps?watch=true&resourceVersion=${lastRv}&timeoutSeconds=1`);
    assert.match(expired.text, /"code":410/, `watch from ${lastRv} after 50 writes should be Expired: ${expired.text}`);

    const from = inf.events.length;
    env.proxy.resume();
    await assertInSync(inf, url, 'after 410 relist', 20_000);
    const events = inf.events.slice(from);
    assertPerObjectOrder(inf.events);
    const resyncs = events.filter(isResync).map((e) => e.name).sort();
    assert.deepEqual(resyncs, ['k0', 'k6', 'k7'], 'after the relist, unchanged objects get a same-version OnUpdate');

    for (const n of deleted) assert.ok(events.some((e) => e.event === 'delete' && e.name === n), `delete of ${n} after relist: ${JSON.stringify(events)}`);
    assert.ok(!inf.events.some((e) => e.name === 'n3'), 'an object created and deleted during the gap is not reported');
    for (const n of ['n0', 'n1', 'n2']) assert.ok(events.some((e) => e.event === 'add' && e.name === n), `add of ${n}`);

    // What happened on the wire: the resumed watch from the old version, then a fresh list.
    const requests = configMapRequests(env.proxy, since);
    t.diagnostic(`requests after the pause: ${requests.map((r) => r.target).join(' | ')}`);
    const rewatch = requests.findIndex((r) => !r.list && r.rv === lastRv);
    assert.ok(rewatch >= 0, `a re-watch from ${lastRv}: ${JSON.stringify(requests)}`);
    assert.ok(requests.slice(rewatch + 1).some((r) => r.list), `a relist after the 410: ${JSON.stringify(requests)}`);
    assert.match(inf.stderr(), /too old resource version|Expired/, 'client-go saw the 410');

    // And it keeps following the watch afterwards.
    const after = await writer.update('k4');
    await inf.waitFor('update after relist', () => inf.events.some((e) => e.rv === after.rv));
    await assertInSync(inf, url, 'after relist and one more write');
  });
});
