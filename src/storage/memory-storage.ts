import { compareResourceVersions } from './resource-version.js';
import {
  DEFAULT_MAX_OBJECT_BYTES,
  objectTooLarge,
  type ChangeEvent,
  type ChangeListener,
  type ListOptions,
  type ListResult,
  type ProgressListener,
  type Storage,
  type StorageStats,
  type StoredObject,
  type WatchTrigger,
} from './storage.js';
import { VersionedCollection, type HistoryLimits } from './versioned-collection.js';
import { ListenerSet } from './listener-set.js';
import { StorageError } from '../api/storage-error.js';

export interface MemoryStorageOptions {
  /** How long change history is kept, in milliseconds (watch and snapshot window). */
  historyMs: number;
  /** Most events kept per type, whatever their age. */
  historyMaxEvents?: number;
  /** Clock, replaceable in tests. */
  now?: () => number;
  /** Largest object stored, in bytes of its JSON (default DEFAULT_MAX_OBJECT_BYTES). */
  maxObjectBytes?: number;
}

/** Per-type state: the versioned objects, the live watchers and the versions advanced to without a change. */
interface TypeState {
  readonly collection: VersionedCollection;
  readonly watchers: ListenerSet<Watcher>;
  /** Versions from advanceVersion still within the history, oldest first (replayed to watches that ask). */
  readonly progress: string[];
}

/** One watch's entry (its own object, so one listener given twice is two watches). */
interface Watcher {
  readonly listener: ChangeListener;
  readonly onProgress: ProgressListener | undefined;
}

