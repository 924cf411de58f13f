/**
 * Data corrupted at rest, for the memory backend (Redis tests write raw bytes instead): a storage
 * decorator standing where kube's storage transformer stands, between the server and the backend.
 * Reads of chosen objects answer the given bytes instead of their JSON, as a failed decryption or a
 * torn write would; everything else (writes, deletes, watches) reaches the real backend unchanged.
 * An object reads normally again once it is deleted or rewritten.
 */
import type {
  ChangeListener,
  ListOptions,
  ListResult,
  ProgressListener,
  Storage,
  StorageStats,
  StoredObject,
  WatchTrigger,
} from '../../src/storage/storage.js';
import { type StorageError } from '../../src/api/storage-error.js';

export class CorruptedReads implements Storage {
  private readonly corrupt = new Map<string, string>();

  constructor(private readonly inner: Storage) {}

  private static id(type: string, key: string): string {
    return `${type}\u0000${key}`;
  }

  /** From now on, reads of `key` of `type` answer `bytes`. */
  corruptObject(type: string, key: string, bytes: string): void {
    this.corrupt.set(CorruptedReads.id(type, key), bytes);
  }

  private read(type: string, stored: StoredObject): StoredObject {
    const bytes = this.corrupt.get(CorruptedReads.id(type, stored.key));
    return bytes === undefined ? stored : { ...stored, json: bytes };
  }

  async create(type: string, key: string, object: Record<string, unknown>): Promise<StoredObject> {
    return this.inner.create(type, key, object);
  }

  async get(type: string, key: string): Promise<StoredObject | undefined> {
    const stored = await this.inner.get(type, key);
    return stored && this.read(type, stored);
  }

  async update(type: string, key: string, object: Record<string, unknown>, expectedResourceVersion: string): Promise<StoredObject> {
    const stored = await this.inner.update(type, key, object, expectedResourceVersion);
    this.corrupt.delete(CorruptedReads.id(type, key));
    return stored;
  }

  async delete(type: string, key: string, expectedResourceVersion?: string): Promise<StoredObject> {
    const removed = await this.inner.delete(type, key, expectedResourceVersion);
    this.corrupt.delete(CorruptedReads.id(type, key));
    return removed;
  }

  async list(type: string, options: ListOptions = {}): Promise<ListResult> {
    // Filters (selectors) see what a read sees: the corrupt bytes.
    const filter = options.filter;
    const result = await this.inner.list(type, { ...options, filter: filter && ((item) => filter(this.read(type, item))) });
    return { ...result, items: result.items.map((item) => this.read(type, item)) };
  }

  currentResourceVersion(type: string): Promise<string> {
    return this.inner.currentResourceVersion(type);
  }

  advanceVersion(type: string): Promise<string> {
    return this.inner.advanceVersion(type);
  }

  watch(
    type: string,
    from: string,
    listener: ChangeListener,
    signal: AbortSignal,
    onError?: (err: StorageError) => void,
    trigger?: WatchTrigger,
    onProgress?: ProgressListener,
  ): Promise<void> {
    return this.inner.watch(type, from, listener, signal, onError, trigger, onProgress);
  }

  stats(type: string): Promise<StorageStats> {
    return this.inner.stats(type);
  }

  ready(): Promise<boolean> {
    return this.inner.ready();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
