/**
 * The list cache (ListCachingStorage) in front of the Redis backend, as the server wires it,
 * against a real redis-server: lists are served from the process's cache (no list script runs
 * once it is filled), yet every list sees every write acknowledged before it, through any
 * process; a cache that missed changes or whose store lost its data is rebuilt, never served
 * stale. The storage conformance suite also runs on RedisStorage alone (cache off), so both read
 * paths keep the same behaviour.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { connectRedisBackend, type RedisBackendOptions } from '../../src/storage/redis/open-redis.js';
import type { Storage } from '../../src/storage/storage.js';
import { startRedis, type RedisServer } from '../helpers/redis-process.js';
import { describeStorageConformance, freshType, obj, rejectsWith } from './conformance.js';
import { StorageStatsTracker } from '../../src/flowcontrol/storage-stats-tracker.js';
import { metricsRegistry } from '../../src/metrics/metrics.js';

let server: RedisServer | undefined;
let raw: Redis | undefined;
const quiet = (): void => undefined;

before(async () => {
  server = await startRedis();
  raw = new Redis(server.url);
});
after(async () => {
  raw?.disconnect();
  await server?.stop();
});

function url(): string {
  if (!server) throw new Error('redis-server not started');
  return server.url;
}

function redis(): Redis {
  if (!raw) throw new Error('redis-server not started');
  return raw;
}

/** RedisStorage behind the list cache (ListCachingStorage), as the server runs it; `listCache: false` gives RedisStorage alone. */
async function connect(extra: Partial<RedisBackendOptions> = {}): Promise<Storage> {
  return connectRedisBackend({ url: url(), historyMs: 60_000, onError: quiet, ...extra });
}

/** How many scripts Redis has run so far (EVALSHA and EVAL calls, from INFO commandstats). */
async function scriptCalls(): Promise<number> {
  const info = await redis().info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval|evalsha_ro|eval_ro):calls=(\d+)/gm)) calls += Number(m[1]);
  return calls;
}

