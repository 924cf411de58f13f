/**
 * ListCachingStorage, the list cache as a decorator of any Storage, over the memory backend (the
 * Redis wiring is covered by redis-list-cache.test.ts and the Redis conformance runs): the
 * decorated store passes the storage conformance suite, and once a type is cached its lists are
 * answered without reading the inner store, with the inner store's answers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ListCachingStorage } from '../../src/storage/list-caching-storage.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { type ListOptions, type ListResult, type Storage, type StorageStats, type StoredObject } from '../../src/storage/storage.js';
import { describeStorageConformance, freshType, obj } from './conformance.js';
import { StorageError } from '../../src/api/storage-error.js';

describeStorageConformance('memory behind ListCachingStorage', async (options) => new ListCachingStorage(new MemoryStorage(options), options));

/** A real MemoryStorage that also counts the lists it was asked for. */
class CountingStorage implements Storage {
  lists = 0;
  readonly memory = new MemoryStorage({ historyMs: 60_000 });
  create(type: string, key: string, object: Record<string, unknown>): Promise<StoredObject> {
    return this.memory.create(type, key, object);
  }
  get(type: string, key: string): Promise<StoredObject | undefined> {
    return this.memory.get(type, key);
  }
  update(type: string, key: string, object: Record<string, unknown>, expected: string): Promise<StoredObject> {
    return this.memory.update(type, key, object, expected);
  }
  delete(type: string, key: string, expected?: string): Promise<StoredObject> {
    return this.memory.delete(type, key, expected);
  }
  list(type: string, options?: ListOptions): Promise<ListResult> {
    this.lists++;
    return this.memory.list(type, options);
  }
  currentResourceVersion(type: string): Promise<string> {
    return this.memory.currentResourceVersion(type);
  }
  advanceVersion(type: string): Promise<string> {
    return this.memory.advanceVersion(type);
  }
  watch(...args: Parameters<Storage['watch']>): Promise<void> {
    return this.memory.watch(...args);
  }
  stats(type: string): Promise<StorageStats> {
    return this.memory.stats(type);
  }
  ready(): Promise<boolean> {
    return this.memory.ready();
  }
  close(): Promise<void> {
    return this.memory.close();
  }
}

/** What a call settled with: its value, or its StorageError's code and message. */
async function outcome(promise: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await promise };
  } catch (err) {
    assert.ok(err instanceof StorageError, String(err));
    return { code: err.code, message: err.message };
  }
}

describe('ListCachingStorage', () => {
  test('once filled, lists do not read the inner store and give its answers', async () => {
    const inner = new CountingStorage();
    const s = new ListCachingStorage(inner, { historyMs: 60_000, fillPageSize: 7 });
    try {
      const t = freshType();
      const create = (i: number): Promise<StoredObject> => s.create(t, `ns/k${String(i).padStart(2, '0')}`, obj(`k${i}`, 'ns'));
      for (let i = 0; i < 25; i++) await create(i);
      assert.equal((await s.list(t)).items.length, 25); // fills the cache at version 26, 7 objects a read
      assert.equal(inner.lists, 4);
      for (let i = 25; i < 50; i++) await create(i);
      const whole = await s.list(t);
      const page = await s.list(t, { namespace: 'ns', limit: 10, afterKey: 'ns/k09' });
      const exact = await s.list(t, { resourceVersion: '30' });
      const filtered = await s.list(t, { limit: 2, filter: (o) => o.key.endsWith('7') });
      assert.equal(inner.lists, 4, 'lists after the fill are served from the cache');
      assert.equal(whole.resourceVersion, '51');
      assert.deepEqual(whole, await inner.memory.list(t));
      assert.deepEqual(page, await inner.memory.list(t, { namespace: 'ns', limit: 10, afterKey: 'ns/k09' }));
      assert.deepEqual(exact, await inner.memory.list(t, { resourceVersion: '30' }));
      assert.deepEqual(
        filtered.items.map((o) => o.key),
        ['ns/k07', 'ns/k17'],
      );
      assert.equal(filtered.hasMore, true);
    } finally {
      await s.close();
    }
  });

  test('a version older than the fill, or a malformed one, is answered by the inner store', async () => {
    const inner = new CountingStorage();
    const s = new ListCachingStorage(inner, { historyMs: 60_000 });
    try {
      const t = freshType();
      for (let i = 0; i < 10; i++) await s.create(t, `k${i}`, obj(`k${i}`));
      await s.list(t); // fills the cache at version 11
      const before = inner.lists;
      const older = await s.list(t, { resourceVersion: '5' });
      assert.equal(inner.lists, before + 1);
      assert.deepEqual(
        older.items.map((o) => o.key),
        ['k0', 'k1', 'k2', 'k3'],
      );
      const cached = await outcome(s.list(t, { resourceVersion: '0x' }));
      assert.equal(inner.lists, before + 2);
      assert.deepEqual(cached, await outcome(inner.memory.list(t, { resourceVersion: '0x' })));
    } finally {
      await s.close();
    }
  });

  test('a list after the inner store moved its version without a change is served from the cache at the new version', async () => {
    const inner = new CountingStorage();
    // A catch-up wait longer than the test's: only the watch's progress can make the cache current.
    const s = new ListCachingStorage(inner, { historyMs: 60_000, catchUpTimeoutMs: 600_000 });
    try {
      const t = freshType();
      await s.create(t, 'a', obj('a'));
      const filled = await s.list(t);
      const before = inner.lists;
      const advanced = await inner.memory.advanceVersion(t);
      assert.equal(BigInt(advanced), BigInt(filled.resourceVersion) + 1n);
      const listed = await s.list(t);
      assert.equal(listed.resourceVersion, advanced);
      assert.deepEqual(listed.items, filled.items);
      assert.deepEqual((await s.list(t, { resourceVersion: filled.resourceVersion })).items, filled.items);
      assert.equal(inner.lists, before, 'served from the cache');
    } finally {
      await s.close();
    }
  });

  test('a list sees writes made on the inner store by another writer', async () => {
    const inner = new CountingStorage();
    const s = new ListCachingStorage(inner, { historyMs: 60_000 });
    try {
      const t = freshType();
      await s.create(t, 'a', obj('a'));
      assert.equal((await s.list(t)).items.length, 1);
      const before = inner.lists;
      const written = await inner.memory.create(t, 'b', obj('b'));
      const listed = await s.list(t);
      assert.equal(listed.resourceVersion, written.resourceVersion);
      assert.deepEqual(
        listed.items.map((o) => o.key),
        ['a', 'b'],
      );
      assert.equal(inner.lists, before, 'served from the cache');
    } finally {
      await s.close();
    }
  });
});
