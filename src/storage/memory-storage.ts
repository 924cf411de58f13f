import { compareResourceVersions } from './resource-version.js';
import {
  StorageError, type ChangeEvent, type ChangeListener, type ListOptions, type ListResult, type Storage, type StoredObject,
} from './storage.js';

export interface MemoryStorageOptions {
  /** How long change history is kept, in milliseconds (watch and snapshot window). */
  historyMs: number;
  /** Most events kept per type, whatever their age. */
  historyMaxEvents?: number;
  /** Clock, replaceable in tests. */
  now?: () => number;
}

interface TimedEvent {
  event: ChangeEvent;
  at: number;
}

interface Watcher {
  listener: ChangeListener;
  signal: AbortSignal;
}

/** Per-type state: objects, counter, history and live watchers. */
class TypeState {
  readonly objects = new Map<string, StoredObject>();
  /** Sorted keys, rebuilt lazily after inserts and removals. */
  private sorted: string[] | null = [];
  /** Counter: an untouched type is at version 1; its first write gets 2. */
  rv = 1;
  readonly history: TimedEvent[] = [];
  /** Index into `history` of its first live entry (trimmed entries are dropped in batches). */
  historyStart = 0;
  /** Oldest version from which history can replay or reconstruct. */
  oldestRv = 1;
  readonly watchers = new Set<Watcher>();

  keys(): string[] {
    if (this.sorted === null) this.sorted = [...this.objects.keys()].sort(byteOrder);
    return this.sorted;
  }

  invalidateKeys(): void {
    this.sorted = null;
  }

