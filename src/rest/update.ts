import { shapeStoredObject } from '../codec/go-shape.js';
import { cloneJson } from '../codec/json-value.js';
import { conflict, staleConflict } from '../api/errors.js';
import { hasStatusSubresource, prepareForFinalize, prepareForStatusUpdate, prepareForUpdate, writeWarnings } from '../strategy/resource-strategy.js';
import { canonicalize, jsonEqual, metadataOf, stringField, type Obj } from '../api/object-util.js';
import { storageVersionOf, toStorageVersion } from '../conversion/version-conversion.js';
import { servedObjectAsync, toStorageVersionAsync } from '../conversion/converting-io.js';
import { guaranteedUpdate, RETRY, type SendingWrite } from './guaranteed-update.js';
import type { StoredObject } from '../storage/storage.js';
import type { ResourceTarget } from './server-context.js';
import { admissionRequestOf } from '../api/request-scope.js';
import { fromScale, replicasPathsOf, toScale } from '../strategy/scale.js';
import { storageErrorToApi } from './storage-errors.js';
import { validateUpdate } from './validate-object.js';
import { trackScaleUpdate, trackUpdate } from '../fieldmanager/track-write.js';
import { webhookVersionViews } from '../fieldmanager/webhook-version-views.js';
import { replicasPath } from '../fieldmanager/scale-managed-fields.js';
import { strategyFor } from '../strategy/strategies.js';
import { writeWithKindHooks, afterKindDelete } from './kind-hooks.js';
import { StorageError } from '../api/storage-error.js';

/**
 * Computes the object to store from the stored one and the request's new view, applying the
 * subresource's rules (status keeps spec, scale changes only replicas, finalize only spec.finalizers)
 * and the main resource's (status kept, generation bumped on spec change, system metadata kept).
 */
function merge(r: ResourceTarget, next: Obj, old: Obj): Obj {
  const sub = r.ri.subresource;
  let result: Obj;
  const strategy = strategyFor(r.info);
  const statusLike = strategy.statusLikeSubresources?.[sub];
  if (sub === 'status') {
    result = prepareForStatusUpdate(r.info, next, old);
    strategy.prepareForStatusUpdate?.(result, old);
  } else if (statusLike !== undefined) {
    result = prepareForStatusUpdate(r.info, next, old);
    statusLike(result, next, old);
  } else if (sub === 'finalize') result = prepareForFinalize(next, old);
  else if (sub === 'scale') {
    result = fromScale(r.info, next, old);
    prepareForUpdate(r.info, result, old, r.server.catalog.customResources);
  } else {
    result = canonicalize(next, r.info.kind, r.apiVersion);
    // A subresource write of the object itself may keep only part of the request (a pod's resize).
    const filter = strategy.filterSubresourceWrite?.[sub];
    if (filter !== undefined) result = filter(result, old);
    const meta = metadataOf(result);
    const oldMeta = metadataOf(old);
    if (stringField(meta, 'uid') === '') meta.uid = oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    if (oldMeta.deletionTimestamp !== undefined) meta.deletionTimestamp = oldMeta.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    else delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    prepareForUpdate(r.info, result, old, r.server.catalog.customResources);
  }
  shapeStoredObject(result, r.info);
  return canonicalize(result, r.info.kind, r.apiVersion);
}

/**
 * For a kind stored in another version than the request's, what the write may change is decided
 * again on the storage version, as kube's strategies decide it on the internal object: part of an
 * autoscaling/v1 HPA's spec and status lives in annotations there. A main-resource write keeps the
 * stored status; a status write takes only the status of the request's object converted. Other
 * writes are returned as they are.
 */
function settleInStorageVersion(r: ResourceTarget, next: Obj, toStore: Obj, stored: Obj): Obj {
  const storageVersion = storageVersionOf(r.info);
  if (storageVersion === undefined || storageVersion === r.apiVersion) return toStore;
  if (r.ri.subresource === 'status') {
    return prepareForStatusUpdate(r.info, toStorageVersion(canonicalize(next, r.info.kind, r.apiVersion), r.info), stored);
  }
  if (r.ri.subresource !== '') return toStore;
  if (hasStatusSubresource(r.info)) {
    if (stored.status === undefined) delete toStore.status;
    else toStore.status = stored.status;
  }
  return toStore;
}

export interface UpdateOutcome {
  /** The object after the write, in its storage version. */
  json: string;
  created: boolean;
}

/** What an update makes of the current object: the new object and the resourceVersion the request pinned ('' for none). */
export interface ComputedUpdate {
  next: Obj;
  pinnedVersion: string;
  /**
   * The managedFields a server-side apply to a subresource computed (an empty list: none), stored
   * on the object the subresource's rules make, in place of whatever those rules kept.
   */
  managedFields?: unknown;
}

/**
 * The update path shared by PUT, PATCH and the writable subresources, run in kube's GuaranteedUpdate
 * loop: `compute` turns the current object (in the request's version) into the request's new one;
 * the subresource's and the type's strategy decide what is stored, then mutating admission,
 * validation and validating admission run, and the result is compare-and-swapped against exactly the
 * version read. Unpinned writes retry on conflicts, pinned ones answer 409. `onMissing` answers when
 * there is no object (create-on-update or 404). A write that changes nothing stores nothing. With a
 * `manager`, the object's managedFields record the write (src/fieldmanager).
 */
