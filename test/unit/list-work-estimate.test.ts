/**
 * kube 1.36's size-based LIST work estimate (`SizeBasedListCostEstimate`): a seat per 100 kB a LIST
 * holds at once, from the stored type's count and mean object size, as read from a real memory
 * store through the stats tracker; and the cases around it (watches, single names, options that do
 * not convert, unknown and stale stats, the level's cap).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageStatsTracker } from '../../src/flowcontrol/storage-stats-tracker.js';
import { WatchTracker } from '../../src/flowcontrol/watch-tracker.js';
import { listSeatsBySize, WorkEstimator, type EstimatedRequest } from '../../src/flowcontrol/work-estimator.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';

describe('listSeatsBySize (kube list_work_estimator)', () => {
  /** [total bytes, objects, from cache, options, single, seats], kube's own cases where its table has them. */
  const cases: [number, number, boolean, { limit: number; selects: boolean }, boolean, number][] = [
    [99_999, 99, false, { limit: 0, selects: false }, false, 1],
    [999_999, 1000, false, { limit: 0, selects: false }, false, 10],
    [999_999, 1000, false, { limit: 100, selects: false }, false, 1],
    [999_999, 1000, false, { limit: 100, selects: true }, false, 5],
    [999_999, 1000, true, { limit: 100, selects: true }, false, 1],
    [999_999, 99, false, { limit: 10, selects: false }, false, 2],
    [999_999, 99, false, { limit: 10, selects: true }, false, 5],
    [9_999_999, 1000, false, { limit: 0, selects: false }, false, 100],
    [9_999_999, 1000, true, { limit: 0, selects: false }, false, 10],
    [9_999_999, 99, false, { limit: 10, selects: false }, false, 11],
    [999_999_999, 1000, false, { limit: 0, selects: false }, true, 10],
  ];
  for (const [total, count, fromCache, options, single, seats] of cases) {
    test(`${total} B in ${count} objects, ${fromCache ? 'cache' : 'storage'}, limit ${options.limit}${options.selects ? ', selector' : ''}${single ? ', one name' : ''}: ${seats}`, () => {
      assert.equal(listSeatsBySize({ objectCount: count, averageObjectBytes: Math.floor(total / count) }, options, fromCache, single), seats);
    });
  }

  test('an unknown size counts 1.5 MB an object, unless the type is empty', () => {
    assert.equal(listSeatsBySize({ objectCount: 3, averageObjectBytes: undefined }, { limit: 0, selects: false }, false, false), 45);
    assert.equal(listSeatsBySize({ objectCount: 3, averageObjectBytes: undefined }, { limit: 0, selects: false }, true, false), 10);
    assert.equal(listSeatsBySize({ objectCount: 0, averageObjectBytes: undefined }, { limit: 0, selects: false }, true, false), 0);
  });
});

