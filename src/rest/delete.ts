import { ApiError, conflict, notFound } from '../api/errors.js';
import { admissionRequestOf, deleteOptionsObject } from '../api/request-scope.js';
import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';
import type { Selection } from './selection.js';
import { strategyFor } from '../strategy/strategies.js';
import { decodeStored } from './corrupt-object.js';
import { deletionFinalizers } from './deletion-finalizers.js';
import { guaranteedUpdate, RETRY, type SendingWrite } from './guaranteed-update.js';
import type { StoredObject } from '../storage/storage.js';
import type { ResourceTarget } from './server-context.js';
import { storageErrorToApi, withStorage } from './storage-errors.js';
import { afterKindDelete } from './kind-hooks.js';
import { StorageError } from '../api/storage-error.js';

/** The parts of DeleteOptions Capstan acts on. */
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun: boolean;
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

/**
 * The DeleteOptions a decoded, validated DeleteOptions object asks for (`dryRun` as a list, as the
 * API has it); fields of the wrong type are left out.
 */
export function deleteOptionsOf(options: Obj): DeleteOptions {
  const out: DeleteOptions = { dryRun: Array.isArray(options.dryRun) && options.dryRun.length > 0 };
  if (typeof options.gracePeriodSeconds === 'number') out.gracePeriodSeconds = options.gracePeriodSeconds;
  if (typeof options.propagationPolicy === 'string') out.propagationPolicy = options.propagationPolicy;
  if (typeof options.orphanDependents === 'boolean') out.orphanDependents = options.orphanDependents;
  if (options.ignoreStoreReadErrorWithClusterBreakingPotential === true) out.ignoreStoreReadErrorWithClusterBreakingPotential = true;
  if (isObject(options.preconditions)) {
    const p = options.preconditions;
    out.preconditions = {
      uid: typeof p.uid === 'string' ? p.uid : undefined,
      resourceVersion: typeof p.resourceVersion === 'string' ? p.resourceVersion : undefined,
    };
  }
  return out;
}

export interface DeleteOutcome {
  /** The object after the request: removed (with the deletion's version) or marked terminating. */
  json: string;
  removed: boolean;
}

/**
 * Deletes one object in kube's GuaranteedUpdate loop: preconditions, admission, then removed at once
 * when nothing holds it, otherwise marked with `deletionTimestamp` (the propagation policy as the
 * `orphan` / `foregroundDeletion` finalizers, the kind's grace period) and kept until its finalizers
 * are gone (SPEC section 3). Throws 404, 409 (preconditions) or the corrupt-object 500.
 */
export async function deleteObject(r: ResourceTarget, name: string, opts: DeleteOptions): Promise<DeleteOutcome> {
  const qr = { group: r.info.group, resource: r.info.resource };
  const attempt = async (stored: StoredObject | undefined, key: string, sendingWrite: SendingWrite): Promise<DeleteOutcome | typeof RETRY> => {
    if (!stored) throw notFound(qr, name);
    const obj = decodeStored(r, stored);
    const meta = metadataOf(obj);
    const pre = opts.preconditions;
    if (pre?.uid !== undefined && pre.uid !== meta.uid) {
      throw conflict(qr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(meta.uid)}`);
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== stored.resourceVersion) {
      throw conflict(
        qr,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${stored.resourceVersion}`,
      );
    }
    await r.admission.run({
      operation: 'DELETE',
      info: r.info,
      namespace: r.ri.namespace,
      name,
      subresource: '',
      object: undefined,
      oldObject: obj,
      dryRun: opts.dryRun,
      request: admissionRequestOf(r.scope, 'DELETE', deleteOptionsObject(opts)),
    });
    const held = Array.isArray(meta.finalizers) ? meta.finalizers.filter((f): f is string => typeof f === 'string') : [];
    // The propagation policy becomes the `orphan` / `foregroundDeletion` finalizers, as kube's store does.
    const gc = deletionFinalizers(r.info, held, opts);
    const finalizers = gc.finalizers;
    const strategy = strategyFor(r.info);
    const grace = strategy.gracefulDeleteSeconds?.(obj, opts.gracePeriodSeconds) ?? 0;
    const twoPhase = strategy.markTerminating !== undefined;
    if (finalizers.length === 0 && grace === 0 && !twoPhase) {
      if (opts.dryRun) return { json: stored.json, removed: true };
      try {
        sendingWrite();
        const removed = await r.server.storage.delete(r.type, key, stored.resourceVersion);
        await afterKindDelete(r, obj);
        return { json: removed.json, removed: true };
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Conflict') return RETRY;
        throw storageErrorToApi(err, r, name);
      }
    }
    // Graceful: mark terminating (once), keep the object until finalizers and grace are done.
    if (meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null) {
      const currentGrace = typeof meta.deletionGracePeriodSeconds === 'number' ? meta.deletionGracePeriodSeconds : 0;
      // A pending graceful deletion keeps everything; a finalizer-only one still takes a new policy.
      if (grace >= currentGrace && (currentGrace > 0 || !gc.changed)) return { json: stored.json, removed: false };
    } else if (typeof meta.generation === 'number' && meta.generation > 0) meta.generation += 1;
    if (gc.changed) meta.finalizers = finalizers;
    meta.deletionTimestamp = meta.deletionTimestamp ?? new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    meta.deletionGracePeriodSeconds = grace;
    strategy.markTerminating?.(obj);
    if (opts.dryRun) return { json: JSON.stringify(obj), removed: false };
    try {
      sendingWrite();
      const updated = await r.server.storage.update(r.type, key, obj, stored.resourceVersion);
      return { json: updated.json, removed: false };
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Conflict') return RETRY;
      throw storageErrorToApi(err, r, name);
    }
  };
  // Starts from the list cache's copy where this process keeps one (Redis), saving a read.
  return guaranteedUpdate(r, name, attempt, { startFromCache: true });
}

/** What a deletecollection removed or marked: each object's JSON (storage version) and the list's version. */
export interface CollectionDeleteOutcome {
  resourceVersion: string;
  deleted: string[];
}

/**
 * Deletes every object of the collection `selection` picks, each through `deleteObject` with `opts`
 * (objects gone meanwhile are skipped), as kube's DeleteCollection does.
 */
export async function deleteCollection(r: ResourceTarget, selection: Selection, opts: DeleteOptions): Promise<CollectionDeleteOutcome> {
  const listed = await withStorage(r, '', () =>
    r.server.storage.list(r.type, {
      namespace: r.info.namespaced && r.ri.namespace !== '' ? r.ri.namespace : undefined,
      filter: selection.matchesStored,
    }),
  );
  const deleted: string[] = [];
  const items = selection.selectConverted !== undefined ? await selection.selectConverted(listed.items) : listed.items;
  for (const item of items) {
    const name = stringField(metadataOf(JSON.parse(item.json) as Obj), 'name');
    const ns = item.key.includes('/') ? item.key.slice(0, item.key.indexOf('/')) : '';
    const scoped: ResourceTarget = { ...r, ri: { ...r.ri, namespace: ns, name } };
    try {
      deleted.push((await deleteObject(scoped, name, opts)).json);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) continue;
      throw err;
    }
  }
  return { resourceVersion: listed.resourceVersion, deleted };
}