export async function updateObject(
  r: ResourceTarget,
  dryRun: boolean,
  compute: (current: Obj, object: Obj) => Promise<ComputedUpdate> | ComputedUpdate,
  onMissing: () => Promise<UpdateOutcome>,
  manager?: string,
): Promise<UpdateOutcome> {
  const name = r.ri.name;
  const qr = { group: r.info.group, resource: r.info.resource };
  const facts = r.server.catalog.customResources;
  const attempt = async (stored: StoredObject | undefined, key: string, sendingWrite: SendingWrite): Promise<UpdateOutcome | typeof RETRY> => {
    if (!stored) return onMissing();
    const storedObj = JSON.parse(stored.json) as Obj;
    // Updates and patches apply to the object in the request's version; it is stored converted back.
    const current = await servedObjectAsync(facts, storedObj, r.apiVersion);
    // The working copy, sharing nothing with `current`: a copy of the parsed values costs about half
    // a second parse of the stored text, and a fifth of structuredClone.
    const copy = cloneJson(current);
    const { next, pinnedVersion, managedFields } = await compute(copy, copy);
    if (pinnedVersion !== '' && pinnedVersion !== stored.resourceVersion) throw staleConflict(qr, name);
    const nextMeta = metadataOf(next);
    const uid = stringField(nextMeta, 'uid');
    if (r.ri.subresource === '' && uid !== '' && uid !== stringField(metadataOf(current), 'uid')) {
      throw conflict(qr, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${stringField(metadataOf(current), 'uid')}`);
    }
    const result = merge(r, next, current);
    if (Array.isArray(managedFields)) {
      if (managedFields.length === 0) delete metadataOf(result).managedFields;
      else metadataOf(result).managedFields = managedFields;
    }
    if (manager !== undefined && r.ri.subresource === 'scale') {
      const paths = new Map([...replicasPathsOf(r.info, r.apiVersion)].map(([v, p]) => [v, replicasPath(p)] as const));
      trackScaleUpdate(
        { info: r.info, apiVersion: r.apiVersion, subresource: 'scale', manager, facts },
        current,
        result,
        toScale(r.info, current),
        toScale(r.info, result),
        paths,
      );
    } else if (manager !== undefined) {
      const versionViews = await webhookVersionViews(facts, r.info, current, result);
      trackUpdate(
        { info: r.info, apiVersion: r.apiVersion, subresource: r.ri.subresource, manager, versionViews, facts },
        current,
        result,
        nextMeta.managedFields,
      );
    }
    metadataOf(result).resourceVersion = stored.resourceVersion;
    // undefined: a concurrent write got in first; the loop retries.
    const outcome = await writeWithKindHooks(r, result, current, dryRun, async (): Promise<UpdateOutcome | undefined> => {
      const attrs = {
        operation: 'UPDATE' as const,
        info: r.info,
        namespace: r.ri.namespace,
        name,
        subresource: r.ri.subresource,
        object: result,
        oldObject: current,
        dryRun,
        request: admissionRequestOf(r.scope, 'UPDATE'),
      };
      await r.admission.admit(attrs);
      validateUpdate(r, result, current);
      for (const w of writeWarnings(r.info, r.ri.subresource, result, current)) attrs.request.warn(w);
      await r.admission.validate(attrs);
      const resultMeta = metadataOf(result);
      const finalizers = Array.isArray(resultMeta.finalizers) ? resultMeta.finalizers : [];
      const removeNow =
        resultMeta.deletionTimestamp !== undefined &&
        finalizers.length === 0 &&
        strategyFor(r.info).heldAfterFinalizers?.(result) !== true &&
        (resultMeta.deletionGracePeriodSeconds === undefined || resultMeta.deletionGracePeriodSeconds === 0);
      const toStore = settleInStorageVersion(r, next, await toStorageVersionAsync(facts, result, r.info), storedObj);
      metadataOf(toStore).resourceVersion = stored.resourceVersion;
      // As kube compares what it would write with what is stored: a write that changes nothing is no
      // write (the version label of kinds whose versions share one schema does not count).
      if (jsonEqual({ ...toStore, apiVersion: storedObj.apiVersion }, storedObj)) return { json: stored.json, created: false };
      if (dryRun) return { json: JSON.stringify(toStore), created: false };
      try {
        if (removeNow) {
          // As kube's store: an update that empties a deleted object's finalizers deletes it instead of
          // writing it, in one compare-and-swap on the version read (no window where it is left behind).
          sendingWrite();
          const removed = await r.server.storage.delete(r.type, key, stored.resourceVersion);
          await afterKindDelete(r, result);
          return { json: removed.json, created: false };
        }
        sendingWrite();
        const updated = await r.server.storage.update(r.type, key, toStore, stored.resourceVersion);
        return { json: updated.json, created: false };
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Conflict' && pinnedVersion === '') return undefined;
        if (err instanceof StorageError && err.code === 'NotFound' && pinnedVersion === '') return undefined;
        throw storageErrorToApi(err, r, name);
      }
    });
    return outcome ?? RETRY;
  };
  // Starts from the list cache's copy where this process keeps one (Redis), saving a read.
  return guaranteedUpdate(r, name, attempt, { startFromCache: true });
}