describe('WorkEstimator over a memory store', () => {
  const NS = 'est';

  async function storeWith(counts: Record<string, { objects: number; dataBytes: number }>): Promise<{ storage: MemoryStorage; tracker: StorageStatsTracker }> {
    const storage = new MemoryStorage({ historyMs: 60_000 });
    for (const [type, { objects, dataBytes }] of Object.entries(counts)) {
      for (let i = 0; i < objects; i++) {
        await storage.create(type, `${NS}/o-${i}`, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `o-${i}`, namespace: NS },
          data: { k: 'x'.repeat(dataBytes) },
        });
      }
    }
    const tracker = new StorageStatsTracker(storage);
    for (const type of Object.keys(counts)) await tracker.refreshNow(type);
    return { storage, tracker };
  }

  function request(verb: string, query: string, extra: Partial<EstimatedRequest> = {}): EstimatedRequest {
    return {
      verb,
      apiGroup: '',
      resource: 'configmaps',
      namespace: NS,
      name: '',
      subresource: '',
      storageType: 'configmaps',
      query: new URLSearchParams(query),
      ...extra,
    };
  }

  const ignore = (): void => undefined;

  test('a LIST of big objects takes more seats than a LIST of as many small ones; both follow the stored mean size', async () => {
    const { storage, tracker } = await storeWith({ configmaps: { objects: 300, dataBytes: 2000 }, secrets: { objects: 300, dataBytes: 10 } });
    const estimator = new WorkEstimator(tracker, new WatchTracker());
    const big = await storage.stats('configmaps');
    const small = await storage.stats('secrets');
    assert.equal(big.objectCount, 300);
    const listed = (await storage.list('configmaps')).items;
    assert.equal(big.averageObjectBytes, Math.floor(listed.reduce((n, o) => n + o.json.length, 0) / listed.length));
    assert.ok(big.averageObjectBytes !== undefined && big.averageObjectBytes > 2000);
    // From the cache: 300 × ~2.1 kB, over 100 kB a seat.
    const bigSeats = estimator.estimate(request('list', ''), 0, ignore).initialSeats;
    assert.equal(bigSeats, Math.ceil((300 * big.averageObjectBytes) / 100_000));
    const smallSeats = estimator.estimate(request('list', '', { resource: 'secrets', storageType: 'secrets' }), 0, ignore).initialSeats;
    assert.equal(smallSeats, Math.ceil((300 * (small.averageObjectBytes ?? 0)) / 100_000));
    assert.ok(bigSeats > smallSeats, `${bigSeats} > ${smallSeats}`);
  });

  test('limit, storage reads, selectors, names, watches and the caps change the estimate as kube does', async () => {
    const { storage, tracker } = await storeWith({ configmaps: { objects: 400, dataBytes: 4000 } });
    const estimator = new WorkEstimator(tracker, new WatchTracker());
    const average = (await storage.stats('configmaps')).averageObjectBytes ?? 0;
    const seatsOf = (verb: string, query: string, levelMax = 0, extra: Partial<EstimatedRequest> = {}): number =>
      estimator.estimate(request(verb, query, extra), levelMax, ignore).initialSeats;
    // From the cache: at most 1 MB held at once.
    assert.equal(seatsOf('list', ''), 10);
    assert.equal(seatsOf('list', 'limit=20'), Math.ceil((20 * average) / 100_000));
    assert.equal(seatsOf('list', 'resourceVersion=0&limit=20'), Math.ceil((20 * average) / 100_000));
    // From storage (a limit with an exact version, a continue): the limit's worth, half the type with a selector.
    assert.equal(seatsOf('list', 'limit=20&resourceVersion=5'), Math.ceil((20 * average) / 100_000));
    assert.equal(seatsOf('list', 'limit=20&resourceVersion=5&labelSelector=a%3Db'), Math.ceil((200 * average) / 100_000));
    assert.equal(seatsOf('list', 'limit=300&resourceVersion=5&fieldSelector=a%3Db'), 10);
    assert.equal(seatsOf('list', 'limit=20&continue=abc'), Math.ceil((20 * average) / 100_000));
    assert.equal(seatsOf('list', 'limit=2&resourceVersionMatch=Exact&resourceVersion=5'), 1);
    // One name: one object.
    assert.equal(seatsOf('list', '', 0, { name: 'o-1' }), 1);
    // A watch costs its initial list, unless it starts from a version without initial events.
    assert.equal(seatsOf('watch', ''), 10);
    assert.equal(seatsOf('watch', 'resourceVersion=0'), 10);
    assert.equal(seatsOf('watch', 'resourceVersion=7'), 1);
    assert.equal(seatsOf('watch', 'resourceVersion=7&sendInitialEvents=1'), 10);
    assert.equal(seatsOf('watch', 'resourceVersion=7&sendInitialEvents=false'), 1);
    // The level's cap; options that do not convert take the most.
    assert.equal(seatsOf('list', '', 4), 4);
    assert.equal(seatsOf('list', 'limit=x', 6), 6);
    assert.equal(seatsOf('list', 'limit=1&timeoutSeconds=1.5'), 10);
    // A type without stats yet (or not served) takes one seat.
    assert.equal(seatsOf('list', '', 0, { resource: 'pods', storageType: 'pods' }), 1);
    assert.equal(seatsOf('list', '', 0, { resource: 'widgets', storageType: undefined }), 1);
  });

  test('stale stats (not refreshed for 3 minutes) take the most: a billion objects of 1.5 MB', async () => {
    let now = 1_000_000;
    const storage = new MemoryStorage({ historyMs: 60_000 });
    await storage.create('configmaps', `${NS}/a`, { metadata: { name: 'a', namespace: NS } });
    const fresh = new StorageStatsTracker(storage, () => now);
    await fresh.refreshNow('configmaps');
    assert.equal(new WorkEstimator(fresh, new WatchTracker()).estimate(request('list', ''), 0, ignore).initialSeats, 1);
    now += 3 * 60_000 + 1;
    assert.deepEqual(fresh.get('configmaps'), { kind: 'stale' });
    assert.equal(new WorkEstimator(fresh, new WatchTracker()).estimate(request('list', ''), 0, ignore).initialSeats, 10);
  });
});
