import { compareResourceVersions } from './resource-version.js';
import { type ChangeEvent, type ListOptions, type ListResult, type Storage, type StoredObject } from './storage.js';
import { VersionedCollection, type HistoryLimits } from './versioned-collection.js';
import { StorageError } from '../api/storage-error.js';
import { recordListCacheGet } from '../metrics/metrics.js';

/**
 * What the cache reads from the store behind it: pages of the store's own lists (`list`), its
 * change stream and version progress (`watch`) and its newest version (`currentResourceVersion`). Any Storage is one;
 * the cache relies only on the contract of these three methods.
 */
export type ListCacheSource = Pick<Storage, 'list' | 'watch' | 'currentResourceVersion'>;

/** How much history the cache keeps per type, and how it waits and reports. */
export interface ListCacheOptions extends HistoryLimits {
  /** How long a consistent list waits for the cache to catch up before the store is read (ms). */
  catchUpTimeoutMs?: number;
  /** How long a consistent get waits for the cache to catch up before the store is read (ms). */
  getCatchUpTimeoutMs?: number;
  /** Objects read per page while a type's cache is first filled. */
  fillPageSize?: number;
  now?: () => number;
  onError: (message: string, err: unknown) => void;
}

/** One type's objects, kept current from the store's change stream. */
class TypeReplica {
  readonly stop = new AbortController();
  private readonly waiters = new Set<{ rv: string; done: (caughtUp: boolean) => void }>();

  constructor(
    readonly collection: VersionedCollection,
    private readonly now: () => number,
  ) {}

  readonly apply = (event: ChangeEvent): void => {
    // Replays can overlap what the fill read; anything not newer is already in.
    if (compareResourceVersions(event.resourceVersion, this.collection.resourceVersion) <= 0) return;
    this.collection.apply(event, this.now());
    for (const w of this.waiters) {
      if (compareResourceVersions(w.rv, event.resourceVersion) <= 0) w.done(true);
    }
  };

  /** The store moved to `rv` without a change (Storage.advanceVersion): the replica is current there too. */
  readonly advance = (rv: string): void => {
    if (compareResourceVersions(rv, this.collection.resourceVersion) <= 0) return;
    this.collection.advance(rv);
    for (const w of this.waiters) {
      if (compareResourceVersions(w.rv, rv) <= 0) w.done(true);
    }
  };

  /** Resolves true once the replica has reached `rv`, false after `timeoutMs` or when dropped. */
  caughtUpTo(rv: string, timeoutMs: number): Promise<boolean> {
    if (compareResourceVersions(rv, this.collection.resourceVersion) <= 0) return Promise.resolve(true);
    if (this.stop.signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        rv,
        done: (caughtUp: boolean): void => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(caughtUp);
        },
      };
      const timer = setTimeout(() => waiter.done(false), timeoutMs);
      this.waiters.add(waiter);
    });
  }

  dispose(): void {
    this.stop.abort();
    for (const w of [...this.waiters]) w.done(false);
  }
}

/**
 * The per-process cache that serves lists of a store (kube-apiserver's watch cache): for each type
 * listed, a full copy of its objects and recent history, filled once with paged reads at one
 * version and then kept current by a watch of the type from that version.
 *
 * Guarantees: a list without a version is served only once the cache has caught up to the
 * version the store had when the list arrived (so it sees every write acknowledged before it, from
 * any process); a list at a version is served only when that version lies within the cache's own
 * history. Otherwise `list` answers undefined and the caller reads the store: a cache that lags
 * (its watch cut off from the store), lost changes to history trimming, or sees the store's version go
 * backwards (data loss) is never served from, and the last two are rebuilt on the next list. A fill
 * that fails because the store is unreachable fails the list with that error.
 */
export class ListCache {
  private readonly replicas = new Map<string, Promise<TypeReplica | undefined>>();
  /** The replicas whose fill has finished, by type. */
  private readonly filled = new Map<string, TypeReplica>();
  private readonly now: () => number;
  private closed = false;

