import type { Obj } from '../api/object-util.js';
import { createObject } from './create.js';
import type { ResourceTarget } from './server-context.js';
import type { ListOptions } from '../api/request-options.js';
import type { Selection } from './selection.js';
import { getObject, listObjects, type ListPage } from './read.js';
import type { CollectionDeleter, Creater, GracefulDeleter, Getter, Lister, Updater, Watcher, WriteRequestOptions } from './rest-verbs.js';
import { deleteCollection, deleteObject, type CollectionDeleteOutcome, type DeleteOptions, type DeleteOutcome } from './delete.js';
import { updateObject, type ComputedUpdate, type UpdateOutcome } from './update.js';
import { openChangeFeed, type ChangeFeed, type WatchRequest } from './watch.js';
import type { StoredObject } from '../storage/storage.js';

/**
 * The store of every persisted resource: one write path (decode and convert, mutating admission, the
 * type's strategy and defaults, validation, validating admission, compare-and-swap) for all types,
 * with per-type behaviour in the strategies (src/strategy/) and validators (src/validation/).
 */
export class GenericStore implements Getter, Lister, Watcher, Creater, Updater, GracefulDeleter, CollectionDeleter {
  constructor(private readonly target: ResourceTarget) {}

  get(name: string, query: URLSearchParams): Promise<string> {
    return getObject(this.target, name, query);
  }

  list(opts: ListOptions, selection: Selection): Promise<ListPage> {
    return listObjects(this.target, opts, selection);
  }

  watch(request: WatchRequest, filter: ((obj: StoredObject) => boolean) | undefined): Promise<ChangeFeed> {
    return openChangeFeed(this.target, request, filter);
  }

  create(input: Obj, options: WriteRequestOptions): Promise<string> {
    return createObject(this.target, input, options.dryRun, options.manager);
  }

  update(
    compute: (current: Obj, object: Obj) => Promise<ComputedUpdate> | ComputedUpdate,
    onMissing: () => Promise<UpdateOutcome>,
    options: WriteRequestOptions,
  ): Promise<UpdateOutcome> {
    return updateObject(this.target, options.dryRun, compute, onMissing, options.manager);
  }

  delete(name: string, opts: DeleteOptions): Promise<DeleteOutcome> {
    return deleteObject(this.target, name, opts);
  }

  deleteCollection(selection: Selection, opts: DeleteOptions): Promise<CollectionDeleteOutcome> {
    return deleteCollection(this.target, selection, opts);
  }
}
