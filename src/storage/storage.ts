import { StorageError } from '../api/storage-error.js';
/**
 * The storage contract: the only seam between the API layer and persistence. The memory and Redis
 * backends implement it with identical observable behaviour, checked by one conformance suite.
 *
 * Objects are grouped by storage type (group + resource, see `storageTypeOf`); each type has its own
 * resourceVersion counter, so versions are comparable only within a type. Keys within a type are
 * `namespace/name` for namespaced objects and `name` for cluster-scoped ones; lists return items in
 * key byte order (as etcd does), which is namespace, then name.
 */

/** One stored object as the backend returns it. */
export interface StoredObject {
  /** `namespace/name` or `name`. */
  readonly key: string;
  /** Decimal resourceVersion of the object's last write. */
  readonly resourceVersion: string;
  /** The object's JSON, with `metadata.resourceVersion` equal to `resourceVersion`. */
  readonly json: string;
}

export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One change of a storage type, as delivered by `watch`. Shared by every listener: never mutate. */
export interface ChangeEvent {
  readonly type: ChangeType;
  readonly key: string;
  /** The version this change produced. Strictly increasing within a type. */
  readonly resourceVersion: string;
  /**
   * The object after the change. For DELETED: the last state of the object with
   * `metadata.resourceVersion` set to the deletion's version, as kube-apiserver sends it.
   */
  readonly json: string;
  /** The object before the change (MODIFIED and DELETED), for selector transitions and snapshots. */
  readonly prevJson?: string;
}

/**
 * Makes `event` hold `held`, a text this process already keeps for the change's key, as the object
 * the change replaced when the two are equal. A change read from a Redis stream carries that object
 * as a text of its own; whoever keeps changes then holds one copy of each object's text, not two.
 * The change stays equal: only which of two equal strings it points to changes.
 */
export function shareReplacedText(event: ChangeEvent, held: string): void {
  if (event.prevJson !== undefined && event.prevJson === held) (event as { prevJson?: string }).prevJson = held;
}

export interface ListOptions {
  /** Only objects of this namespace (keys starting with `namespace/`). */
  namespace?: string;
  /** Only keys strictly after this one (continuation of a chunked list). */
  afterKey?: string;
  /** At most this many items; `hasMore` tells whether more exist. */
  limit?: number;
  /**
   * Serve the collection exactly as it was at this version (Exact and Continuation reads).
   * Throws `StorageError('Gone')` when the backend no longer keeps that version, and
   * `StorageError('TooLarge')` when the version is newer than the type's current version.
   */
  resourceVersion?: string;
  /** Optional filter applied before `limit` counts items. */
  filter?: (obj: StoredObject) => boolean;
}

export interface ListResult {
  items: StoredObject[];
  /** The version the collection was read at. */
  resourceVersion: string;
  /** Whether matching items exist after the last returned one. */
  hasMore: boolean;
  /** How many items (before filtering) remain after the last returned one, when known. */
  remaining?: number;
}

/**
 * What a backend knows of a type's size (kube's storage.Stats), read by the LIST work estimator and
 * the storage metrics.
 */
export interface StorageStats {
  /** Objects stored now. */
  readonly objectCount: number;
  /**
   * Mean length of the stored objects' JSON (characters: bytes for ASCII), rounded down; undefined
   * when this process has not seen every object of the type (Redis before the type's list cache is
   * filled), as kube reports 0 without a watch cache.
   */
  readonly averageObjectBytes: number | undefined;
}

/** Receives changes in resourceVersion order, each exactly once. */
export type ChangeListener = (event: ChangeEvent) => void;

/**
 * Told, in order with the changes, of a version the type moved to without a change (see
 * `Storage.advanceVersion`): everything up to it has been delivered.
 */
export type ProgressListener = (resourceVersion: string) => void;

/**
 * Narrows a watch to the changes of objects with one value of an indexed field, as kube's Cacher
 * triggers do (pods by `spec.nodeName`): storage may withhold the other live changes from the
 * listener without calling it. Replayed history is not narrowed.
 */
