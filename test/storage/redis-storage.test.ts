import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Redis } from 'ioredis';
import { connectRedisBackend, type RedisBackendOptions } from '../../src/storage/redis/open-redis.js';
import type { Storage } from '../../src/storage/storage.js';
import type { StorageError } from '../../src/api/storage-error.js';
import { typeKeys } from '../../src/storage/redis/keys.js';
import { createRedisClient } from '../../src/storage/redis/client.js';
import { RedisCommands } from '../../src/storage/redis/commands.js';
import { loadScripts } from '../../src/storage/redis/scripts.js';
import { startRedis, startRedisSentinel, type RedisServer } from '../helpers/redis-process.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { describeStorageConformance, freshType, obj, Recorder, rejectsWith } from './conformance.js';

let server: RedisServer | undefined;
const quiet = (): void => undefined;

before(async () => {
  server = await startRedis();
});
after(async () => {
  await server?.stop();
});

function range(fromExclusive: number, toInclusive: number): string[] {
  return Array.from({ length: toInclusive - fromExclusive }, (_, i) => String(fromExclusive + 1 + i));
}

function url(): string {
  if (!server) throw new Error('redis-server not started');
  return server.url;
}

/** The backend as the server runs it: RedisStorage behind the list cache. */
async function connect(extra: Partial<RedisBackendOptions> = {}): Promise<Storage> {
  return connectRedisBackend({ url: url(), historyMs: 60_000, onError: quiet, ...extra });
}

describeStorageConformance('redis standalone', (options) => connect(options));

