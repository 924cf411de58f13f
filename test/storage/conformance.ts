/**
 * The storage conformance suite: observable behaviour every Storage backend must share. Each test
 * works on its own random storage types, so backends sharing one Redis need no cleanup between tests.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type ChangeEvent, type Storage } from '../../src/storage/storage.js';
import { StorageError, type StorageErrorCode } from '../../src/api/storage-error.js';

export interface StorageFactoryOptions {
  historyMs: number;
  historyMaxEvents?: number;
}

/** Returns a new Storage handle; the suite closes every handle it asked for. */
export type StorageFactory = (options: StorageFactoryOptions) => Promise<Storage>;

/** A fresh storage type name. */
export function freshType(label = 't'): string {
  return `${label}-${randomBytes(6).toString('hex')}.test.capstan.io`;
}

export function obj(name: string, namespace?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: namespace === undefined ? { name } : { name, namespace }, ...extra };
}

export function key(name: string, namespace?: string): string {
  return namespace === undefined ? name : `${namespace}/${name}`;
}

export async function rejectsWith<T>(promise: Promise<T>, code: StorageErrorCode, rv?: string): Promise<StorageError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof StorageError, `expected StorageError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (rv !== undefined) assert.equal(err.resourceVersion, rv);
    return err;
  }
  assert.fail(`expected StorageError ${code}`);
}

function rvOf(json: string): unknown {
  const parsed = JSON.parse(json) as { metadata?: { resourceVersion?: unknown } };
  return parsed.metadata?.resourceVersion;
}

/** Collects watch events; `until(n)` waits for at least n of them. */
export class Recorder {
  readonly events: ChangeEvent[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];
  readonly listener = (e: ChangeEvent): void => {
    this.events.push(e);
    this.waiters = this.waiters.filter((w) => {
      if (this.events.length >= w.n) w.resolve();
      return this.events.length < w.n;
    });
  };

  until(n: number, timeoutMs = 5000): Promise<void> {
    if (this.events.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`got ${this.events.length} of ${n} events`)), timeoutMs);
      this.waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  versions(): string[] {
    return this.events.map((e) => e.resourceVersion);
  }
}

function range(fromExclusive: number, toInclusive: number): string[] {
  const out: string[] = [];
  for (let i = fromExclusive + 1; i <= toInclusive; i++) out.push(String(i));
  return out;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Registers the conformance tests for one backend. `sizesAfterList`: whether the backend knows the
 * mean object size of a type it has listed (every backend that holds the type's objects in this
 * process: memory, and any store behind the list cache); Redis alone does not.
 */
export function describeStorageConformance(name: string, factory: StorageFactory, sizesAfterList = true): void {
  describe(`storage conformance: ${name}`, () => {
    const opened: Storage[] = [];
    const controllers: AbortController[] = [];
    const open = async (options: StorageFactoryOptions = { historyMs: 60_000 }): Promise<Storage> => {
      const s = await factory(options);
      opened.push(s);
      return s;
    };
    const signal = (): AbortSignal => {
      const c = new AbortController();
      controllers.push(c);
      return c.signal;
    };
    after(async () => {
      for (const c of controllers) c.abort();
      await Promise.all(opened.map((s) => s.close()));
    });

    test('create, get and AlreadyExists; an untouched type is at 1 and its first write gets 2', async () => {
      const s = await open();
      const t = freshType();
      assert.equal(await s.currentResourceVersion(t), '1');
      assert.equal(await s.get(t, 'ns/a'), undefined);
      const created = await s.create(t, 'ns/a', obj('a', 'ns', { data: { k: 'v' } }));
      assert.equal(created.key, 'ns/a');
      assert.equal(created.resourceVersion, '2');
      assert.equal(rvOf(created.json), '2');
      assert.deepEqual(await s.get(t, 'ns/a'), created);
      assert.equal(await s.currentResourceVersion(t), '2');
      await rejectsWith(s.create(t, 'ns/a', obj('a', 'ns')), 'AlreadyExists');
      assert.equal(await s.currentResourceVersion(t), '2', 'a failed create does not use a version');
      const other = freshType();
      assert.equal((await s.create(other, 'x', obj('x'))).resourceVersion, '2', 'versions are per type');
    });

    test('stored JSON is JSON.stringify of the object with metadata.resourceVersion set', async () => {
      const s = await open();
      const t = freshType();
      const o = {
        kind: 'Thing',
        metadata: { name: 'j', resourceVersion: '999', labels: {} },
        spec: { empty: [], nested: [[], {}], obj: {}, n: 0.1, big: 1e21, neg: -5, s: 'é "q" \\ \u2028', nul: null },
      };
      const created = await s.create(t, 'j', o);
      const expected = JSON.stringify({ ...o, metadata: { ...o.metadata, resourceVersion: created.resourceVersion } });
      assert.equal(created.json, expected);
      assert.equal((await s.get(t, 'j'))?.json, expected);
      const listed = await s.list(t);
      assert.equal(listed.items[0]?.json, expected);
      const updated = await s.update(t, 'j', { ...o, spec: { empty: [] } }, created.resourceVersion);
      assert.match(updated.json, /"spec":\{"empty":\[\]\}/);
      const gone = await s.delete(t, 'j');
      assert.equal(gone.json, updated.json.replace(`"resourceVersion":"${updated.resourceVersion}"`, `"resourceVersion":"${gone.resourceVersion}"`));
    });

    test('stats: the object count, and the mean stored JSON length kept through updates and deletes', async () => {
      const s = await open();
      const t = freshType();
      assert.deepEqual(await s.stats(t), { objectCount: 0, averageObjectBytes: undefined });
      const a = await s.create(t, 'ns/a', obj('a', 'ns', { data: { k: 'v' } }));
      const b = await s.create(t, 'ns/b', obj('b', 'ns', { data: { k: 'x'.repeat(3000) } }));
      const c = await s.create(t, 'ns/c', obj('c', 'ns', { data: { k: 'y'.repeat(500) } }));
      const b2 = await s.update(t, 'ns/b', obj('b', 'ns', { data: { k: 'z'.repeat(1000) } }), b.resourceVersion);
      await s.delete(t, 'ns/c', c.resourceVersion);
      assert.equal((await s.list(t)).items.length, 2);
      const expected = sizesAfterList ? Math.floor((a.json.length + b2.json.length) / 2) : undefined;
      assert.deepEqual(await s.stats(t), { objectCount: 2, averageObjectBytes: expected });
    });

    test('compare-and-swap update: success, Conflict with the current version, NotFound', async () => {
      const s = await open();
      const t = freshType();
      const v1 = await s.create(t, 'ns/a', obj('a', 'ns', { data: { n: '1' } }));
      const v2 = await s.update(t, 'ns/a', obj('a', 'ns', { data: { n: '2' } }), v1.resourceVersion);
      assert.equal(v2.resourceVersion, '3');
      assert.equal(rvOf(v2.json), '3');
      assert.deepEqual(await s.get(t, 'ns/a'), v2);
      await rejectsWith(s.update(t, 'ns/a', obj('a', 'ns'), v1.resourceVersion), 'Conflict', '3');
      await rejectsWith(s.update(t, 'ns/missing', obj('missing', 'ns'), '3'), 'NotFound');
      assert.equal(await s.currentResourceVersion(t), '3');
    });

    test('delete with and without precondition returns the last object at the deletion version', async () => {
      const s = await open();
      const t = freshType();
      const a = await s.create(t, 'a', obj('a', undefined, { data: { x: [] } }));
      const b = await s.create(t, 'b', obj('b'));
      await rejectsWith(s.delete(t, 'a', '999'), 'Conflict', a.resourceVersion);
      const goneA = await s.delete(t, 'a', a.resourceVersion);
      assert.equal(goneA.resourceVersion, '4');
      assert.equal(rvOf(goneA.json), '4');
      assert.deepEqual((JSON.parse(goneA.json) as { data: unknown }).data, { x: [] });
      assert.equal(await s.get(t, 'a'), undefined);
      const goneB = await s.delete(t, 'b');
      assert.equal(goneB.resourceVersion, '5');
      assert.equal(goneB.json, b.json.replace('"resourceVersion":"3"', '"resourceVersion":"5"'));
      await rejectsWith(s.delete(t, 'b'), 'NotFound');
      await rejectsWith(s.delete(t, 'b', '5'), 'NotFound');
      assert.equal((await s.list(t)).items.length, 0);
    });

    test('lists in key byte order across namespaces, with the namespace filter', async () => {
      const s = await open();
      const t = freshType();
      const keys = ['b/x', 'a/y', 'a/x', 'a-b/z', 'a0/q', 'a/x-1', 'a/X', 'ab/c'];
      for (const k of keys) {
        const [ns, n] = k.split('/') as [string, string];
        await s.create(t, k, obj(n, ns));
      }
      const all = await s.list(t);
      assert.deepEqual(
        all.items.map((i) => i.key),
        [...keys].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
      );
      assert.equal(all.resourceVersion, await s.currentResourceVersion(t));
      assert.equal(all.hasMore, false);
      assert.equal(all.remaining, undefined);
      const inA = await s.list(t, { namespace: 'a' });
      assert.deepEqual(
        inA.items.map((i) => i.key),
        ['a/X', 'a/x', 'a/x-1', 'a/y'],
      );
      assert.deepEqual((await s.list(t, { namespace: 'zz' })).items, []);
    });

    test('limit and afterKey page through a collection with hasMore and remaining', async () => {
      const s = await open();
      const t = freshType();
      for (let i = 0; i < 7; i++) await s.create(t, `ns/o${i}`, obj(`o${i}`, 'ns'));
      await s.create(t, 'other/o', obj('o', 'other'));
      const p1 = await s.list(t, { namespace: 'ns', limit: 3 });
      assert.deepEqual(
        p1.items.map((i) => i.key),
        ['ns/o0', 'ns/o1', 'ns/o2'],
      );
      assert.equal(p1.hasMore, true);
      assert.equal(p1.remaining, 4);
      // Writes between pages do not show in later pages read at the first page's version.
      await s.create(t, 'ns/o3a', obj('o3a', 'ns'));
      await s.delete(t, 'ns/o5');
      await s.update(t, 'ns/o4', obj('o4', 'ns', { changed: true }), (await s.get(t, 'ns/o4'))?.resourceVersion ?? '');
      const p2 = await s.list(t, { namespace: 'ns', limit: 3, afterKey: 'ns/o2', resourceVersion: p1.resourceVersion });
      assert.deepEqual(
        p2.items.map((i) => i.key),
        ['ns/o3', 'ns/o4', 'ns/o5'],
      );
      assert.equal(p2.resourceVersion, p1.resourceVersion);
      assert.equal(rvOf(p2.items[1]?.json ?? '{}'), p2.items[1]?.resourceVersion);
      assert.doesNotMatch(p2.items[1]?.json ?? '', /changed/);
      assert.equal(p2.hasMore, true);
      assert.equal(p2.remaining, 1);
      const p3 = await s.list(t, { namespace: 'ns', limit: 3, afterKey: 'ns/o5', resourceVersion: p1.resourceVersion });
      assert.deepEqual(
        p3.items.map((i) => i.key),
        ['ns/o6'],
      );
      assert.equal(p3.hasMore, false);
      assert.equal(p3.remaining, undefined);
      const now = await s.list(t, { namespace: 'ns', limit: 4, afterKey: 'ns/o1' });
      assert.deepEqual(
        now.items.map((i) => i.key),
        ['ns/o2', 'ns/o3', 'ns/o3a', 'ns/o4'],
      );
      assert.equal(now.remaining, 1);
      const exact = await s.list(t, { limit: 8 });
      assert.equal(exact.items.length, 8);
      assert.equal(exact.hasMore, false);
      const cluster = await s.list(t, { afterKey: 'ns/o6' });
      assert.deepEqual(
        cluster.items.map((i) => i.key),
        ['other/o'],
      );
    });

    test('filter applies before limit; hasMore only when a later item matches', async () => {
      const s = await open();
      const t = freshType();
      for (let i = 0; i < 300; i++) await s.create(t, `n/k${String(i).padStart(3, '0')}`, obj(`k${i}`, 'n', { even: i % 2 === 0 }));
      const even = (o: { json: string }): boolean => o.json.includes('"even":true');
      const page = await s.list(t, { limit: 5, filter: even });
      assert.deepEqual(
        page.items.map((i) => i.key),
        ['n/k000', 'n/k002', 'n/k004', 'n/k006', 'n/k008'],
      );
      assert.equal(page.hasMore, true);
      assert.equal(page.remaining, 291);
      const tail = await s.list(t, { limit: 5, filter: even, afterKey: 'n/k290' });
      assert.deepEqual(
        tail.items.map((i) => i.key),
        ['n/k292', 'n/k294', 'n/k296', 'n/k298'],
      );
      assert.equal(tail.hasMore, false);
      const last = await s.list(t, { limit: 1, filter: (o) => o.key === 'n/k150' || o.key === 'n/k299' });
      assert.deepEqual(
        last.items.map((i) => i.key),
        ['n/k150'],
      );
      assert.equal(last.hasMore, true);
      assert.equal(last.remaining, 149);
      const all = await s.list(t, { filter: even });
      assert.equal(all.items.length, 150);
      assert.equal(all.hasMore, false);
    });

    test('exact snapshot lists at an older version; TooLarge for a future one', async () => {
      const s = await open();
      const t = freshType();
      const a = await s.create(t, 'ns/a', obj('a', 'ns'));
      const b = await s.create(t, 'ns/b', obj('b', 'ns'));
      const at = await s.currentResourceVersion(t);
      const before = await s.list(t);
      await s.update(t, 'ns/a', obj('a', 'ns', { v: 2 }), a.resourceVersion);
      await s.delete(t, 'ns/b');
      await s.create(t, 'ns/c', obj('c', 'ns'));
      await s.create(t, 'ns/0', obj('0', 'ns'));
      const snap = await s.list(t, { resourceVersion: at });
      assert.equal(snap.resourceVersion, at);
      assert.deepEqual(snap.items, before.items);
      assert.deepEqual(
        snap.items.map((i) => i.resourceVersion),
        [a.resourceVersion, b.resourceVersion],
      );
      const paged = await s.list(t, { resourceVersion: at, limit: 1 });
      assert.deepEqual(
        paged.items.map((i) => i.key),
        ['ns/a'],
      );
      assert.equal(paged.hasMore, true);
      assert.equal(paged.remaining, 1);
      const first = await s.list(t, { resourceVersion: '1' });
      assert.deepEqual(first.items, []);
      const current = await s.currentResourceVersion(t);
      assert.equal((await s.list(t, { resourceVersion: current })).items.length, 3);
      await rejectsWith(s.list(t, { resourceVersion: String(Number(current) + 1) }), 'TooLarge');
    });

    test('Gone for lists and watches older than the kept history (count cap)', async () => {
      const s = await open({ historyMs: 60_000, historyMaxEvents: 3 });
      const t = freshType();
      for (let i = 0; i < 6; i++) await s.create(t, `k${i}`, obj(`k${i}`));
      // Versions 2..7 written; the last 3 events (5, 6, 7) are kept, so history reaches back to 4.
      await rejectsWith(s.list(t, { resourceVersion: '3' }), 'Gone', '4');
      await rejectsWith(
        s.watch(t, '3', () => undefined, signal()),
        'Gone',
        '4',
      );
      await rejectsWith(
        s.watch(t, '1', () => undefined, signal()),
        'Gone',
        '4',
      );
      assert.deepEqual(
        (await s.list(t, { resourceVersion: '4' })).items.map((i) => i.key),
        ['k0', 'k1', 'k2'],
      );
      const r = new Recorder();
      await s.watch(t, '4', r.listener, signal());
      await r.until(3);
      assert.deepEqual(r.versions(), ['5', '6', '7']);
      assert.deepEqual((await s.list(t)).items.length, 6);
    });

    test('Gone for history older than the time window', async () => {
      const s = await open({ historyMs: 150 });
      const t = freshType();
      await s.create(t, 'a', obj('a'));
      await s.create(t, 'b', obj('b'));
      await sleep(300);
      await s.create(t, 'c', obj('c'));
      await rejectsWith(
        s.watch(t, '2', () => undefined, signal()),
        'Gone',
        '3',
      );
      await rejectsWith(s.list(t, { resourceVersion: '2' }), 'Gone', '3');
      const r = new Recorder();
      await s.watch(t, '3', r.listener, signal());
      await r.until(1);
      assert.deepEqual(r.versions(), ['4']);
    });

    test('watch replays history, then delivers live changes in order, with DELETED carrying the last object', async () => {
      const s = await open();
      const t = freshType();
      const a = await s.create(t, 'ns/a', obj('a', 'ns'));
      const a2 = await s.update(t, 'ns/a', obj('a', 'ns', { v: 2 }), a.resourceVersion);
      const r = new Recorder();
      const sig = signal();
      await s.watch(t, a.resourceVersion, r.listener, sig);
      await r.until(1);
      await s.delete(t, 'ns/a', a2.resourceVersion);
      await s.create(t, 'ns/b', obj('b', 'ns'));
      await r.until(3);
      assert.deepEqual(
        r.events.map((e) => [e.type, e.key, e.resourceVersion]),
        [
          ['MODIFIED', 'ns/a', '3'],
          ['DELETED', 'ns/a', '4'],
          ['ADDED', 'ns/b', '5'],
        ],
      );
      const [modified, deleted, added] = r.events as [ChangeEvent, ChangeEvent, ChangeEvent];
      assert.equal(modified.json, a2.json);
      assert.equal(modified.prevJson, a.json);
      assert.equal(rvOf(deleted.json), '4');
      assert.equal(deleted.json, a2.json.replace('"resourceVersion":"3"', '"resourceVersion":"4"'));
      assert.equal(deleted.prevJson, a2.json);
      assert.equal(added.prevJson, undefined);
    });

    test("a write's change has reached the same storage's watchers when the write resolves", async () => {
      const s = await open();
      const t = freshType();
      const r = new Recorder();
      await s.watch(t, await s.currentResourceVersion(t), r.listener, signal());
      const created = await s.create(t, 'ns/a', obj('a', 'ns'));
      assert.deepEqual(
        r.events.map((e) => [e.type, e.resourceVersion, e.json, e.prevJson]),
        [['ADDED', created.resourceVersion, created.json, undefined]],
      );
      const updated = await s.update(t, 'ns/a', obj('a', 'ns', { v: 2 }), created.resourceVersion);
      assert.deepEqual(
        r.events.slice(1).map((e) => [e.type, e.resourceVersion, e.json, e.prevJson]),
        [['MODIFIED', updated.resourceVersion, updated.json, created.json]],
      );
      const deleted = await s.delete(t, 'ns/a');
      assert.deepEqual(
        r.events.slice(2).map((e) => [e.type, e.resourceVersion, e.json, e.prevJson]),
        [['DELETED', deleted.resourceVersion, deleted.json, updated.json]],
      );
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => s.create(t, `ns/b${i}`, obj(`b${i}`, 'ns'))));
      const seen = new Set(r.versions());
      assert.ok(burst.every((b) => seen.has(b.resourceVersion)));
      assert.deepEqual(r.versions(), range(Number(created.resourceVersion) - 1, Number(created.resourceVersion) + 22));
    });

    test('advanceVersion moves the version without a change: same objects, watches told only through onProgress, in order', async () => {
      const s = await open();
      const t = freshType();
      const a = await s.create(t, 'ns/a', obj('a', 'ns'));
      const log: string[] = [];
      let wake: (() => void) | undefined;
      const seen = (entry: string): void => {
        log.push(entry);
        wake?.();
      };
      const until = async (n: number): Promise<void> => {
        while (log.length < n) await new Promise<void>((resolve) => (wake = resolve));
      };
      await s.watch(
        t,
        a.resourceVersion,
        (e) => seen(`${e.type} ${e.key} ${e.resourceVersion}`),
        signal(),
        undefined,
        undefined,
        (rv) => seen(`progress ${rv}`),
      );
      const advanced = await s.advanceVersion(t);
      assert.equal(BigInt(advanced), BigInt(a.resourceVersion) + 1n);
      assert.equal(await s.currentResourceVersion(t), advanced);
      const now = await s.list(t);
      assert.equal(now.resourceVersion, advanced);
      assert.deepEqual(now.items, [a]);
      assert.deepEqual((await s.list(t, { resourceVersion: a.resourceVersion })).items, [a]);
      await until(1);
      const b = await s.create(t, 'ns/b', obj('b', 'ns'));
      assert.equal(BigInt(b.resourceVersion), BigInt(advanced) + 1n);
      await until(2);
      assert.deepEqual(log, [`progress ${advanced}`, `ADDED ns/b ${b.resourceVersion}`]);
      // Replayed history carries the progress in its place; a watch without onProgress sees only changes.
      const replayed: string[] = [];
      const r = new Recorder();
      await s.watch(
        t,
        a.resourceVersion,
        (e) => replayed.push(`${e.type} ${e.resourceVersion}`),
        signal(),
        undefined,
        undefined,
        (rv) => replayed.push(`progress ${rv}`),
      );
      await s.watch(t, a.resourceVersion, r.listener, signal());
      await r.until(1);
      assert.deepEqual(r.versions(), [b.resourceVersion]);
      const c = await s.create(t, 'ns/c', obj('c', 'ns'));
      await r.until(2);
      assert.deepEqual(replayed, [`progress ${advanced}`, `ADDED ${b.resourceVersion}`, `ADDED ${c.resourceVersion}`]);
      assert.deepEqual(
        (await s.list(t, { resourceVersion: advanced })).items.map((o) => o.key),
        ['ns/a'],
      );
    });

    test('watch from a version newer than the current one delivers only later changes', async () => {
      const s = await open();
      const t = freshType();
      await s.create(t, 'a', obj('a'));
      const r = new Recorder();
      await s.watch(t, '4', r.listener, signal());
      for (const k of ['b', 'c', 'd']) await s.create(t, k, obj(k));
      await r.until(1);
      await sleep(50);
      assert.deepEqual(r.versions(), ['5']);
    });

    test('abort stops delivery; listeners share one event object', async () => {
      const s = await open();
      const t = freshType();
      await s.create(t, 'a', obj('a'));
      const current = await s.currentResourceVersion(t);
      const c = new AbortController();
      controllers.push(c);
      const one = new Recorder();
      const two = new Recorder();
      await s.watch(t, current, one.listener, c.signal);
      await s.watch(t, current, two.listener, signal());
      await s.create(t, 'b', obj('b'));
      await one.until(1);
      await two.until(1);
      assert.equal(one.events[0], two.events[0]);
      c.abort();
      await s.create(t, 'c', obj('c'));
      await two.until(2);
      await sleep(50);
      assert.equal(one.events.length, 1);
      const aborted = new AbortController();
      aborted.abort();
      const none = new Recorder();
      await s.watch(t, '1', none.listener, aborted.signal);
      await sleep(20);
      assert.equal(none.events.length, 0);
    });

    test('exactly once, in order, with watchers joining during concurrent writes', async () => {
      const s = await open();
      const t = freshType();
      const writers = 8;
      const perWriter = 25;
      const recorders: { from: number; r: Recorder }[] = [];
      const join = async (): Promise<void> => {
        const from = Number(await s.currentResourceVersion(t));
        const start = Math.max(1, from - 7);
        const r = new Recorder();
        await s.watch(t, String(start), r.listener, signal());
        recorders.push({ from: start, r });
      };
      await join();
      const writes = Array.from({ length: writers }, async (_, w) => {
        for (let i = 0; i < perWriter; i++) {
          const k = `w${w}/o${i % 5}`;
          const current = await s.get(t, k);
          if (!current) await s.create(t, k, obj(`o${i % 5}`, `w${w}`, { i }));
          else if (i % 7 === 0) await s.delete(t, k, current.resourceVersion);
          else await s.update(t, k, obj(`o${i % 5}`, `w${w}`, { i }), current.resourceVersion);
        }
      });
      const joiners = Array.from({ length: 6 }, async (_, j) => {
        await sleep(j * 7);
        await join();
      });
      await Promise.all([...writes, ...joiners]);
      const final = Number(await s.currentResourceVersion(t));
      assert.equal(final, 1 + writers * perWriter);
      for (const { from, r } of recorders) {
        await r.until(final - from);
        await sleep(10);
        assert.deepEqual(r.versions(), range(from, final));
      }
    });
  });
}
