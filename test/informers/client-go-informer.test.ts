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
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { allBackends } from '../helpers/backends.js';
import type { TcpProxy } from '../helpers/tcp-proxy.js';
import {
  NS,
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

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BUILD_SCRIPT = join(REPO, 'scripts', 'build-go-informer.sh');
const BUILD_TIMEOUT_MS = 9 * 60_000;

// ---------------------------------------------------------------------------------------------
// Building the Go program

/** Builds the Go informer with scripts/build-go-informer.sh (cached by source hash) and returns the binary's path. */
async function buildGoInformer(): Promise<string> {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error !== undefined || go.status !== 0) {
    throw new Error(
      `Go toolchain not found ("go version" failed: ${go.error?.message ?? go.stderr}). The client-go informer ` +
        'conformance test needs Go on PATH to build test/informers/go-informer.',
    );
  }
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    const timer = setTimeout(() => {
      err += '\n(build timed out)';
      child.kill('SIGKILL');
    }, BUILD_TIMEOUT_MS);
    child.on('error', (e) => {
      err += String(e);
    });
    child.on('close', (c) => {
      clearTimeout(timer);
      resolve({ code: c, stdout: out, stderr: err });
    });
  });
  const binary = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || binary === '' || !existsSync(binary)) throw new Error(`${BUILD_SCRIPT} failed (exit ${String(code)}):\n${stderr}`);
  return binary;
}

// ---------------------------------------------------------------------------------------------
// The running informer

interface InformerEvent {
  event: 'add' | 'update' | 'delete';
  name: string;
  rv: string;
  oldRv?: string;
  tombstone?: boolean;
}
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
    child.stderr.on('data', (d: Buffer) => {
      this.stderrText += d.toString();
    });
    child.on('exit', (code, signal) => {
      this.exited = `exited with ${String(code ?? signal)}`;
    });
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
      this.dumps.push((items) => {
        clearTimeout(timer);
        resolve(items);
      });
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
// Checks

/** Waits until the informer's store equals a LIST (names and resourceVersions), else fails with the diff. */
function assertInSync(inf: GoInformer, url: string, phase: string, timeoutMs = 15_000): Promise<Item[]> {
  return waitForEqualStore(
    async () => ({ store: await inf.dump(), listed: (await listItems(url)).items }),
    () => `${phase}: informer store differs from LIST; stderr tail:\n${inf.stderr().slice(-3000)}`,
    timeoutMs,
  );
}

/**
 * Whether `e` is a resync notification: after a relist client-go calls OnUpdate for every object
 * still present, with old and new at the same resourceVersion (listeners without a resync period
 * get them too). They are not changes, so ordering and exactly-once checks leave them out.
 */
function isResync(e: InformerEvent): boolean {
  return e.event === 'update' && e.oldRv === e.rv;
}

/** Per object, callbacks come in strictly increasing resourceVersion order (resyncs left out); an object is added before it changes. */
function assertPerObjectOrder(all: InformerEvent[]): void {
  // A tombstone from a relist carries the last version the informer knew, not the deletion's.
  checkPerObjectOrder(
    all.filter((e) => !isResync(e)),
    (e) => e.tombstone === true,
    'tombstone',
  );
}

/** A streaming list is a watch with sendInitialEvents=true. */
function isList(q: URLSearchParams): boolean {
  return q.get('watch') !== 'true' || q.get('sendInitialEvents') === 'true';
}