const callListener = (event: ChangeEvent) => (w: Watcher) => w.listener(event);

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
  private readonly limits: HistoryLimits;
  private readonly now: () => number;
  private readonly maxObjectBytes: number;

  constructor(options: MemoryStorageOptions) {
    this.limits = { historyMs: options.historyMs, historyMaxEvents: options.historyMaxEvents ?? 1_000_000 };
    this.now = options.now ?? Date.now;
    this.maxObjectBytes = options.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
  }

  /** The stored JSON of a write, refused when bigger than the object limit. */
  private serialize(object: Record<string, unknown>, rv: string): string {
    const json = withResourceVersion(object, rv);
    // String length is a lower bound of the byte length: only long strings need the exact count.
    if (json.length * 3 > this.maxObjectBytes) {
      const size = Buffer.byteLength(json);
      if (size > this.maxObjectBytes) throw objectTooLarge(size, this.maxObjectBytes);
    }
    return json;
  }

  private state(type: string): TypeState {
    let s = this.types.get(type);
    if (!s) {
      // An untouched type is at version 1; its first write gets 2.
      s = { collection: new VersionedCollection('1', this.limits), watchers: new ListenerSet('1'), progress: [] };
      this.types.set(type, s);
    }
    return s;
  }

  /** The version the next write of `s` gets. */
  private nextVersion(s: TypeState): string {
    return String(Number(s.collection.resourceVersion) + 1);
  }

  private record(s: TypeState, event: ChangeEvent): void {
    s.collection.apply(event, this.now());
    // Aborted watchers remove themselves (abort listener in `watch`), so the hot loop only calls.
    s.watchers.dispatch(event, callListener(event));
  }

  async create(type: string, key: string, object: Record<string, unknown>): Promise<StoredObject> {
    const s = this.state(type);
    if (s.collection.get(key)) throw new StorageError('AlreadyExists', `${key} already exists`);
    const rv = this.nextVersion(s);
    const stored: StoredObject = { key, resourceVersion: rv, json: this.serialize(object, rv) };
    this.record(s, { type: 'ADDED', key, resourceVersion: rv, json: stored.json });
    return stored;
  }

  async get(type: string, key: string): Promise<StoredObject | undefined> {
    return this.types.get(type)?.collection.get(key);
  }

  async update(type: string, key: string, object: Record<string, unknown>, expectedResourceVersion: string): Promise<StoredObject> {
    const s = this.state(type);
    const current = s.collection.get(key);
    if (!current) throw new StorageError('NotFound', `${key} not found`);
    if (current.resourceVersion !== expectedResourceVersion) {
      throw new StorageError('Conflict', `${key} is at ${current.resourceVersion}`, current.resourceVersion);
    }
    const rv = this.nextVersion(s);
    const stored: StoredObject = { key, resourceVersion: rv, json: this.serialize(object, rv) };
    this.record(s, { type: 'MODIFIED', key, resourceVersion: rv, json: stored.json, prevJson: current.json });
    return stored;
  }

  async delete(type: string, key: string, expectedResourceVersion?: string): Promise<StoredObject> {
    const s = this.state(type);
    const current = s.collection.get(key);
    if (!current) throw new StorageError('NotFound', `${key} not found`);
    if (expectedResourceVersion !== undefined && current.resourceVersion !== expectedResourceVersion) {
      throw new StorageError('Conflict', `${key} is at ${current.resourceVersion}`, current.resourceVersion);
    }
    const rv = this.nextVersion(s);
    const tombstone: StoredObject = { key, resourceVersion: rv, json: reversion(current.json, rv) };
    this.record(s, { type: 'DELETED', key, resourceVersion: rv, json: tombstone.json, prevJson: current.json });
    return tombstone;
  }

  async advanceVersion(type: string): Promise<string> {
    const s = this.state(type);
    const rv = this.nextVersion(s);
    s.collection.advance(rv);
    s.progress.push(rv);
    while (s.progress.length > 0 && compareResourceVersions(s.progress[0], s.collection.oldestResourceVersion) <= 0) s.progress.shift();
    s.watchers.passed(rv);
    for (const w of s.watchers.entries()) w.onProgress?.(rv);
    return rv;
  }

  async list(type: string, options: ListOptions = {}): Promise<ListResult> {
    return this.state(type).collection.list(options);
  }

  async currentResourceVersion(type: string): Promise<string> {
    return this.state(type).collection.resourceVersion;
  }

  async watch(
    type: string,
    fromResourceVersion: string,
    listener: ChangeListener,
    signal: AbortSignal,
    _onError?: (err: StorageError) => void,
    trigger?: WatchTrigger,
    onProgress?: ProgressListener,
  ): Promise<void> {
    const s = this.state(type);
    const oldest = s.collection.oldestResourceVersion;
    if (compareResourceVersions(fromResourceVersion, oldest) < 0) {
      throw new StorageError('Gone', `too old resource version: ${fromResourceVersion} (${oldest})`, oldest);
    }
    if (signal.aborted) return;
    const progress = onProgress === undefined ? [] : s.progress.filter((rv) => compareResourceVersions(rv, fromResourceVersion) > 0);
    let told = 0;
    for (const event of s.collection.changesAfter(fromResourceVersion)) {
      while (told < progress.length && compareResourceVersions(progress[told], event.resourceVersion) < 0) onProgress?.(progress[told++]);
      listener(event);
    }
    while (told < progress.length) onProgress?.(progress[told++]);
    // A start version newer than the type's current one delivers only changes after it.
    const watcher: Watcher = {
      listener:
        compareResourceVersions(fromResourceVersion, s.collection.resourceVersion) > 0
          ? (e) => {
              if (compareResourceVersions(e.resourceVersion, fromResourceVersion) > 0) listener(e);
            }
          : listener,
      onProgress,
    };
    s.watchers.add(watcher, trigger);
    signal.addEventListener('abort', () => s.watchers.delete(watcher), { once: true });
    trigger?.onLive?.(s.watchers.clock);
  }

  async stats(type: string): Promise<StorageStats> {
    const collection = this.types.get(type)?.collection;
    return { objectCount: collection?.size ?? 0, averageObjectBytes: collection?.averageObjectBytes };
  }

  async ready(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    for (const s of this.types.values()) s.watchers.clear();
  }
}
