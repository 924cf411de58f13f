import { invalid, type ApiError } from '../api/errors.js';
import { objectKey } from '../api/object-util.js';
import { CorruptObjectError, decodeFailure } from './corrupt-object.js';
import { guaranteedUpdate, RETRY } from './guaranteed-update.js';
import type { ResourceTarget } from './server-context.js';
import { storageErrorToApi, withStorage } from './storage-errors.js';
import { StorageError } from '../api/storage-error.js';

const OPTION = 'ignoreStoreReadErrorWithClusterBreakingPotential';

/** The Status kube answers an unsafe deletion with: it has no object to return (its bytes do not decode). */
export type UnsafeDeleteStatus = {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Success';
  code: 200;
  details: { name: string; kind: string };
};

/** What `deleteCorruptObject` did: the normal deletion's outcome, or the Status of an unsafe one. */
export type CorruptDeleteResult<T> = { outcome: T; status?: undefined } | { outcome?: undefined; status: UnsafeDeleteStatus };

/** 422 for `ignoreStoreReadErrorWithClusterBreakingPotential` on a deletecollection, in kube's words. */
export function unsafeDeleteCollectionRefused(): ApiError {
  return invalid('DeleteOptions', 'meta.k8s.io', '', [
    { reason: 'FieldValueInvalid', message: 'Invalid value: true: is not allowed with DELETECOLLECTION, try again after removing the option', field: OPTION },
  ]);
}

/**
 * kube's corrupt object deleter, for a DELETE with `ignoreStoreReadErrorWithClusterBreakingPotential`
 * (the gate and both authorizations already checked by the caller):
 *
 * - the object must exist and be unreadable: otherwise 422 on the resource, "is exclusively used to
 *   delete corrupt object(s), try again by removing this option";
 * - the normal deletion (`normalDelete`) is tried first, and its outcome returned if it succeeds;
 *   any failure other than a corrupt-object read ends the request with that failure;
 * - otherwise whatever is stored under the key is removed without being decoded: preconditions,
 *   finalizers, grace periods, admission and post-delete hooks are all skipped. The removal is a
 *   compare-and-swap at the version read, retried when the object changed meanwhile. Watchers see
 *   a DELETED event. The answer is a Success Status naming the object (kube has no object to return).
 */
export async function deleteCorruptObject<T>(target: ResourceTarget, name: string, normalDelete: () => Promise<T>): Promise<CorruptDeleteResult<T>> {
  const key = objectKey(target.info.namespaced ? target.ri.namespace : '', name);
  const stored = await withStorage(target, name, () => target.server.storage.get(target.type, key));
  if (stored === undefined || decodeFailure(stored.json) === undefined) {
    throw invalid(target.info.resource, target.info.group, name, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: true: is exclusively used to delete corrupt object(s), try again by removing this option',
        field: OPTION,
      },
    ]);
  }
  try {
    return { outcome: await normalDelete() };
  } catch (err) {
    if (!(err instanceof CorruptObjectError)) throw err;
  }
  await guaranteedUpdate(target, name, async (current, storageKey) => {
    if (current === undefined) return false;
    try {
      await target.server.storage.delete(target.type, storageKey, current.resourceVersion);
      return true;
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Conflict') return RETRY;
      if (err instanceof StorageError && err.code === 'NotFound') return false;
      throw storageErrorToApi(err, target, name);
    }
  });
  return { status: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200, details: { name, kind: target.info.kind } } };
}
