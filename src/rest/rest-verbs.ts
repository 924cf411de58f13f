import type { Obj } from '../api/object-util.js';
import type { ListOptions } from '../api/request-options.js';
import type { Selection } from './selection.js';
import type { ListPage } from './read.js';
import type { CollectionDeleteOutcome, DeleteOptions, DeleteOutcome } from './delete.js';
import type { ComputedUpdate, UpdateOutcome } from './update.js';
import type { ChangeFeed, WatchRequest } from './watch.js';
import type { StoredObject } from '../storage/storage.js';

/**
 * The verbs a resource's store offers the handlers, after kube's rest.Creater / rest.Updater: a handler
 * depends only on the verb it serves, and a resource whose store lacks the verb answers 405.
 */

/** Options every write takes. */
export interface WriteRequestOptions {
  /** Run every step, store nothing (and allocate nothing). */
  dryRun: boolean;
  /** The manager the write is recorded under in managedFields (managerOrUserAgent); undefined: not recorded. */
  manager?: string;
}

/** Reads one object (GET). */
export interface Getter {
  /** The object's stored JSON at the version `query` asks for; 404 when absent. */
  get(name: string, query: URLSearchParams): Promise<string>;
}

/** Lists a collection (LIST), page by page. */
export interface Lister {
  /** One page of the collection as `opts` and `selection` ask; 410 for an expired continue token or version. */
  list(opts: ListOptions, selection: Selection): Promise<ListPage>;
}

/** Watches a collection (WATCH): its start, initial state and change stream. */
export interface Watcher {
  /** The feed of a watch of the objects `filter` passes (see openChangeFeed); ApiErrors for storage failures and unreadable objects. */
  watch(request: WatchRequest, filter: ((obj: StoredObject) => boolean) | undefined): Promise<ChangeFeed>;
}

/** Creates objects (POST to a collection). */
export interface Creater {
  /**
   * Creates `input` (a decoded body in the request's version) and returns the created object's JSON
   * in its storage version. Throws ApiErrors: 409 AlreadyExists, 422 Invalid, admission denials.
   */
  create(input: Obj, options: WriteRequestOptions): Promise<string>;
}

/** Replaces or patches existing objects (PUT, PATCH, writable subresources). */
export interface Updater {
  /**
   * Runs `compute` on the current object inside the store's retry loop and stores the result;
   * `onMissing` answers when the object does not exist. `current` is what the request writes (the
   * object, or its subresource's view such as a Scale) and `object` the object itself, both in the
   * request's version and both the attempt's own copies, which `compute` may change (a patch is
   * applied to `current` in place).
   */
  update(
    compute: (current: Obj, object: Obj) => Promise<ComputedUpdate> | ComputedUpdate,
    onMissing: () => Promise<UpdateOutcome>,
    options: WriteRequestOptions,
  ): Promise<UpdateOutcome>;
}

/** Deletes objects (DELETE), gracefully where the kind has a grace period or finalizers. */
export interface GracefulDeleter {
  /** Deletes or marks the object as `opts` and its kind decide; 404 when absent, 409 on failed preconditions. */
  delete(name: string, opts: DeleteOptions): Promise<DeleteOutcome>;
}

/** Deletes the objects a selection picks (DELETE on a collection). */
export interface CollectionDeleter {
  deleteCollection(selection: Selection, opts: DeleteOptions): Promise<CollectionDeleteOutcome>;
}

export function isWatcher(store: object): store is Watcher {
  return typeof (store as Partial<Watcher>).watch === 'function';
}

export function isCreater(store: object): store is Creater {
  return typeof (store as Partial<Creater>).create === 'function';
}

export function isUpdater(store: object): store is Updater {
  return typeof (store as Partial<Updater>).update === 'function';
}

export function isGetter(store: object): store is Getter {
  return typeof (store as Partial<Getter>).get === 'function';
}

export function isLister(store: object): store is Lister {
  return typeof (store as Partial<Lister>).list === 'function';
}

export function isGracefulDeleter(store: object): store is GracefulDeleter {
  return typeof (store as Partial<GracefulDeleter>).delete === 'function';
}

export function isCollectionDeleter(store: object): store is CollectionDeleter {
  return typeof (store as Partial<CollectionDeleter>).deleteCollection === 'function';
}
