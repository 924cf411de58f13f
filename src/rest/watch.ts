import type { ChangeEvent, StoredObject, WatchTrigger } from '../storage/storage.js';
import { listReadError } from './corrupt-object.js';
import { waitForResourceVersion } from './read-consistency.js';
import type { ResourceTarget } from './server-context.js';
import { storageErrorToApi } from './storage-errors.js';
import { type StorageError } from '../api/storage-error.js';

/** What a watch asks the store for: where to start, and whether to begin with the current state. */
export interface WatchRequest {
  /** The requested resourceVersion (undefined: unset). */
  resourceVersion: string | undefined;
  /** Whether the watch starts with synthetic ADDED events of the current state. */
  initialEvents: boolean;
  /** How long a wait for a version newer than the server's may take before 504. */
  timeoutMs: number | undefined;
}

/** The store's answer to a watch: where it starts, the state it sends first, and its change stream. */
export interface ChangeFeed {
  /** Every change after this version is delivered. */
  resourceVersion: string;
  /** Objects sent as synthetic ADDED events before any change (empty without initial events). */
  initial: StoredObject[];
  /**
   * Delivers every change of the type after `from` to `onEvent`, in order and exactly once, until
   * `signal` aborts; resolves once subscribed. Rejects with the StorageError storage raised (410 Gone
   * when the history no longer reaches `from`); a later loss of history calls `onHistoryLost`.
   */
  subscribe(
    from: string,
    onEvent: (event: ChangeEvent) => void,
    signal: AbortSignal,
    onHistoryLost: (err: StorageError) => void,
    trigger?: WatchTrigger,
  ): Promise<void>;
}

/**
 * Opens a watch of the target's collection (its namespace, when the type is namespaced and one is
 * named), the objects passing `filter`. With initial events: a consistent list of the collection
 * (after waiting for a requested version newer than the server's), whose objects are sent first and
 * whose version the changes follow. Without: the type's current version for an unset or "0"
 * resourceVersion, otherwise the requested one. Throws the ApiError of a storage failure, or of an
 * initial state holding unreadable objects.
 */
export async function openChangeFeed(target: ResourceTarget, request: WatchRequest, filter: ((obj: StoredObject) => boolean) | undefined): Promise<ChangeFeed> {
  const { storage } = target.server;
  const type = target.type;
  const namespace = target.info.namespaced && target.ri.namespace !== '' ? target.ri.namespace : undefined;
  const subscribe: ChangeFeed['subscribe'] = (from, onEvent, signal, onHistoryLost, trigger) =>
    storage.watch(type, from, onEvent, signal, onHistoryLost, trigger);
  const rv = request.resourceVersion;
  try {
    if (request.initialEvents) {
      if (rv !== undefined && rv !== '0') await waitForResourceVersion(target, rv, request.timeoutMs);
      const listed = await storage.list(type, { namespace, filter });
      const unreadable = listReadError(target, listed.items);
      if (unreadable !== undefined) throw unreadable;
      return { resourceVersion: listed.resourceVersion, initial: listed.items, subscribe };
    }
    if (rv === undefined || rv === '0') return { resourceVersion: await storage.currentResourceVersion(type), initial: [], subscribe };
    return { resourceVersion: rv, initial: [], subscribe };
  } catch (err) {
    throw storageErrorToApi(err, target, target.ri.name);
  }
}
