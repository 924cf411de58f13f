import type { Storage, StoredObject } from '../storage/storage.js';
import type { WatchEncoder } from './watch-encoder.js';
import { failureStatus } from './watch-errors.js';
import type { WatchLifetime } from './watch-lifetime.js';
import type { WatchOptions } from './watch-options.js';
import type { WatchOutput } from './watch-output.js';

/** Initial events are handed to the socket in chunks of about this size, waiting for it to drain. */
const INITIAL_CHUNK_BYTES = 256 * 1024;

/** Where a watch starts and the state it sends first. */
export interface WatchStart {
  /** Every change after this version is delivered. */
  resourceVersion: string;
  /** Objects sent as synthetic ADDED events before any change (empty without initial events). */
  initial: StoredObject[];
}

/** The collection a watch covers. */
export interface WatchedCollection {
  storage: Storage;
  /** Storage type (group + resource). */
  type: string;
  /** Only this namespace; undefined for all. */
  namespace: string | undefined;
  /** Only stored objects passing this filter (the selectors); undefined for all. */
  filter: ((obj: StoredObject) => boolean) | undefined;
  /** Resolves once the type's version reaches `resourceVersion`; rejects (504) when it does not in time. */
  waitForResourceVersion(resourceVersion: string): Promise<unknown>;
  /** The error listing `items` ends with (objects whose stored bytes do not decode), if any. */
  readError(items: readonly StoredObject[]): Error | undefined;
}

/**
 * Decides where a watch starts. With initial events: a consistent list of the collection (after
 * waiting for a requested version newer than the server's), whose objects are sent first and whose
 * version the changes follow. Without: the type's current version for an unset or "0"
 * resourceVersion, otherwise the requested one. Storage failures reject unchanged (StorageError);
 * an initial state holding unreadable objects rejects with the collection's `readError`.
 */
export async function watchStart(collection: WatchedCollection, options: WatchOptions): Promise<WatchStart> {
  const rv = options.resourceVersion;
  const { storage, type } = collection;
  if (options.initialEvents) {
    if (rv !== undefined && rv !== '0') await collection.waitForResourceVersion(rv);
    const listed = await storage.list(type, { namespace: collection.namespace, filter: collection.filter });
    const unreadable = collection.readError(listed.items);
    if (unreadable !== undefined) throw unreadable;
    return { resourceVersion: listed.resourceVersion, initial: listed.items };
  }
  if (rv === undefined || rv === '0') return { resourceVersion: await storage.currentResourceVersion(type), initial: [] };
  return { resourceVersion: rv, initial: [] };
}

/**
 * Sends `items` as synthetic ADDED events, in order, with backpressure: at most about one socket
 * buffer per watcher is held in memory. Resolves false when the watch ended before all were sent.
 */
export async function sendInitialEvents(items: readonly StoredObject[], encoder: WatchEncoder, out: WatchOutput, lifetime: WatchLifetime): Promise<boolean> {
  for (const item of items) {
    if (lifetime.ended) return false;
    const frame = encoder.added(item.json);
    out.write(frame, (err) => encoder.error(failureStatus(err)));
    // A frame converting by webhook is awaited before the next: one conversion at a time per watch.
    if (frame instanceof Promise) await out.produced();
    if (out.queuedBytes >= INITIAL_CHUNK_BYTES) await out.ready();
  }
  return true;
}