/** The GETs of NS's ConfigMaps through `proxy` from `since` on, with their times. */
function seenRequests(proxy: TcpProxy, since = 0): ConfigMapRequest[] {
  return configMapRequests(proxy, since, isList, true);
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

for (const backend of allBackends())
  for (const { mode, env: clientEnv } of MODES)
    describe(`client-go SharedInformer stays in sync with Capstan (${backend.name}): ${mode}`, () => {
      let binary = '';
      const cleanups: (() => Promise<void>)[] = [];

      before(
        async () => {
          binaryPromise ??= buildGoInformer();
          binary = await binaryPromise;
        },
        { timeout: BUILD_TIMEOUT_MS + 60_000 },
      );

      after(async () => {
        for (const c of cleanups.reverse()) await c();
        await backend.stop();
      });

      async function setup(
        opts: { historyMaxEvents?: number; args?: string[]; preexisting?: string[] } = {},
      ): Promise<{ env: Env; inf: GoInformer; writer: Writer }> {
        const env = await startEnv(await backend.open({ historyMaxEvents: opts.historyMaxEvents }));
        cleanups.push(() => env.close());
        const writer = await seedWriter(env.server.url, opts.preexisting);
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

        await writePhases(writer, pre, phase);

        assertPerObjectOrder(inf.events);
        // The list is served once; everything after it comes from the watch.
        const lists = seenRequests(env.proxy).filter((r) => r.list);
        assert.equal(lists.length, 1, `one initial list expected: ${JSON.stringify(seenRequests(env.proxy))}`);
      });

      test('server-side watch timeouts: the informer re-watches from its last resourceVersion and misses nothing', async () => {
        const { env, inf, writer } = await setup({ preexisting: ['a', 'b', 'c'], args: ['--watch-timeout=1'] });
        const { start, before, since } = markStart(inf, writer);
        await churn(writer, ['a', 'b', 'c', 'd', 'e'], 36, 7, () => sleep(100));
        await assertInSync(inf, env.server.url, 'after writes across watch timeouts');
        await sleep(300);
        const events = inf.events.slice(start);
        assert.deepEqual(summary(events), summary(writer.writes.slice(before)), 'every write seen exactly once, in order');
        assertPerObjectOrder(inf.events);

        const requests = seenRequests(env.proxy, since);
        const rewatches = requests.filter((r) => !r.list);
        assert.ok(rewatches.length >= 2, `the server should have ended watches after 1 s: ${JSON.stringify(requests)}`);
        for (const r of rewatches) assert.ok(r.rv !== null && r.rv !== '' && r.rv !== '0', `re-watch without a resourceVersion: ${r.target}`);
        assert.deepEqual(
          requests.filter((r) => r.list),
          [],
          'no relist after a watch timeout',
        );
      });

      test('cut connections while writes continue: re-watch from the last resourceVersion, no duplicate or missed event', async () => {
        const { env, inf, writer } = await setup({ preexisting: ['a', 'b', 'c', 'd'] });
        await sleep(1100); // client-go relists when a watch dies younger than 1 s without events
        const { start, before, since } = markStart(inf, writer);
        await churn(writer, ['a', 'b', 'c', 'd', 'e', 'f'], 60, 11, cutEvery20th(env.proxy, 1200));
        await assertInSync(inf, env.server.url, 'after cuts');
        await sleep(300);
        const events = inf.events.slice(start);
        assertPerObjectOrder(inf.events);
        const requests = seenRequests(env.proxy, since);
        assert.ok(requests.filter((r) => !r.list).length >= 3, `a re-watch after each cut: ${JSON.stringify(requests)}`);
        assert.deepEqual(
          requests.filter((r) => r.list),
          [],
          'watches resumed from their resourceVersion, without relisting',
        );
        assert.deepEqual(summary(events), summary(writer.writes.slice(before)), 'every write seen exactly once, in order');
      });

      test('410 relist: history overrun while the client is cut off; it relists, sees deletions, ends in sync', async (t) => {
        const pre = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'];
        const { env, inf, writer } = await setup({ historyMaxEvents: 20, preexisting: pre });
        const url = env.server.url;
        // One event after the initial list, so the watch is established and has a version of its own.
        const lastRv = await writeMarker(inf, writer);
        await sleep(1100);

        const deleted = ['k1', 'k2', 'k3'];
        const { since, from } = await overrunWhileCutOff(env, writer, inf, deleted, lastRv);
        await assertInSync(inf, url, 'after 410 relist', 20_000);
        const events = inf.events.slice(from);
        assertPerObjectOrder(inf.events);
        const resyncs = events
          .filter(isResync)
          .map((e) => e.name)
          .sort();
        assert.deepEqual(resyncs, ['k0', 'k6', 'k7'], 'after the relist, unchanged objects get a same-version OnUpdate');

        for (const n of deleted)
          assert.ok(
            events.some((e) => e.event === 'delete' && e.name === n),
            `delete of ${n} after relist: ${JSON.stringify(events)}`,
          );
        assert.ok(!inf.events.some((e) => e.name === 'n3'), 'an object created and deleted during the gap is not reported');
        for (const n of ['n0', 'n1', 'n2'])
          assert.ok(
            events.some((e) => e.event === 'add' && e.name === n),
            `add of ${n}`,
          );

        // What happened on the wire: the resumed watch from the old version, then a fresh list.
        const requests = seenRequests(env.proxy, since);
        t.diagnostic(`requests after the pause: ${requests.map((r) => r.target).join(' | ')}`);
        const rewatch = requests.findIndex((r) => !r.list && r.rv === lastRv);
        assert.ok(rewatch >= 0, `a re-watch from ${lastRv}: ${JSON.stringify(requests)}`);
        assert.ok(
          requests.slice(rewatch + 1).some((r) => r.list),
          `a relist after the 410: ${JSON.stringify(requests)}`,
        );
        assert.match(inf.stderr(), /too old resource version|Expired/, 'client-go saw the 410');

        // And it keeps following the watch afterwards.
        const after = await writer.update('k4');
        await inf.waitFor('update after relist', () => inf.events.some((e) => e.rv === after.rv));
        await assertInSync(inf, url, 'after relist and one more write');
      });
    });