  constructor(
    private readonly source: ListCacheSource,
    private readonly options: ListCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** A page served from the cache, or undefined when the caller must read the store instead. */
  async list(type: string, options: ListOptions): Promise<ListResult | undefined> {
    const replica = await this.replica(type);
    if (!replica || replica.stop.signal.aborted) return undefined;
    const requested = options.resourceVersion;
    let target: string;
    if (requested === undefined) {
      const current = await this.storeVersion(type, replica);
      if (current === undefined) return undefined;
      target = current;
    } else {
      if (compareResourceVersions(requested, replica.collection.oldestResourceVersion) < 0) return undefined;
      if (compareResourceVersions(requested, replica.collection.resourceVersion) > 0) {
        // The store decides TooLarge for a version it has not reached.
        const current = await this.source.currentResourceVersion(type);
        if (compareResourceVersions(requested, current) > 0) return undefined;
      }
      target = requested;
    }
    if (!(await replica.caughtUpTo(target, this.options.catchUpTimeoutMs ?? 3000))) return undefined;
    try {
      return replica.collection.list(options);
    } catch (err) {
      if (err instanceof StorageError && (err.code === 'Gone' || err.code === 'TooLarge')) return undefined;
      throw err;
    }
  }

  /**
   * A consistent read of one object from the cache: once `type`'s cache is filled, and once the
   * cache has reached the version the store reports after the call, the answer shows every write
   * acknowledged before it, through any process. `{ object }` (undefined object: not found), or
   * undefined when the caller must read the store: the type is not cached (a get never fills a
   * cache), the cache has not reached that version within `getCatchUpTimeoutMs` (default 100 ms;
   * the changes it lacks were written before the version was read, so they are normally already on
   * their way from the store), or the store's version went back.
   */
  async get(type: string, key: string): Promise<{ object: StoredObject | undefined } | undefined> {
    const replica = this.filled.get(type);
    if (replica === undefined || replica.stop.signal.aborted) return undefined;
    const target = await this.storeVersion(type, replica);
    if (target === undefined) return undefined;
    if (compareResourceVersions(target, replica.collection.resourceVersion) <= 0) {
      recordListCacheGet('current');
    } else if (await replica.caughtUpTo(target, this.options.getCatchUpTimeoutMs ?? 100)) {
      recordListCacheGet('waited');
    } else {
      recordListCacheGet('store');
      return undefined;
    }
    return { object: replica.collection.get(key) };
  }

  /** Whether `type` has a filled cache that a get can be answered from (see get). */
  follows(type: string): boolean {
    const replica = this.filled.get(type);
    return replica !== undefined && !replica.stop.signal.aborted;
  }

  /**
   * The store's version of `type`, read after the call; undefined when it is older than
   * `replica`'s (the store lost data: the replica is dropped and rebuilt on the next list).
   */
  private async storeVersion(type: string, replica: TypeReplica): Promise<string | undefined> {
    const before = replica.collection.resourceVersion;
    const target = await this.source.currentResourceVersion(type);
    if (compareResourceVersions(target, before) < 0) {
      this.drop(type, replica, `the store's version of ${type} went back from ${before} to ${target}; rebuilding its list cache`);
      return undefined;
    }
    return target;
  }

  /**
   * Mean JSON length of `type`'s objects once its cache is filled (kept current from its stream,
   * as kube's size estimator is from its cacher); undefined before, or when the type is empty.
   */
  averageObjectBytes(type: string): number | undefined {
    const replica = this.filled.get(type);
    return replica === undefined || replica.stop.signal.aborted ? undefined : replica.collection.averageObjectBytes;
  }

  /**
   * The cached object under `key` once `type`'s cache is filled and following the store; it may
   * lag behind the store by the changes still on their way.
   */
  peek(type: string, key: string): StoredObject | undefined {
    const replica = this.filled.get(type);
    return replica === undefined || replica.stop.signal.aborted ? undefined : replica.collection.get(key);
  }

  /** Stops every type's stream subscription and drops the cached objects. */
  close(): void {
    this.closed = true;
    const pending = [...this.replicas.values()];
    this.replicas.clear();
    this.filled.clear();
    for (const p of pending) void p.then((r) => r?.dispose());
  }

  private replica(type: string): Promise<TypeReplica | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    let pending = this.replicas.get(type);
    if (!pending) {
      pending = this.fill(type).catch((err: unknown) => {
        // Not cached this time; the next list fills again.
        this.replicas.delete(type);
        // An unreachable store fails the list itself: reading it once more would only wait a second timeout.
        if (err instanceof StorageError && (err.code === 'Unavailable' || err.code === 'Timeout')) throw err;
        // History that moved on during the fill: the list reads the store directly this time.
        if (!(err instanceof StorageError)) this.options.onError(`filling the list cache of ${type} failed`, err);
        return undefined;
      });
      this.replicas.set(type, pending);
    }
    return pending;
  }

  /** Reads the whole type page by page at one version, then follows the stream from there. */
  private async fill(type: string): Promise<TypeReplica> {
    const items: StoredObject[] = [];
    let at: string | undefined;
    let afterKey: string | undefined;
    for (;;) {
      const page = await this.source.list(type, { limit: this.options.fillPageSize ?? 1000, afterKey, resourceVersion: at });
      at = page.resourceVersion;
      for (const item of page.items) items.push(item);
      if (!page.hasMore) break;
      afterKey = page.items[page.items.length - 1]?.key;
    }
    const replica = new TypeReplica(new VersionedCollection(at, this.options, items), this.now);
    try {
      await this.source.watch(
        type,
        at,
        replica.apply,
        replica.stop.signal,
        (err) => {
          this.drop(type, replica, `the list cache of ${type} missed changes (${err.message}); rebuilding it on the next list`);
        },
        undefined,
        replica.advance,
      );
    } catch (err) {
      replica.dispose();
      throw err;
    }
    // Dropped while subscribing (changes lost already): not kept, so the next list fills again.
    if (replica.stop.signal.aborted) throw new StorageError('Gone', `the list cache of ${type} missed changes while filling`);
    if (this.closed) replica.dispose();
    else this.filled.set(type, replica);
    return replica;
  }

  private drop(type: string, replica: TypeReplica, why: string): void {
    replica.dispose();
    if (this.filled.get(type) === replica) {
      this.filled.delete(type);
      this.replicas.delete(type);
    }
    this.options.onError(why, undefined);
  }
}