describe('redis storage specifics', () => {
  test("a reader's cache of recent changes keeps one copy of each object's text", async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const writer = await connect({ listCache: false });
    const reader = await connect({ listCache: false });
    const stop = new AbortController();
    try {
      const t = freshType();
      const r = new Recorder();
      await reader.watch(t, '1', r.listener, stop.signal);
      const filler = 'x'.repeat(200_000);
      let stored = await writer.create(t, 'ns/big', obj('big', 'ns', { data: { v: `0${filler}` } }));
      await r.until(1);
      gc();
      const before = process.memoryUsage().heapUsed;
      const changes = 100;
      for (let i = 1; i <= changes; i++) stored = await writer.update(t, 'ns/big', obj('big', 'ns', { data: { v: `${i}${filler}` } }), stored.resourceVersion);
      await r.until(changes + 1);
      gc();
      const grown = process.memoryUsage().heapUsed - before;
      // Each change read from the stream brings the object it replaced as a text of its own: kept
      // as it came, the reader would hold two copies of every version (40 MB).
      assert.ok(grown < changes * 200_000 * 1.5, `${grown} bytes for ${changes} changes of 200 KB`);
      const last = r.events[r.events.length - 1];
      assert.equal(last.prevJson, r.events[r.events.length - 2].json, 'a change still carries the object it replaced');
    } finally {
      stop.abort();
      await Promise.all([writer.close(), reader.close()]);
    }
  });

  test("a second instance (another worker) sees the first one's writes, in order, and can CAS them", async () => {
    const one = await connect();
    const two = await connect();
    const stop = new AbortController();
    try {
      const t = freshType();
      const r = new Recorder();
      await two.watch(t, '1', r.listener, stop.signal);
      const created = await Promise.all(Array.from({ length: 20 }, (_, i) => one.create(t, `ns/k${i}`, obj(`k${i}`, 'ns'))));
      await r.until(20);
      assert.deepEqual(
        r.versions(),
        Array.from({ length: 20 }, (_, i) => String(i + 2)),
      );
      assert.deepEqual((await two.list(t)).items.length, 20);
      const first = created[0];
      assert.ok(first);
      const updated = await two.update(t, first.key, obj('k0', 'ns', { by: 'two' }), first.resourceVersion);
      await rejectsWith(one.update(t, first.key, obj('k0', 'ns'), first.resourceVersion), 'Conflict', updated.resourceVersion);
      assert.deepEqual(await one.get(t, first.key), updated);
      await r.until(21);
      assert.equal(r.events[20]?.json, updated.json);
    } finally {
      stop.abort();
      await one.close();
      await two.close();
    }
  });

  test("an instance's own writes reach its watchers before they resolve, also behind another instance's writes", async () => {
    const one = await connect();
    const two = await connect();
    const third = await connect();
    const stop = new AbortController();
    try {
      const t = freshType();
      const mine = new Recorder();
      const reader = new Recorder();
      await one.watch(t, '1', mine.listener, stop.signal);
      await third.watch(t, '1', reader.listener, stop.signal);
      // Each of one's writes, at the moment it resolves, must already be in `mine`; two's writes
      // interleave, so most of one's writes come back with a gap that must be read first.
      const missingAtResolve: string[] = [];
      const oneWrites = (async () => {
        for (let i = 0; i < 60; i++) {
          const k = `ns/one${i % 6}`;
          const current = await one.get(t, k);
          const written = current
            ? await one.update(t, k, obj(`one${i % 6}`, 'ns', { i }), current.resourceVersion)
            : await one.create(t, k, obj(`one${i % 6}`, 'ns'));
          if (!mine.events.some((e) => e.resourceVersion === written.resourceVersion && e.json === written.json))
            missingAtResolve.push(written.resourceVersion);
        }
      })();
      const twoWrites = Promise.all(
        Array.from({ length: 4 }, (_, w) =>
          (async () => {
            for (let i = 0; i < 30; i++) await two.create(t, `ns/two-${w}-${i}`, obj(`two-${w}-${i}`, 'ns'));
          })(),
        ),
      );
      await Promise.all([oneWrites, twoWrites]);
      assert.deepEqual(missingAtResolve, []);
      const total = 60 + 120;
      await mine.until(total);
      await reader.until(total);
      // Exactly once, in order, and byte for byte what a reader of the stream alone delivers.
      assert.deepEqual(mine.versions(), range(1, total + 1));
      assert.deepEqual(
        mine.events.map((e) => [e.type, e.key, e.json, e.prevJson]),
        reader.events.map((e) => [e.type, e.key, e.json, e.prevJson]),
      );
    } finally {
      stop.abort();
      await one.close();
      await two.close();
      await third.close();
    }
  });

  test("an instance's own writes reach its watchers before they resolve while its reader reconnects", async () => {
    const one = await connect();
    const two = await connect();
    const raw = new Redis(url());
    const stop = new AbortController();
    try {
      const t = freshType();
      const mine = new Recorder();
      await one.watch(t, '1', mine.listener, stop.signal);
      // After a reconnect the reader checks that Redis still holds what it delivered; reads of
      // newer changes that return meanwhile do not count, and an own write must still go out
      // before it resolves, also behind the other instance's writes.
      const missingAtResolve: string[] = [];
      let kills = 0;
      let writing = true;
      const cuts = (async () => {
        while (writing) {
          const clients = String(await raw.call('CLIENT', 'LIST'));
          for (const [, id] of clients.matchAll(/^id=(\d+) .*cmd=xread/gm)) {
            await raw.call('CLIENT', 'KILL', 'ID', id);
            kills++;
          }
          await new Promise((resolve) => setImmediate(resolve));
        }
      })();
      const writers = (name: string, s: Storage, check: boolean): Promise<unknown> =>
        Promise.all(
          Array.from({ length: 4 }, (_, w) =>
            (async () => {
              for (let i = 0; i < 25; i++) {
                const written = await s.create(t, `ns/${name}-${w}-${i}`, obj(`${name}-${w}-${i}`, 'ns'));
                if (check && !mine.events.some((e) => e.resourceVersion === written.resourceVersion && e.json === written.json))
                  missingAtResolve.push(written.resourceVersion);
              }
            })(),
          ),
        );
      await Promise.all([writers('one', one, true), writers('two', two, false)]);
      writing = false;
      await cuts;
      assert.ok(kills > 0, 'the reader was blocked in XREAD when its connection was cut');
      assert.deepEqual(missingAtResolve, []);
      await mine.until(200);
      assert.deepEqual(mine.versions(), range(1, 201));
    } finally {
      stop.abort();
      raw.disconnect();
      await one.close();
      await two.close();
    }
  });

  test('watchers replaying from Redis while writes continue get every change once, in order', async () => {
    const writer = await connect();
    const reader = await connect({ watchCacheSize: 4 });
    const late = await connect();
    const stop = new AbortController();
    try {
      const t = freshType();
      for (let i = 0; i < 30; i++) await writer.create(t, `k${i}`, obj(`k${i}`));
      const watchers: { from: number; r: Recorder }[] = [];
      const join = async (s: Storage, back: number): Promise<void> => {
        const from = Math.max(1, Number(await s.currentResourceVersion(t)) - back);
        const r = new Recorder();
        await s.watch(t, String(from), r.listener, stop.signal);
        watchers.push({ from, r });
      };
      await join(reader, 0);
      const writes = (async () => {
        for (let i = 0; i < 60; i++) {
          const k = `k${i % 30}`;
          const current = await writer.get(t, k);
          await writer.update(t, k, obj(k, undefined, { i }), current?.resourceVersion ?? '');
        }
      })();
      // Older than the reader's 4-event cache: replayed with XRANGE while live events are held back.
      const joins = Array.from({ length: 8 }, async (_, j) => {
        await new Promise((r) => setTimeout(r, j * 3));
        await join(j % 2 === 0 ? reader : late, 20 + j);
      });
      await Promise.all([writes, ...joins]);
      const final = Number(await writer.currentResourceVersion(t));
      assert.equal(final, 91);
      for (const { from, r } of watchers) {
        await r.until(final - from);
        await new Promise((res) => setTimeout(res, 10));
        assert.deepEqual(
          r.versions(),
          Array.from({ length: final - from }, (_, i) => String(from + 1 + i)),
        );
      }
    } finally {
      stop.abort();
      await Promise.all([writer.close(), reader.close(), late.close()]);
    }
  });

  test('JSON is stored byte-exact: empty arrays and objects, and bigint values with all digits', async () => {
    const s = await connect();
    const raw = new Redis(url());
    try {
      const t = freshType();
      const o = { metadata: { name: 'big' }, spec: { items: [], map: {}, big: 9007199254740993n, neg: -12345678901234567890n, f: 1.5 } };
      const created = await s.create(t, 'big', o);
      const expected =
        '{"metadata":{"name":"big","resourceVersion":"2"},"spec":{"items":[],"map":{},"big":9007199254740993,"neg":-12345678901234567890,"f":1.5}}';
      assert.equal(created.json, expected);
      assert.equal((await s.get(t, 'big'))?.json, expected);
      const stored = await raw.hget(typeKeys('capstan:', t).objects, 'big');
      assert.equal(stored, `2:${expected.indexOf('"2"') + 1}:${expected}`);
      const gone = await s.delete(t, 'big');
      assert.equal(gone.json, expected.replace('"resourceVersion":"2"', '"resourceVersion":"3"'));
      const r = new Recorder();
      const stop = new AbortController();
      await s.watch(t, '1', r.listener, stop.signal);
      await r.until(2);
      stop.abort();
      assert.equal(r.events[0]?.json, expected);
      assert.equal(r.events[1]?.prevJson, expected);
      // A user string that looks like the rv field does not confuse the splice.
      const tricky = await s.create(t, 'tricky', {
        metadata: { name: 'tricky', annotations: { a: '"resourceVersion":"7"' } },
        spec: { claimRef: { resourceVersion: '7' } },
      });
      const dead = await s.delete(t, 'tricky');
      assert.equal(dead.json, tricky.json.replace('"resourceVersion":"4"', `"resourceVersion":"${dead.resourceVersion}"`));
      assert.match(dead.json, /"claimRef":\{"resourceVersion":"7"\}/);
    } finally {
      raw.disconnect();
      await s.close();
    }
  });

  test('the commands sent in one turn of the event loop reach Redis in one read, each answered in its own order', async () => {
    const commands = new RedisCommands(createRedisClient({ url: url() }), loadScripts(), {});
    const raw = new Redis(url());
    try {
      await Promise.all([commands.client.ping(), raw.ping()]);
      const readsProcessed = async (): Promise<number> => Number(/total_reads_processed:(\d+)/.exec(await raw.info('stats'))?.[1]);
      const keys = typeKeys('batch:', freshType());
      const names = Array.from({ length: 50 }, (_, i) => `${keys.counter}:${i}`);
      await raw.mset(Object.fromEntries(names.map((n, i) => [n, `v${i}`])));
      const before = await readsProcessed();
      // Fifty reads at once, as the handlers of fifty requests issue them; then the INFO that counts.
      const replies = await Promise.all(names.map((n) => commands.command(keys, 'GET', [n])));
      const reads = (await readsProcessed()) - before - 1;
      assert.deepEqual(
        replies,
        names.map((_, i) => `v${i}`),
      );
      assert.ok(reads <= 2, `50 commands took ${reads} reads on Redis's side`);
    } finally {
      raw.disconnect();
      commands.client.disconnect();
    }
  });

  test('writes read the change stream only once its oldest event leaves the window (the trim-due time)', async () => {
    const windowMs = 300;
    const s = await connect({ historyMs: windowMs, listCache: false });
    const raw = new Redis(url());
    const timeOf = (entry: [string, string[]] | undefined): number => Number(entry?.[1][1]);
    try {
      const t = freshType();
      const k = typeKeys('capstan:', t);
      // After every write the time is the oldest kept event's plus the window: a write before it
      // had nothing to trim (the head stayed), one after it read the head, trimmed and set it anew.
      const dueFollowsHead = async (): Promise<Array<[string, string[]]>> => {
        const entries = await raw.xrange(k.stream, '-', '+');
        assert.equal(Number(await raw.get(k.trimDue)), timeOf(entries[0]) + windowMs);
        return entries;
      };
      await s.create(t, 'a', obj('a'));
      await dueFollowsHead();
      await s.create(t, 'b', obj('b'));
      const written = await dueFollowsHead();
      // Once Redis's clock has passed the newest event's window, the next write trims all before it.
      const newest = timeOf(written[written.length - 1]);
      for (;;) {
        const [seconds, micros] = await raw.time();
        if (Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) > newest + windowMs + 1) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await s.create(t, 'c', obj('c'));
      assert.deepEqual(
        (await dueFollowsHead()).map(([id]) => id),
        ['4-0'],
      );
      await rejectsWith(s.list(t, { resourceVersion: '2' }), 'Gone', '3');
      // A value no script wrote is no time: the next write reads the head and writes the time again.
      await raw.set(k.trimDue, 'not a time');
      await s.create(t, 'd', obj('d'));
      await dueFollowsHead();
    } finally {
      raw.disconnect();
      await s.close();
    }
  });

  test('keys of a type share one hash tag; scripts are loaded once and survive SCRIPT FLUSH', async () => {
    const s = await connect({ keyPrefix: 'iso:' });
    const raw = new Redis(url());
    try {
      const t = freshType();
      await s.create(t, 'a', obj('a'));
      const keys = (await raw.keys(`iso:{${t}}*`)).sort();
      assert.deepEqual(keys, [`iso:{${t}}:changes`, `iso:{${t}}:changes:trim-due`, `iso:{${t}}:index`, `iso:{${t}}:objects`, `iso:{${t}}:rv`]);
      await raw.script('FLUSH');
      assert.equal((await s.create(t, 'b', obj('b'))).resourceVersion, '3');
    } finally {
      raw.disconnect();
      await s.close();
    }
  });

  test('acknowledged writes survive kill -9 of an AOF (appendfsync always) server; Unavailable while it is down', async () => {
    const aof = await startRedis({ appendOnly: true });
    const s = await connectRedisBackend({ url: aof.url, historyMs: 60_000, onError: quiet, commandTimeoutMs: 1000 });
    try {
      const t = freshType();
      const acknowledged = [];
      for (let i = 0; i < 50; i++) acknowledged.push(await s.create(t, `k${String(i).padStart(2, '0')}`, obj(`k${i}`, undefined, { list: [] })));
      await aof.kill9();
      assert.equal(await s.ready(), false);
      await rejectsWith(s.create(t, 'during', obj('during')), 'Unavailable');
      await rejectsWith(s.get(t, 'k00'), 'Unavailable');
      await aof.restart();
      for (let i = 0; i < 100 && !(await s.ready()); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await s.ready(), true);
      const listed = await s.list(t);
      assert.deepEqual(listed.items, acknowledged);
      assert.equal(listed.resourceVersion, '51');
      const r = new Recorder();
      const stop = new AbortController();
      await s.watch(t, '1', r.listener, stop.signal);
      await r.until(50);
      stop.abort();
      assert.equal(r.events.length, 50);
      assert.equal((await s.create(t, 'after', obj('after'))).resourceVersion, '52');
    } finally {
      await s.close();
      await aof.stop();
    }
  });

  test('a watch reader that reconnects to a history missing changes it delivered (a failover) ends its watches with Gone and follows what survived', async () => {
    const s = await connect();
    const raw = new Redis(url());
    const stop = new AbortController();
    try {
      const t = freshType();
      const keys = typeKeys('capstan:', t);
      const r = new Recorder();
      const ended: StorageError[] = [];
      await s.watch(t, '1', r.listener, stop.signal, (err) => ended.push(err));
      for (let i = 0; i < 5; i++) await s.create(t, `ns/a${i}`, obj(`a${i}`, 'ns'));
      await r.until(5);
      assert.deepEqual(r.versions(), ['2', '3', '4', '5', '6']);
      // What a failover to a replica that missed the last two writes leaves behind, then a write
      // there that takes version 5 again; every client connection drops, as Sentinel makes them.
      await raw.xdel(keys.stream, '5-0', '6-0');
      await raw.call('XSETID', keys.stream, '4-0');
      await raw.set(keys.counter, '4');
      const other = await connect();
      try {
        await raw.call('CLIENT', 'KILL', 'TYPE', 'normal');
        await other.create(t, 'ns/b', obj('b', 'ns'));
        // Polls for the end (the reader notices on its next read after reconnecting; slow on a busy machine).
        for (let i = 0; i < 600 && ended.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
        assert.equal(ended[0]?.code, 'Gone', 'the watch that saw versions 5 and 6 ends: they no longer exist');
        assert.equal(r.events.length, 5, 'the reused version 5 is not delivered as if it followed 6');
        // A watch from the surviving version sees the surviving history.
        const again = new Recorder();
        await s.watch(t, '4', again.listener, stop.signal);
        await again.until(1);
        assert.equal(again.events[0]?.key, 'ns/b');
        assert.equal(again.events[0]?.resourceVersion, '5');
      } finally {
        await other.close();
      }
    } finally {
      stop.abort();
      raw.disconnect();
      await s.close();
    }
  });

  test('waitReplicas: writes resolve once a replica has them; Timeout (outcome unknown) when no replica acknowledges; watches and reads show only replicated changes', async () => {
    const primary = await startRedis({ args: ['--repl-diskless-sync-delay', '0'] });
    const replica = await startRedis();
    const raw = new Redis(replica.url);
    const onPrimary = new Redis(primary.url);
    const stop = new AbortController();
    // Without a replica answering, a write times out (a short bound: this is the failure being
    // tested); with one, WAIT returns as soon as the replica acknowledges, so a long bound costs
    // nothing and holds however slowly a loaded machine runs.
    await raw.replicaof('127.0.0.1', primary.port);
    const s = await connectRedisBackend({ url: primary.url, historyMs: 60_000, onError: quiet, waitReplicas: 1, waitTimeoutMs: 300 });
    const patient = await connectRedisBackend({ url: primary.url, historyMs: 60_000, onError: quiet, waitReplicas: 1, waitTimeoutMs: 60_000 });
    try {
      const t = freshType();
      const first = await patient.create(t, 'first', obj('first'));
      const r = new Recorder();
      await s.watch(t, '1', r.listener, stop.signal);
      await r.until(1, 30_000);
      // The replica stays connected but applies and acknowledges nothing.
      process.kill(replica.pid!, 'SIGSTOP');
      try {
        // The write stands on the primary, unconfirmed: it may survive a failover or not.
        await rejectsWith(s.create(t, 'lonely', obj('lonely')), 'Timeout');
        // The watch reader has read it and waits (WAIT) for a replica before showing it: a failover
        // now would discard it, and a watch must not show what storage may lose.
        const fenceWaiting = async (): Promise<boolean> => /cmd=wait\b/.test(String(await onPrimary.call('CLIENT', 'LIST')));
        const deadline = Date.now() + 30_000;
        while (!(await fenceWaiting())) {
          if (Date.now() > deadline) throw new Error('the watch reader never waited for a replica');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.equal(r.events.length, 1, 'the watch showed an unreplicated change');
        // Nor does a read: a get, a list, the counter and a refused precondition all saw the
        // unreplicated write, and are refused (503) rather than answered.
        const unconfirmed = /read not confirmed: acknowledged by 0 of 1 replicas|answer not confirmed/;
        assert.match((await rejectsWith(s.get(t, 'lonely'), 'Unavailable')).message, unconfirmed);
        assert.match((await rejectsWith(s.get(t, 'first'), 'Unavailable')).message, unconfirmed);
        assert.match((await rejectsWith(s.list(t), 'Unavailable')).message, unconfirmed);
        assert.match((await rejectsWith(s.currentResourceVersion(t), 'Unavailable')).message, unconfirmed);
        assert.match((await rejectsWith(s.create(t, 'lonely', obj('lonely')), 'Unavailable')).message, unconfirmed);
      } finally {
        process.kill(replica.pid!, 'SIGCONT');
      }
      const created = await patient.create(t, 'a', obj('a'));
      const copy = await raw.hget(typeKeys('capstan:', t).objects, 'a');
      assert.ok(copy?.endsWith(created.json));
      // Once a replica has them, the watch shows both, in order, and reads answer.
      await r.until(3, 30_000);
      assert.deepEqual(
        r.events.map((e) => [e.type, e.key]),
        [
          ['ADDED', 'first'],
          ['ADDED', 'lonely'],
          ['ADDED', 'a'],
        ],
      );
      assert.deepEqual(await s.get(t, 'first'), first);
      assert.deepEqual(
        (await patient.list(t)).items.map((o) => o.key),
        ['a', 'first', 'lonely'],
      );
      const onReplica = await connectRedisBackend({ url: replica.url, historyMs: 60_000, onError: quiet });
      try {
        const error = await rejectsWith(onReplica.create(t, 'b', obj('b')), 'Unavailable');
        assert.match(error.message, /READONLY/);
        assert.deepEqual(await onReplica.get(t, 'a'), created);
      } finally {
        await onReplica.close();
      }
    } finally {
      stop.abort();
      raw.disconnect();
      onPrimary.disconnect();
      await s.close();
      await patient.close();
      await replica.stop();
      await primary.stop();
    }
  });

  test('a write whose answer was lost with its connection, re-sent by ioredis and refused, is Timeout (outcome unknown): never a conflict, not-found or 503', async () => {
    const primary = await startRedis({ args: ['--repl-diskless-sync-delay', '0'] });
    const replica = await startRedis();
    const raw = new Redis(replica.url);
    // Between the backends and Redis: Redis applies the write, its answer is lost with the
    // connection, and ioredis sends the write again on the next one, where it is refused.
    const proxy = await startTcpProxy(`http://127.0.0.1:${primary.port}`);
    const through = `redis://127.0.0.1:${proxy.port}`;
    await raw.replicaof('127.0.0.1', primary.port);
    const direct = await connectRedisBackend({ url: primary.url, historyMs: 60_000, onError: quiet });
    const backends: [string, Storage][] = [
      ['without replicas', await connectRedisBackend({ url: through, historyMs: 60_000, onError: quiet })],
      [
        'with waitReplicas 1',
        await connectRedisBackend({ url: through, historyMs: 60_000, onError: quiet, waitReplicas: 1, waitTimeoutMs: 60_000, replicaWaitMs: 60_000 }),
      ],
    ];
    try {
      for (const [label, s] of backends) {
        const t = freshType();
        // Redis then has every write script (a first EVALSHA of one is refused NOSCRIPT, then sent as EVAL).
        const warm = await s.create(t, 'warm', obj('warm'));
        await s.delete(t, 'warm', (await s.update(t, 'warm', obj('warm'), warm.resourceVersion)).resourceVersion);
        const a = await s.create(t, 'doomed-a', obj('doomed-a'));
        const b = await s.create(t, 'doomed-b', obj('doomed-b'));
        const outcomeUnknown = async (write: Promise<unknown>, name: string): Promise<void> => {
          const cut = proxy.cutReplyTo(new RegExp(name));
          const err = await rejectsWith(write, 'Timeout');
          await cut;
          assert.match(err.message, /write outcome unknown/, `${label}: ${name}`);
        };
        await outcomeUnknown(s.delete(t, 'doomed-a', a.resourceVersion), 'doomed-a');
        assert.equal(await direct.get(t, 'doomed-a'), undefined, `${label}: the delete was applied`);
        await outcomeUnknown(s.update(t, 'doomed-b', obj('doomed-b', undefined, { data: { v: 'second' } }), b.resourceVersion), 'doomed-b');
        assert.deepEqual(JSON.parse((await direct.get(t, 'doomed-b'))?.json ?? '{}').data, { v: 'second' }, `${label}: the update was applied`);
        await outcomeUnknown(s.create(t, 'doomed-c', obj('doomed-c')), 'doomed-c');
        assert.ok(await direct.get(t, 'doomed-c'), `${label}: the create was applied`);
        // The connection that replaced the cut one serves as before; a refusal on it stands.
        await rejectsWith(s.create(t, 'doomed-c', obj('doomed-c')), 'AlreadyExists');
        await rejectsWith(s.update(t, 'doomed-b', obj('doomed-b'), b.resourceVersion), 'Conflict');
      }
    } finally {
      for (const [, s] of backends) await s.close();
      await direct.close();
      raw.disconnect();
      await proxy.close();
      await replica.stop();
      await primary.stop();
    }
  });

  test('waitReplicas: connect waits until that many replicas are connected, and says so when they do not come', async () => {
    const primary = await startRedis({ args: ['--repl-diskless-sync-delay', '0'] });
    const replica = await startRedis();
    const raw = new Redis(replica.url);
    try {
      const refused = await rejectsWith(
        connectRedisBackend({ url: primary.url, historyMs: 60_000, onError: quiet, waitReplicas: 1, replicaWaitMs: 300 }),
        'Unavailable',
      );
      assert.match(refused.message, /^Redis has 0 of the 1 connected replicas --redis-wait-replicas asks for \(waited \d+ s\)$/);
      // Connecting while no replica is there: it resolves once one has caught up, and then writes are confirmed.
      const connecting = connectRedisBackend({
        url: primary.url,
        historyMs: 60_000,
        onError: quiet,
        waitReplicas: 1,
        waitTimeoutMs: 60_000,
        replicaWaitMs: 60_000,
      });
      await raw.replicaof('127.0.0.1', primary.port);
      const s = await connecting;
      try {
        const t = freshType();
        const created = await s.create(t, 'a', obj('a'));
        assert.deepEqual(await s.get(t, 'a'), created);
      } finally {
        await s.close();
      }
    } finally {
      raw.disconnect();
      await replica.stop();
      await primary.stop();
    }
  });

  test('waitReplicas: a write acknowledged by N replicas reaches its own watches only once every connected replica has it', async () => {
    const primary = await startRedis({ args: ['--repl-diskless-sync-delay', '0'] });
    const quick = await startRedis();
    const slow = await startRedis();
    const onPrimary = new Redis(primary.url);
    const replicas = [new Redis(quick.url), new Redis(slow.url)];
    const stop = new AbortController();
    for (const r of replicas) await r.replicaof('127.0.0.1', primary.port);
    // Both replicas online as the primary sees them (what the fence counts), not only linked as they see it.
    const online = async (): Promise<number> => ((await onPrimary.info('replication')).match(/^slave\d+:.*state=online/gm) ?? []).length;
    while ((await online()) < 2) await new Promise((resolve) => setTimeout(resolve, 20));
    const s = await connectRedisBackend({ url: primary.url, historyMs: 60_000, onError: quiet, waitReplicas: 1, waitTimeoutMs: 60_000 });
    try {
      const t = freshType();
      const r = new Recorder();
      await s.watch(t, '1', r.listener, stop.signal);
      // The slow replica stays connected but applies nothing: a failover could promote it.
      process.kill(slow.pid!, 'SIGSTOP');
      try {
        // One replica is what the write asks for: it is acknowledged.
        await s.create(t, 'a', obj('a'));
        const fenceWaiting = async (): Promise<boolean> => /cmd=wait\b/.test(String(await onPrimary.call('CLIENT', 'LIST')));
        const deadline = Date.now() + 30_000;
        while (!(await fenceWaiting())) {
          if (Date.now() > deadline) throw new Error('the watch reader never waited for the replicas');
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.equal(r.events.length, 0, 'the writing process showed its own write before every connected replica had it');
      } finally {
        process.kill(slow.pid!, 'SIGCONT');
      }
      await r.until(1, 30_000);
      assert.deepEqual(
        r.events.map((e) => [e.type, e.key]),
        [['ADDED', 'a']],
      );
    } finally {
      stop.abort();
      onPrimary.disconnect();
      for (const r of replicas) r.disconnect();
      await s.close();
      await slow.stop();
      await quick.stop();
      await primary.stop();
    }
  });

  test('connects through Sentinel to the monitored master', async () => {
    if (!server) throw new Error('redis-server not started');
    const sentinel = await startRedisSentinel(server.port, 'capstan');
    const s = await connectRedisBackend({
      sentinels: [{ host: sentinel.host, port: sentinel.port }],
      sentinelName: 'capstan',
      historyMs: 60_000,
      onError: quiet,
    });
    const direct = await connect();
    try {
      const t = freshType();
      const created = await s.create(t, 'a', obj('a'));
      assert.deepEqual(await direct.get(t, 'a'), created);
    } finally {
      await s.close();
      await direct.close();
      await sentinel.stop();
    }
  });

  test('connect fails with Unavailable when nothing listens; ready() and close()', async () => {
    await rejectsWith(connectRedisBackend({ url: 'redis://127.0.0.1:1', historyMs: 1000, onError: quiet, commandTimeoutMs: 300 }), 'Unavailable');
    const s = await connect();
    assert.equal(await s.ready(), true);
    await s.close();
    assert.equal(await s.ready(), false);
    await rejectsWith(s.get(freshType(), 'x'), 'Unavailable');
  });
});