  liveHistory(): TimedEvent[] {
    return this.historyStart === 0 ? this.history : this.history.slice(this.historyStart);
  }
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** First index in sorted `keys` whose key is > `after` (or >= `from` when `inclusive`). */
function lowerBound(keys: string[], bound: string, inclusive: boolean): number {
  let lo = 0, hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid] as string;
    if (inclusive ? k < bound : k <= bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function withResourceVersion(object: Record<string, unknown>, rv: string): string {
  const metadata = (typeof object.metadata === 'object' && object.metadata !== null ? object.metadata : {}) as Record<string, unknown>;
  return JSON.stringify({ ...object, metadata: { ...metadata, resourceVersion: rv } });
}

function reversion(json: string, rv: string): string {
  return withResourceVersion(JSON.parse(json) as Record<string, unknown>, rv);
}

/**
 * The embedded store: everything in this process's memory, lost on exit. Writes are synchronous
 * under the event loop, so each operation is atomic; watchers are notified in version order before
 * the write's promise resolves.
 */
export class MemoryStorage implements Storage {
  private readonly types = new Map<string, TypeState>();
  private readonly historyMs: number;
  private readonly historyMax: number;
  private readonly now: () => number;

  constructor(options: MemoryStorageOptions) {
    this.historyMs = options.historyMs;
    this.historyMax = options.historyMaxEvents ?? 1_000_000;
    this.now = options.now ?? Date.now;
  }

  private state(type: string): TypeState {
    let s = this.types.get(type);
    if (!s) {
      s = new TypeState();
      this.types.set(type, s);
    }
    return s;
  }

  private record(s: TypeState, event: ChangeEvent): void {
    const at = this.now();
    s.history.push({ event, at });
    this.trim(s, at);
    // Aborted watchers remove themselves (abort listener in `watch`), so the hot loop only calls.
    for (const w of s.watchers) w.listener(event);
  }

  private trim(s: TypeState, at: number): void {
    const h = s.history;
    let start = s.historyStart;
    while (start < h.length && (at - (h[start] as TimedEvent).at > this.historyMs || h.length - start > this.historyMax)) {
      s.oldestRv = Number((h[start] as TimedEvent).event.resourceVersion);
      start++;
    }
    if (start > 1024 && start * 2 > h.length) {
      h.splice(0, start);
      start = 0;
    }
    s.historyStart = start;
  }

  async create(type: string, key: string, object: Record<string, unknown>): Promise<StoredObject> {
    const s = this.state(type);
    if (s.objects.has(key)) throw new StorageError('AlreadyExists', `${key} already exists`);
    const rv = String(++s.rv);
    const stored: StoredObject = { key, resourceVersion: rv, json: withResourceVersion(object, rv) };
    s.objects.set(key, stored);
    s.invalidateKeys();
    this.record(s, { type: 'ADDED', key, resourceVersion: rv, json: stored.json });
    return stored;
  }

  async get(type: string, key: string): Promise<StoredObject | undefined> {
    return this.types.get(type)?.objects.get(key);
  }

  async update(type: string, key: string, object: Record<string, unknown>, expectedResourceVersion: string): Promise<StoredObject> {
    const s = this.state(type);
    const current = s.objects.get(key);
    if (!current) throw new StorageError('NotFound', `${key} not found`);
    if (current.resourceVersion !== expectedResourceVersion) {
      throw new StorageError('Conflict', `${key} is at ${current.resourceVersion}`, current.resourceVersion);
    }
    const rv = String(++s.rv);
    const stored: StoredObject = { key, resourceVersion: rv, json: withResourceVersion(object, rv) };
    s.objects.set(key, stored);
    this.record(s, { type: 'MODIFIED', key, resourceVersion: rv, json: stored.json, prevJson: current.json });
    return stored;
  }

  async delete(type: string, key: string, expectedResourceVersion?: string): Promise<StoredObject> {
    const s = this.state(type);
    const current = s.objects.get(key);
    if (!current) throw new StorageError('NotFound', `${key} not found`);
    if (expectedResourceVersion !== undefined && current.resourceVersion !== expectedResourceVersion) {
      throw new StorageError('Conflict', `${key} is at ${current.resourceVersion}`, current.resourceVersion);
    }
    const rv = String(++s.rv);
    s.objects.delete(key);
    s.invalidateKeys();
    const tombstone: StoredObject = { key, resourceVersion: rv, json: reversion(current.json, rv) };
    this.record(s, { type: 'DELETED', key, resourceVersion: rv, json: tombstone.json, prevJson: current.json });
    return tombstone;
  }

  async list(type: string, options: ListOptions = {}): Promise<ListResult> {
    const s = this.state(type);
    const current = String(s.rv);
    let keys = s.keys();
    let lookup = (k: string): StoredObject | undefined => s.objects.get(k);
    if (options.resourceVersion !== undefined && options.resourceVersion !== current) {
      const snapshot = this.snapshot(s, options.resourceVersion);
      keys = snapshot.keys;
      lookup = snapshot.lookup;
    }
    let start = 0;
    let end = keys.length;
    if (options.namespace !== undefined) {
      const prefix = `${options.namespace}/`;
      start = lowerBound(keys, prefix, true);
      end = lowerBound(keys, `${options.namespace}0`, true); // '0' is the byte after '/'
    }
    if (options.afterKey !== undefined) start = Math.max(start, lowerBound(keys, options.afterKey, false));
    const items: StoredObject[] = [];
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
    let i = start;
    for (; i < end && items.length < limit; i++) {
      const obj = lookup(keys[i] as string);
      if (obj && (!options.filter || options.filter(obj))) items.push(obj);
    }
    let hasMore = false;
    if (i < end) {
      if (!options.filter) hasMore = true;
      else for (let j = i; j < end; j++) {
        const obj = lookup(keys[j] as string);
        if (obj && options.filter(obj)) { hasMore = true; break; }
      }
    }
    return { items, resourceVersion: options.resourceVersion ?? current, hasMore, remaining: hasMore ? end - i : undefined };
  }

  /** The collection as it was at `rv`, rebuilt by undoing newer history. */
  private snapshot(s: TypeState, rv: string): { keys: string[]; lookup: (k: string) => StoredObject | undefined } {
    if (compareResourceVersions(rv, String(s.rv)) > 0) throw new StorageError('TooLarge', `resource version ${rv} is newer than ${s.rv}`);
    if (compareResourceVersions(rv, String(s.oldestRv)) < 0) {
      throw new StorageError('Gone', `resource version ${rv} is older than the history kept`, String(s.oldestRv));
    }
    const overrides = new Map<string, StoredObject | undefined>();
    const history = s.liveHistory();
    for (let i = history.length - 1; i >= 0; i--) {
      const e = (history[i] as TimedEvent).event;
      if (compareResourceVersions(e.resourceVersion, rv) <= 0) break;
      if (e.type === 'ADDED') overrides.set(e.key, undefined);
      else {
        const prev = e.prevJson ?? '{}';
        const prevRv = /"resourceVersion":"(\d+)"/.exec(prev)?.[1] ?? '0';
        overrides.set(e.key, { key: e.key, resourceVersion: prevRv, json: prev });
      }
    }
    const keySet = new Set(s.keys());
    for (const [k, v] of overrides) {
      if (v) keySet.add(k);
      else keySet.delete(k);
    }
    return {
      keys: [...keySet].sort(byteOrder),
      lookup: (k) => (overrides.has(k) ? overrides.get(k) : s.objects.get(k)),
    };
  }

  async currentResourceVersion(type: string): Promise<string> {
    return String(this.state(type).rv);
  }

  async watch(type: string, fromResourceVersion: string, listener: ChangeListener, signal: AbortSignal): Promise<void> {
    const s = this.state(type);
    if (compareResourceVersions(fromResourceVersion, String(s.oldestRv)) < 0) {
      throw new StorageError('Gone', `too old resource version: ${fromResourceVersion} (${s.oldestRv})`, String(s.oldestRv));
    }
    if (signal.aborted) return;
    for (const { event } of s.liveHistory()) {
      if (compareResourceVersions(event.resourceVersion, fromResourceVersion) > 0) listener(event);
    }
    // A start version newer than the type's current one delivers only changes after it.
    const watcher: Watcher = {
      listener: compareResourceVersions(fromResourceVersion, String(s.rv)) > 0
        ? (e) => { if (compareResourceVersions(e.resourceVersion, fromResourceVersion) > 0) listener(e); }
        : listener,
      signal,
    };
    s.watchers.add(watcher);
    signal.addEventListener('abort', () => s.watchers.delete(watcher), { once: true });
  }

  async count(type: string): Promise<number> {
    return this.types.get(type)?.objects.size ?? 0;
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    for (const s of this.types.values()) s.watchers.clear();
  }
}