export interface WatchTrigger {
  /** Names the index; one name always comes with the same `valuesOf`. */
  readonly index: string;
  /**
   * The index values of a change: its object's, before and after it. Undefined when they cannot
   * be read (the change then reaches every listener of the index).
   */
  readonly valuesOf: (event: ChangeEvent) => readonly string[] | undefined;
  /** The value the listener's objects have. */
  readonly value: string;
  /**
   * Told, once the listener is live (history replayed), how far the type's changes have been
   * handed out: the listener has been through every change up to the clock's version, withheld or not.
   */
  readonly onLive?: (clock: DispatchClock) => void;
}

/** Where the live listeners of one type stand: every change up to `resourceVersion` has been handed out. */
export interface DispatchClock {
  readonly resourceVersion: string;
}

/** Default bound on a stored object's JSON size: etcd's default request limit (1.5 MiB). */
export const DEFAULT_MAX_OBJECT_BYTES = 1536 * 1024;

/** The refusal of a write whose object serialises to `size` bytes, more than `limit`. */
export function objectTooLarge(size: number, limit: number): StorageError {
  return new StorageError('ObjectTooLarge', `object is ${size} bytes, more than the storage limit of ${limit} bytes`);
}

export interface Storage {
  /**
   * Stores `object` under `key` if no object has that key. Sets `metadata.resourceVersion` to the
   * new version. Throws `AlreadyExists`, or `ObjectTooLarge` (as update does) when the object's JSON is
   * bigger than the backend's object limit.
   */
  create(type: string, key: string, object: Record<string, unknown>): Promise<StoredObject>;

  /** The current object, or undefined. */
  get(type: string, key: string): Promise<StoredObject | undefined>;

  /**
   * A copy of the object this process already holds (a list cache following the store), read
   * without a round trip: it may be older than the store's, so it is only a starting point for a
   * compare-and-swap, which tells. Undefined when the process holds none; absent on backends whose
   * `get` is already local.
   */
  peek?(type: string, key: string): StoredObject | undefined;

  /**
   * Compare-and-swap update: replaces the object when its current version equals
   * `expectedResourceVersion`. Throws `NotFound`, or `Conflict` when the version differs.
   */
  update(type: string, key: string, object: Record<string, unknown>, expectedResourceVersion: string): Promise<StoredObject>;

  /**
   * Removes the object, when its current version equals `expectedResourceVersion` if given.
   * Returns the removed object with the deletion's version. Throws `NotFound` or `Conflict`.
   */
  delete(type: string, key: string, expectedResourceVersion?: string): Promise<StoredObject>;

  /**
   * Moves the type's version on by one without changing any object, as etcd's revision moves with
   * every write to the cluster and with kube's compactor's own write each interval: the new version
   * is newer than every change so far and reads the same objects. A continue token's snapshot that
   * expires while nothing of its type was written is then not the latest state (what clients of
   * one cluster-wide revision expect). Watches get no event; those that asked are told through
   * their ProgressListener.
   */
  advanceVersion(type: string): Promise<string>;

  /** A consistent snapshot of the collection (or one page of it). */
  list(type: string, options?: ListOptions): Promise<ListResult>;

  /** The newest version of the type ("0" before its first write... never less than any stored object). */
  currentResourceVersion(type: string): Promise<string>;

  /**
   * Delivers every change of `type` after `fromResourceVersion`, in order and exactly once, then live
   * changes until `signal` aborts. Rejects with `Gone` when history no longer reaches back to
   * `fromResourceVersion`. Resolves once the listener is registered (history replayed or queued).
   * `onError` is called at most once if the backend later cannot deliver every change (for example
   * the history was trimmed past changes a lagging reader had not read); the watch is over then.
   * With `trigger`, live changes of objects without the trigger's value may be withheld. With
   * `onProgress`, the versions the type moved to without a change are told too, in their place
   * among the changes, replayed history included (a cache of the type's lists then knows it is
   * current at them).
   */
  watch(
    type: string,
    fromResourceVersion: string,
    listener: ChangeListener,
    signal: AbortSignal,
    onError?: (err: StorageError) => void,
    trigger?: WatchTrigger,
    onProgress?: ProgressListener,
  ): Promise<void>;

  /**
   * How many objects of `type` are stored now and, where the process holds them all, their mean
   * size (metrics and the LIST work estimate). Never a round trip per object.
   */
  stats(type: string): Promise<StorageStats>;

  /** Whether the backend can serve requests (readyz storage check). */
  ready(): Promise<boolean>;

  /** Releases connections and timers. */
  close(): Promise<void>;
}
