import { compareResourceVersions } from './resource-version.js';
import { shareReplacedText, type ChangeEvent, type ListOptions, type ListResult, type StoredObject } from './storage.js';
import { StorageError } from '../api/storage-error.js';

/** How long and how much change history a collection keeps. */
export interface HistoryLimits {
  /** Changes older than this (ms, by the collection's clock) are dropped. */
  historyMs: number;
  /** Most changes kept, whatever their age. */
  historyMaxEvents: number;
}

interface TimedEvent {
  event: ChangeEvent;
  at: number;
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** First index in sorted `keys` whose key is > `bound` (or >= `bound` when `inclusive`). */
function lowerBound(keys: string[], bound: string, inclusive: boolean): number {
  let lo = 0,
    hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid];
    if (inclusive ? k < bound : k <= bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The version recorded in an object's JSON (`metadata.resourceVersion`), or "0". */
function recordedVersion(json: string): string {
  return /"resourceVersion":"(\d+)"/.exec(json)?.[1] ?? '0';
}

/**
 * The objects of one storage type at its newest version, plus the recent changes that produced
 * them, so a list can be served at the newest version or rebuilt exactly as it was at any version
 * the history still reaches. Changes must be applied in version order; the collection is then
 * at the version of the last one. Used by the memory store (which allocates versions) and by the
 * per-process list cache, ListCache (which replays the change stream of the store it wraps).
 *
 * Lists return items in key byte order (namespace, then name), like etcd.
 */
export class VersionedCollection {
  private readonly objects = new Map<string, StoredObject>();
  /** Sorted keys, rebuilt lazily after inserts and removals. */
  private sorted: string[] | null = [];
  private readonly history: TimedEvent[] = [];
  /** Index into `history` of its first live entry (trimmed entries are dropped in batches). */
  private historyStart = 0;
  private version: string;
  private oldest: string;
  /** Sum of the current objects' JSON lengths, kept on every change for the mean object size. */
  private jsonLength = 0;

  /**
   * An empty collection at `version`, or one holding `items` as they were at `version` (a
   * snapshot read elsewhere). History starts there: nothing older can be rebuilt.
   */
  constructor(
    version: string,
    private readonly limits: HistoryLimits,
    items: Iterable<StoredObject> = [],
  ) {
    this.version = version;
    this.oldest = version;
    for (const item of items) {
      this.jsonLength += item.json.length - (this.objects.get(item.key)?.json.length ?? 0);
      this.objects.set(item.key, item);
    }
    this.sorted = null;
  }

  /** The version of the newest applied change (or the starting version). */
  get resourceVersion(): string {
    return this.version;
  }

  /** The oldest version a list can be rebuilt at. */
  get oldestResourceVersion(): string {
    return this.oldest;
  }

  get size(): number {
    return this.objects.size;
  }

  /** Mean JSON length of the current objects, rounded down (kube's estimated average object size); undefined when empty. */
  get averageObjectBytes(): number | undefined {
    return this.objects.size === 0 ? undefined : Math.floor(this.jsonLength / this.objects.size);
  }

  get(key: string): StoredObject | undefined {
    return this.objects.get(key);
  }

  /** Changes after `after` still kept, oldest first (found by bisection: history is in version order). */
  changesAfter(after: string): ChangeEvent[] {
    let low = this.historyStart;
    let high = this.history.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareResourceVersions(this.history[mid].event.resourceVersion, after) > 0) high = mid;
      else low = mid + 1;
    }
    const events: ChangeEvent[] = new Array<ChangeEvent>(this.history.length - low);
    for (let i = low; i < this.history.length; i++) events[i - low] = this.history[i].event;
    return events;
  }

  /**
   * Applies one change (which must be newer than the collection's version), records it in the
   * history and drops history that is now too old or too much. `now` is the time of the change.
   */
  apply(event: ChangeEvent, now: number): void {
    if (compareResourceVersions(event.resourceVersion, this.version) <= 0) {
      throw new Error(`change ${event.resourceVersion} is not newer than ${this.version}`);
    }
    const previous = this.objects.get(event.key);
    if (previous !== undefined) {
      this.jsonLength -= previous.json.length;
      shareReplacedText(event, previous.json);
    }
    if (event.type === 'DELETED') this.objects.delete(event.key);
    else {
      this.objects.set(event.key, { key: event.key, resourceVersion: event.resourceVersion, json: event.json });
      this.jsonLength += event.json.length;
    }
    if ((previous !== undefined) !== this.objects.has(event.key)) this.sorted = null;
    this.version = event.resourceVersion;
    this.history.push({ event, at: now });
    this.trim(now);
  }