/** This process's count of list-cached GETs answered one way (capstan_list_cache_gets_total). */
async function cachedGets(answer: 'current' | 'waited' | 'store'): Promise<number> {
  const text = await metricsRegistry.getSingleMetricAsString('capstan_list_cache_gets_total');
  return Number(new RegExp(`^capstan_list_cache_gets_total\\{answer="${answer}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describeStorageConformance('redis standalone, lists read from Redis (list cache off)', (options) => connect({ ...options, listCache: false }), false);

describe('redis list cache', () => {
  test('once filled, lists run no list script on Redis and still match the stored objects', async () => {
    const s = await connect();
    try {
      const t = freshType();
      const create = (i: number) => s.create(t, `ns/k${String(i).padStart(2, '0')}`, obj(`k${i}`, 'ns'));
      for (let i = 0; i < 25; i++) await create(i);
      assert.equal((await s.list(t)).items.length, 25); // fills the cache at version 26
      for (let i = 25; i < 50; i++) await create(i);
      const before = await scriptCalls();
      const whole = await s.list(t);
      const page = await s.list(t, { namespace: 'ns', limit: 10, afterKey: 'ns/k09' });
      const exact = await s.list(t, { resourceVersion: '30' });
      const after = await scriptCalls();
      assert.equal(after - before, 0, 'lists after the fill are served from the cache');
      assert.equal(whole.items.length, 50);
      assert.equal(whole.resourceVersion, '51');
      assert.deepEqual(
        page.items.map((o) => o.key),
        Array.from({ length: 10 }, (_, i) => `ns/k${10 + i}`),
      );
      assert.equal(page.hasMore, true);
      assert.equal(page.remaining, 30);
      assert.deepEqual(
        exact.items.map((o) => o.key),
        Array.from({ length: 29 }, (_, i) => `ns/k${String(i).padStart(2, '0')}`),
      );
      assert.equal(exact.resourceVersion, '30');
      // A version older than the fill is read from Redis, with the same answer the cache would give.
      const older = await s.list(t, { resourceVersion: '10' });
      assert.equal(await scriptCalls(), after + 1);
      assert.equal(older.items.length, 9);
      // The same reads straight from Redis give the same answers.
      const direct = await connect({ listCache: false });
      try {
        assert.deepEqual(await direct.list(t, { namespace: 'ns', limit: 10, afterKey: 'ns/k09' }), page);
        assert.deepEqual(await direct.list(t, { resourceVersion: '30' }), exact);
        assert.deepEqual((await direct.list(t)).items, whole.items);
      } finally {
        await direct.close();
      }
    } finally {
      await s.close();
    }
  });

  test("a type's mean size is known once this process has cached it, and the LIST estimate's stats find it within a second", async () => {
    const s = await connect();
    try {
      const t = freshType();
      const a = await s.create(t, 'ns/a', obj('a', 'ns', { data: { k: 'v'.repeat(900) } }));
      const b = await s.create(t, 'ns/b', obj('b', 'ns'));
      let now = 1_000_000;
      const tracker = new StorageStatsTracker(s, () => now);
      await tracker.refreshNow(t);
      assert.deepEqual(tracker.get(t), { kind: 'found', stats: { objectCount: 2, averageObjectBytes: undefined } });
      assert.equal((await s.list(t)).items.length, 2); // fills this process's cache
      const sized = { objectCount: 2, averageObjectBytes: Math.floor((a.json.length + b.json.length) / 2) };
      assert.deepEqual(await s.stats(t), sized);
      now += 1001;
      tracker.get(t); // starts the background read
      const deadline = Date.now() + 10_000;
      let answer = tracker.get(t);
      while (!(answer.kind === 'found' && answer.stats.averageObjectBytes !== undefined) && Date.now() < deadline) {
        await sleep(5);
        answer = tracker.get(t);
      }
      assert.deepEqual(answer, { kind: 'found', stats: sized });
    } finally {
      await s.close();
    }
  });

  test('a list through one process sees every write acknowledged through another just before', async () => {
    const writer = await connect();
    const reader = await connect();
    try {
      const t = freshType();
      await writer.create(t, 'ns/seed', obj('seed', 'ns'));
      assert.equal((await reader.list(t)).items.length, 1); // fills the reader's cache
      for (let i = 0; i < 200; i++) {
        const written =
          i % 3 === 2 ? await writer.delete(t, `ns/k${i - 1}`) : await writer.create(t, `ns/k${i}`, obj(`k${i}`, 'ns', { data: { i: String(i) } }));
        const listed = await reader.list(t);
        assert.ok(
          Number(listed.resourceVersion) >= Number(written.resourceVersion),
          `list at ${listed.resourceVersion} after write ${written.resourceVersion}`,
        );
        const keys = listed.items.map((o) => o.key);
        if (i % 3 === 2) assert.ok(!keys.includes(`ns/k${i - 1}`), `deleted ns/k${i - 1} still listed`);
        else assert.ok(keys.includes(`ns/k${i}`), `created ns/k${i} missing`);
      }
      const fromRedis = await connect({ listCache: false });
      try {
        assert.deepEqual((await reader.list(t)).items, (await fromRedis.list(t)).items);
      } finally {
        await fromRedis.close();
      }
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  test('a get through one process sees every write acknowledged through another just before, and reads no object from Redis once its cache has caught up', async () => {
    const writer = await connect();
    // A catch-up wait longer than the test's: every get below is answered from the cache.
    const reader = await connect({ getCacheCatchUpMs: 600_000 });
    const fromRedis = await connect({ listCache: false });
    try {
      const t = freshType();
      const seed = await writer.create(t, 'ns/seed', obj('seed', 'ns'));
      const hgets = async (): Promise<number> => Number(/^cmdstat_hget:calls=(\d+)/m.exec(await redis().info('commandstats'))?.[1] ?? 0);
      const uncached = await hgets();
      assert.deepEqual(await reader.get(t, 'ns/seed'), seed);
      assert.equal(await hgets(), uncached + 1, 'a get of a type no list has cached reads Redis');
      assert.equal((await reader.list(t)).items.length, 1); // fills the reader's cache
      // Writes through another process: each get after one shows it, from the cache or from Redis.
      for (let i = 0; i < 150; i++) {
        const key = `ns/k${i % 10}`;
        const current = await reader.get(t, key);
        const written =
          i % 3 === 2 && current !== undefined
            ? await writer.delete(t, key)
            : current === undefined
              ? await writer.create(t, key, obj(`k${i % 10}`, 'ns', { data: { i: String(i) } }))
              : await writer.update(t, key, obj(`k${i % 10}`, 'ns', { data: { i: String(i) } }), current.resourceVersion);
        const read = await reader.get(t, key);
        if (i % 3 === 2 && current !== undefined) assert.equal(read, undefined, `${key} deleted at ${written.resourceVersion} still read`);
        else assert.deepEqual(read, written, `${key} written at ${written.resourceVersion}`);
      }
      // The changes of another process's writes reach the reader's cache through its stream
      // reader: each get waits for them instead of reading the object (creates run no HGET).
      const beforeCreates = await hgets();
      for (let i = 0; i < 50; i++) {
        const written = await writer.create(t, `ns/new${i}`, obj(`new${i}`, 'ns'));
        assert.deepEqual(await reader.get(t, `ns/new${i}`), written);
      }
      assert.equal(await hgets(), beforeCreates, "the reader's gets after another process's creates read no object from Redis");
      // The reader's stream reader cut off and reconnecting: a get waits for the change it lacks.
      const clients = (await redis().client('LIST')) as string;
      const readerIds = [...clients.matchAll(/^id=(\d+) .*cmd=xread/gm)].map((m) => m[1]);
      assert.ok(readerIds.length > 0, 'stream readers are blocked in XREAD');
      for (const id of readerIds) await redis().client('KILL', 'ID', id);
      const waited = await cachedGets('waited');
      const late = await writer.create(t, 'ns/late', obj('late', 'ns'));
      assert.deepEqual(await reader.get(t, 'ns/late'), late);
      assert.equal(await hgets(), beforeCreates, 'the get waited for the reconnected stream reader instead of reading the object');
      assert.equal(await cachedGets('waited'), waited + 1, 'counted as a get that waited for the cache');
      // Writes through the reader itself reach its cache before they are acknowledged: its gets
      // then read no object from Redis (the update scripts' own HGETs run inside Redis and are
      // counted too, one per update).
      const before = await hgets();
      let updates = 0;
      for (let i = 0; i < 50; i++) {
        const key = `ns/k${i % 10}`;
        const current = await reader.get(t, key);
        const written =
          current === undefined
            ? await reader.create(t, key, obj(`k${i % 10}`, 'ns', { data: { own: String(i) } }))
            : await reader.update(t, key, obj(`k${i % 10}`, 'ns', { data: { own: String(i) } }), current.resourceVersion);
        if (current !== undefined) updates++;
        assert.deepEqual(await reader.get(t, key), written);
        assert.deepEqual(await fromRedis.get(t, key), written);
      }
      assert.equal(await hgets(), before + updates + 50, "the reader's 100 gets read no object from Redis (the 50 HGETs are the uncached process's)");
    } finally {
      await writer.close();
      await reader.close();
      await fromRedis.close();
    }
  });

  test("a get whose cache cannot reach the store's version reads Redis after a short wait", async () => {
    const s = await connect({ getCacheCatchUpMs: 200 });
    try {
      const t = freshType();
      const a = await s.create(t, 'ns/a', obj('a', 'ns'));
      assert.equal((await s.list(t)).items.length, 1); // fills the cache
      // A version that no stream entry carries (the object rewritten by hand, bypassing the
      // scripts): the cache never reaches it, so the get falls back to reading the object.
      const base = `capstan:{${t}}`;
      const stored = (await redis().hget(`${base}:objects`, 'ns/a')) as string;
      const [rv, offset] = stored.split(':', 2);
      const json = stored.slice(rv.length + offset.length + 2);
      const next = String(Number(await redis().incr(`${base}:rv`)));
      const at = Number(offset);
      const rewritten = `${json.slice(0, at)}${next}${json.slice(at + rv.length)}`;
      await redis().hset(`${base}:objects`, 'ns/a', `${next}:${offset}:${rewritten}`);
      const fromStore = await cachedGets('store');
      const started = Date.now();
      const read = await s.get(t, 'ns/a');
      const took = Date.now() - started;
      assert.equal(await cachedGets('store'), fromStore + 1, 'counted as a get answered by the store');
      assert.equal(read?.resourceVersion, next);
      assert.equal(read?.json, rewritten);
      assert.notEqual(read?.json, a.json);
      assert.ok(took < 3000, `answered in ${took} ms, without waiting as long as a list would`);
    } finally {
      await s.close();
    }
  });

  test("a process's copy of an object (peek) is the stored one once its type is cached, and follows another process's writes", async () => {
    const writer = await connect();
    const reader = await connect();
    try {
      const t = freshType();
      const created = await writer.create(t, 'ns/a', obj('a', 'ns', { data: { v: '1' } }));
      assert.equal(reader.peek?.(t, 'ns/a'), undefined, 'no copy before the type is listed');
      await reader.list(t); // fills the reader's cache
      assert.deepEqual(reader.peek?.(t, 'ns/a'), await reader.get(t, 'ns/a'));
      assert.equal(reader.peek?.(t, 'ns/a')?.resourceVersion, created.resourceVersion);
      const updated = await writer.update(t, 'ns/a', obj('a', 'ns', { data: { v: '2' } }), created.resourceVersion);
      // The copy may lag by the change on its way through the stream, never more: it catches up.
      for (let i = 0; reader.peek?.(t, 'ns/a')?.resourceVersion !== updated.resourceVersion; i++) {
        assert.ok(i < 500, `copy still at ${reader.peek?.(t, 'ns/a')?.resourceVersion} after 5 s`);
        await sleep(10);
      }
      assert.deepEqual(reader.peek?.(t, 'ns/a'), await reader.get(t, 'ns/a'));
      await writer.delete(t, 'ns/a');
      for (let i = 0; reader.peek?.(t, 'ns/a') !== undefined; i++) {
        assert.ok(i < 500, 'deleted object still in the copy after 5 s');
        await sleep(10);
      }
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  test("a version another process moved on without a change reaches this process's cache through the stream", async () => {
    const writer = await connect();
    // A catch-up wait longer than the test's: only the stream's progress entry can make the cache current.
    const reader = await connect({ listCacheCatchUpMs: 600_000 });
    try {
      const t = freshType();
      const seed = await writer.create(t, 'ns/seed', obj('seed', 'ns'));
      assert.equal((await reader.list(t)).items.length, 1); // fills the reader's cache
      const advanced = await writer.advanceVersion(t);
      assert.equal(BigInt(advanced), BigInt(seed.resourceVersion) + 1n);
      const before = await scriptCalls();
      const listed = await reader.list(t);
      assert.equal(listed.resourceVersion, advanced);
      assert.deepEqual(listed.items, [seed]);
      assert.equal(await scriptCalls(), before, 'served from the cache');
      // Redis's own list script skips the progress entry: a snapshot before it reads the same objects.
      const direct = await connect({ listCache: false });
      try {
        assert.deepEqual((await direct.list(t, { resourceVersion: seed.resourceVersion })).items, [seed]);
        const next = await writer.create(t, 'ns/next', obj('next', 'ns'));
        assert.deepEqual((await direct.list(t, { resourceVersion: advanced })).items, [seed]);
        assert.deepEqual(
          (await reader.list(t)).items.map((o) => o.key),
          ['ns/next', 'ns/seed'],
        );
        assert.equal(BigInt(next.resourceVersion), BigInt(advanced) + 1n);
      } finally {
        await direct.close();
      }
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  test('a cache whose stream reader missed trimmed changes is rebuilt, never served stale', async () => {
    const s = await connect({ historyMaxEvents: 3 });
    try {
      const t = freshType();
      await s.create(t, 'ns/a', obj('a', 'ns'));
      assert.equal((await s.list(t)).items.length, 1);
      // Cut the stream reader's connection; while it reconnects, more changes than the stream
      // keeps are written, so the reader finds a gap when it reads again.
      let readerIds: string[] = [];
      for (let attempt = 0; attempt < 50 && readerIds.length === 0; attempt++) {
        if (attempt > 0) await sleep(20);
        const clients = (await redis().client('LIST')) as string;
        readerIds = [...clients.matchAll(/^id=(\d+) .*cmd=xread/gm)].map((m) => m[1]);
      }
      assert.ok(readerIds.length > 0, 'the stream reader is blocked in XREAD');
      for (const id of readerIds) await redis().client('KILL', 'ID', id);
      for (let i = 0; i < 10; i++) await s.create(t, `ns/b${i}`, obj(`b${i}`, 'ns'));
      await sleep(300);
      const started = Date.now();
      const listed = await s.list(t);
      assert.equal(listed.items.length, 11, listed.items.map((o) => o.key).join(','));
      assert.equal(listed.resourceVersion, '12');
      const took = Date.now() - started;
      assert.ok(took < 2000, `answered in ${took} ms, without waiting for a cache that cannot catch up`);
      // The rebuilt cache follows new writes again.
      await s.create(t, 'ns/c', obj('c', 'ns'));
      const before = await scriptCalls();
      assert.equal((await s.list(t)).items.length, 12);
      assert.equal(await scriptCalls(), before, 'served from the rebuilt cache');
    } finally {
      await s.close();
    }
  });

  test('after the store lost its data (FLUSHALL), lists show the store, not the cache', async () => {
    const s = await connect();
    try {
      const t = freshType();
      for (let i = 0; i < 5; i++) await s.create(t, `ns/k${i}`, obj(`k${i}`, 'ns'));
      assert.equal((await s.list(t)).items.length, 5);
      await redis().flushall();
      await s.create(t, 'ns/new', obj('new', 'ns'));
      const listed = await s.list(t);
      assert.deepEqual(
        listed.items.map((o) => o.key),
        ['ns/new'],
      );
      assert.equal(listed.resourceVersion, '2');
    } finally {
      await s.close();
    }
  });

  test('a list whose cache cannot be filled because Redis does not answer fails after one timeout', async () => {
    // One timeout (1 s) against two (2 s), with room for timers late on a machine whose cores are busy.
    const s = await connect({ commandTimeoutMs: 1000 });
    try {
      const t = freshType();
      await s.create(t, 'ns/a', obj('a', 'ns'));
      // Every client's commands wait while Redis is paused, as with a frozen server.
      await redis().call('CLIENT', 'PAUSE', '2500', 'ALL');
      const started = Date.now();
      await rejectsWith(s.list(t), 'Unavailable');
      const took = Date.now() - started;
      assert.ok(took < 1800, `failed after ${took} ms: one command timeout, not a second read of Redis`);
      // Answered once the pause is over (this client has no command timeout).
      await redis().call('PING');
      assert.deepEqual(
        (await s.list(t)).items.map((o) => o.key),
        ['ns/a'],
        'the next list fills the cache',
      );
    } finally {
      await s.close();
    }
  });
});
