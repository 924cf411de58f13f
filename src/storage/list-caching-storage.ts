/**
 * The list cache as a decorator: a Storage that serves `list` from a per-process cache of each
 * listed type and passes everything else to the backend it wraps.
 */
import { ListCache } from './list-cache.js';
import { isResourceVersion } from './resource-version.js';
import type { ListOptions, ListResult, Storage, StorageStats, StoredObject } from './storage.js';

/** How much history the cache keeps and how long a list waits for it. */
export interface ListCachingStorageOptions {
  /** How long each cached type keeps change history, in ms; use the inner backend's window. */
  historyMs: number;
  /** Most changes each cached type keeps, whatever their age (default 1,000,000). */
  historyMaxEvents?: number;
  /** How long a list waits for the cache to catch up before reading the inner backend (default 3000 ms). */
  catchUpTimeoutMs?: number;
  /** How long a get waits for the cache to catch up before reading the inner backend (default 100 ms). */
  getCatchUpTimeoutMs?: number;
  /** Objects read per page while a type's cache is first filled (default 1000). */
  fillPageSize?: number;
  /** Clock of the cached history, replaceable in tests. */
  now?: () => number;
  /** Receives cache failures that have no caller (a cache dropped for missed changes, a failed fill). */
  onError?: (message: string, err: unknown) => void;
}

function logListCacheError(message: string, err: unknown): void {
  console.error(`[list-cache] ${message}`, err ?? '');
}

/**
 * Wraps `inner` so lists are served from memory (kube-apiserver's watch cache), with the same
 * observable behaviour as `inner` alone. Writes, watches, versions, counts, readiness all go
 * to `inner` unchanged; `stats` adds the mean object size of a cached type.
 *
 * `list` is answered by the cache when it can vouch for the answer (see ListCache): a list without
 * a version once the cache has caught up to the version `inner` reports after the list arrived (so
 * it sees every write acknowledged before it, through any process sharing `inner`'s data); a list at
 * a version within the cache's own history. Otherwise, and for a malformed version (which `inner`
 * refuses in its own words), it reads `inner`. A failure to fill the cache because `inner` is
 * unreachable fails the list with `inner`'s error. `get` is answered by the cache once a list has
 * filled its type's cache (a get alone never fills one) and the cache has reached the version
 * `inner` reports after the get arrived; a get waits for a lagging cache for a short while only
 * (`getCatchUpTimeoutMs`), then reads `inner`.
 *
 * The seam is the Storage contract only: the cache fills from `inner.list` at one version, follows
 * `inner.watch` from there and compares against `inner.currentResourceVersion`. It is worth having
 * when those lists are remote and watches cheap to share. The Redis backend is such a store (every
 * list is a round trip; its watches of a type share one stream reader, and concurrent version reads
 * share one GET), and the server wraps it (see open-redis). The memory backend already serves lists
 * from memory, so wrapping it only doubles the memory used; tests do it to check the decorator.
 */
export class ListCachingStorage implements Storage {
  private readonly cache: ListCache;

  constructor(
    private readonly inner: Storage,
    options: ListCachingStorageOptions,
  ) {
    this.cache = new ListCache(inner, {
      historyMs: options.historyMs,
      historyMaxEvents: options.historyMaxEvents ?? 1_000_000,
      catchUpTimeoutMs: options.catchUpTimeoutMs,
      getCatchUpTimeoutMs: options.getCatchUpTimeoutMs,
      fillPageSize: options.fillPageSize,
      now: options.now,
      onError: options.onError ?? logListCacheError,
    });
  }

  create(type: string, key: string, object: Record<string, unknown>): Promise<StoredObject> {
    return this.inner.create(type, key, object);
  }

  /**
   * From the cache when `type` is cached (some list filled it) and the cache reaches the store's
   * version read after the call within `getCatchUpTimeoutMs`, else from the inner backend: the same
   * answer either way.
   * Concurrent gets of a type share that version read (the inner backend's currentResourceVersion),
   * where each would otherwise read its object.
   */
  get(type: string, key: string): Promise<StoredObject | undefined> {
    if (!this.cache.follows(type)) return this.inner.get(type, key);
    return this.cache.get(type, key).then((cached) => (cached !== undefined ? cached.object : this.inner.get(type, key)));
  }

  /** The cached copy, when `type`'s cache is filled and following the store (it may lag behind). */
  peek(type: string, key: string): StoredObject | undefined {
    return this.cache.peek(type, key);
  }

  update(type: string, key: string, object: Record<string, unknown>, expectedResourceVersion: string): Promise<StoredObject> {
    return this.inner.update(type, key, object, expectedResourceVersion);
  }

  delete(type: string, key: string, expectedResourceVersion?: string): Promise<StoredObject> {
    return this.inner.delete(type, key, expectedResourceVersion);
  }

  advanceVersion(type: string): Promise<string> {
    return this.inner.advanceVersion(type);
  }

  /** From the cache when it can vouch for the answer, else from the inner backend: the same snapshot either way. */
  async list(type: string, options: ListOptions = {}): Promise<ListResult> {
    const requested = options.resourceVersion;
    const cached = requested === undefined || isResourceVersion(requested) ? await this.cache.list(type, options) : undefined;
    return cached ?? this.inner.list(type, options);
  }

  currentResourceVersion(type: string): Promise<string> {
    return this.inner.currentResourceVersion(type);
  }

  watch(...args: Parameters<Storage['watch']>): Promise<void> {
    return this.inner.watch(...args);
  }

  /** The inner backend's count, with the mean object size of the cached copy once the type is cached. */
  async stats(type: string): Promise<StorageStats> {
    const stats = await this.inner.stats(type);
    return { objectCount: stats.objectCount, averageObjectBytes: this.cache.averageObjectBytes(type) ?? stats.averageObjectBytes };
  }

  ready(): Promise<boolean> {
    return this.inner.ready();
  }

  /** Stops every cached type's watch, drops the cached objects, then closes the inner backend. */
  async close(): Promise<void> {
    this.cache.close();
    await this.inner.close();
  }
}