  /**
   * Moves the collection to `rv` (newer than its version) without a change, as the store's version
   * moved without one: lists at `rv` and at the versions before it read the same objects.
   */
  advance(rv: string): void {
    if (compareResourceVersions(rv, this.version) <= 0) throw new Error(`version ${rv} is not newer than ${this.version}`);
    this.version = rv;
  }

  private trim(now: number): void {
    const h = this.history;
    let start = this.historyStart;
    while (start < h.length && (now - h[start].at > this.limits.historyMs || h.length - start > this.limits.historyMaxEvents)) {
      this.oldest = h[start].event.resourceVersion;
      start++;
    }
    if (start > 1024 && start * 2 > h.length) {
      h.splice(0, start);
      start = 0;
    }
    this.historyStart = start;
  }

  private keys(): string[] {
    if (this.sorted === null) this.sorted = [...this.objects.keys()].sort(byteOrder);
    return this.sorted;
  }

  /**
   * One page of the collection at `options.resourceVersion` (default: the newest version).
   * Throws `TooLarge` for a version newer than the collection's and `Gone` for one older than its
   * history reaches.
   */
  list(options: ListOptions = {}): ListResult {
    const current = this.version;
    let keys = this.keys();
    let lookup = (k: string): StoredObject | undefined => this.objects.get(k);
    if (options.resourceVersion !== undefined && options.resourceVersion !== current) {
      const snapshot = this.snapshot(options.resourceVersion);
      keys = snapshot.keys;
      lookup = snapshot.lookup;
    }
    let start = 0;
    let end = keys.length;
    if (options.namespace !== undefined) {
      start = lowerBound(keys, `${options.namespace}/`, true);
      end = lowerBound(keys, `${options.namespace}0`, true); // '0' is the byte after '/'
    }
    if (options.afterKey !== undefined) start = Math.max(start, lowerBound(keys, options.afterKey, false));
    const items: StoredObject[] = [];
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
    let i = start;
    for (; i < end && items.length < limit; i++) {
      const obj = lookup(keys[i]);
      if (obj && (!options.filter || options.filter(obj))) items.push(obj);
    }
    let hasMore = false;
    if (i < end) {
      if (!options.filter) hasMore = true;
      else
        for (let j = i; j < end; j++) {
          const obj = lookup(keys[j]);
          if (obj && options.filter(obj)) {
            hasMore = true;
            break;
          }
        }
    }
    return { items, resourceVersion: options.resourceVersion ?? current, hasMore, remaining: hasMore ? end - i : undefined };
  }

  /** The collection as it was at `rv`, rebuilt by undoing newer history. */
  private snapshot(rv: string): { keys: string[]; lookup: (k: string) => StoredObject | undefined } {
    if (compareResourceVersions(rv, this.version) > 0) throw new StorageError('TooLarge', `resource version ${rv} is newer than ${this.version}`);
    if (compareResourceVersions(rv, this.oldest) < 0) {
      throw new StorageError('Gone', `resource version ${rv} is older than the history kept`, this.oldest);
    }
    const overrides = new Map<string, StoredObject | undefined>();
    for (let i = this.history.length - 1; i >= this.historyStart; i--) {
      const e = this.history[i].event;
      if (compareResourceVersions(e.resourceVersion, rv) <= 0) break;
      if (e.type === 'ADDED') overrides.set(e.key, undefined);
      else {
        const prev = e.prevJson ?? '{}';
        overrides.set(e.key, { key: e.key, resourceVersion: recordedVersion(prev), json: prev });
      }
    }
    const keySet = new Set(this.keys());
    for (const [k, v] of overrides) {
      if (v) keySet.add(k);
      else keySet.delete(k);
    }
    return {
      keys: [...keySet].sort(byteOrder),
      lookup: (k) => (overrides.has(k) ? overrides.get(k) : this.objects.get(k)),
    };
  }
}
