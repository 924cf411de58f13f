import { shapeStoredObject } from '../codec/go-shape.js';
import type { OutputFormat } from '../codec/negotiation.js';
import { badRequest, conflict, methodNotAllowed, notFound, staleConflict } from '../api/errors.js';
import { writeObject } from '../codec/response-writer.js';
import { readBody } from '../codec/request-body.js';
import { StorageError } from '../storage/storage.js';
import { allowsCreateOnUpdate, hasStatusSubresource, prepareForFinalize, prepareForStatusUpdate, prepareForUpdate } from '../strategy/resource-strategy.js';
import { writeOptionsOf, type ResourceRequest, outputFor, scaleKind } from './context.js';
import { storageErrorToApi } from '../store/storage-errors.js';
import { createObject } from './create.js';
import { decodeObject } from './decode-object.js';
import { canonicalize, isObject, jsonEqual, metadataOf, stringField, type Obj } from '../api/object-util.js';
import { servedJsonFor, servedObject, storageVersionOf, toStorageVersion } from '../conversion/version-conversion.js';
import { decodePatchedObject, patchObject, readPatch } from './patching.js';
import { fromScale, SCALE_API_VERSION, toScale } from './scale.js';
import { validateUpdate } from './validate-object.js';
import { guaranteedUpdate, RETRY } from '../store/guaranteed-update.js';
import { releaseServiceAllocation, withServiceAllocation } from '../services/service-allocation.js';

/** Subresources written through PUT/PATCH, and how each maps onto the stored object. */
const WRITABLE_SUBRESOURCES = new Set(['', 'status', 'scale', 'finalize', 'approval', 'ephemeralcontainers', 'resize']);

/** The object a write's body speaks about: the stored object itself, or its Scale view. */
function viewOf(r: ResourceRequest, stored: Obj): Obj {
  return r.ri.subresource === 'scale' ? toScale(r, stored) : stored;
}

/**
 * Computes the object to store from the stored one and the request's new view, applying the
 * subresource's rules (status keeps spec, scale changes only replicas, finalize only spec.finalizers)
 * and the main resource's (status kept, generation bumped on spec change, system metadata kept).
 */
function merge(r: ResourceRequest, next: Obj, old: Obj): Obj {
  const sub = r.ri.subresource;
  let result: Obj;
  if (sub === 'status' || sub === 'approval') result = prepareForStatusUpdate(r.info, next, old);
  else if (sub === 'finalize') result = prepareForFinalize(next, old);
  else if (sub === 'scale') {
    result = fromScale(next, old);
    prepareForUpdate(r.info, result, old);
  } else {
    result = canonicalize(next, r.info.kind, r.apiVersion);
    const meta = metadataOf(result);
    const oldMeta = metadataOf(old);
    if (stringField(meta, 'uid') === '') meta.uid = oldMeta.uid;
    meta.creationTimestamp = oldMeta.creationTimestamp;
    if (oldMeta.deletionTimestamp !== undefined) meta.deletionTimestamp = oldMeta.deletionTimestamp;
    else delete meta.deletionTimestamp;
    if (oldMeta.deletionGracePeriodSeconds !== undefined) meta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
    else delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    prepareForUpdate(r.info, result, old);
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
function settleInStorageVersion(r: ResourceRequest, next: Obj, toStore: Obj, stored: Obj): Obj {
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

interface UpdateOutcome {
  /** The object after the write, in its storage version. */
  json: string;
  created: boolean;
}

/**
 * The guaranteed-update loop shared by PUT and PATCH. `compute` turns the current stored object into
 * the request's new view and reports whether the request pinned a resourceVersion; unpinned writes
 * retry on conflicts, pinned ones answer 409.
 */
async function updateLoop(
  r: ResourceRequest,
  dryRun: boolean,
  compute: (current: Obj) => Promise<{ next: Obj; pinnedVersion: string }> | { next: Obj; pinnedVersion: string },
  onMissing: () => Promise<UpdateOutcome>,
): Promise<UpdateOutcome> {
  const name = r.ri.name;
  const qr = { group: r.info.group, resource: r.info.resource };
  return guaranteedUpdate(r, name, async (stored, key) => {
    if (!stored) return onMissing();
    const storedObj = JSON.parse(stored.json) as Obj;
    // Updates and patches apply to the object in the request's version; it is stored converted back.
    const current = servedObject(storedObj, r.apiVersion);
    const { next, pinnedVersion } = await compute(structuredClone(current));
    if (pinnedVersion !== '' && pinnedVersion !== stored.resourceVersion) throw staleConflict(qr, name);
    const nextMeta = metadataOf(next);
    const uid = stringField(nextMeta, 'uid');
    if (r.ri.subresource === '' && uid !== '' && uid !== stringField(metadataOf(current), 'uid')) {
      throw conflict(qr, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${stringField(metadataOf(current), 'uid')}`);
    }
    const result = merge(r, next, current);
    metadataOf(result).resourceVersion = stored.resourceVersion;
    // undefined: a concurrent write got in first; the loop retries.
    const outcome = await withServiceAllocation(r, result, current, dryRun, async (): Promise<UpdateOutcome | undefined> => {
      const attrs = {
        operation: 'UPDATE' as const,
        info: r.info,
        namespace: r.ri.namespace,
        name,
        subresource: r.ri.subresource,
        object: result,
        oldObject: current,
        dryRun,
      };
      await r.services.admission.admit(attrs);
      validateUpdate(r, result, current);
      await r.services.admission.validate(attrs);
      const resultMeta = metadataOf(result);
      const finalizers = Array.isArray(resultMeta.finalizers) ? resultMeta.finalizers : [];
      const removeNow =
        resultMeta.deletionTimestamp !== undefined &&
        finalizers.length === 0 &&
        (resultMeta.deletionGracePeriodSeconds === undefined || resultMeta.deletionGracePeriodSeconds === 0);
      const toStore = settleInStorageVersion(r, next, toStorageVersion(result, r.info), storedObj);
      metadataOf(toStore).resourceVersion = stored.resourceVersion;
      // As kube compares what it would write with what is stored: a write that changes nothing is no
      // write (the version label of kinds whose versions share one schema does not count).
      if (jsonEqual({ ...toStore, apiVersion: storedObj.apiVersion }, storedObj)) return { json: stored.json, created: false };
      if (dryRun) return { json: JSON.stringify(toStore), created: false };
      try {
        if (removeNow) {
          await r.services.storage.update(r.type, key, toStore, stored.resourceVersion);
          const removed = await r.services.storage.delete(r.type, key);
          await releaseServiceAllocation(r, result);
          return { json: removed.json, created: false };
        }
        const updated = await r.services.storage.update(r.type, key, toStore, stored.resourceVersion);
        return { json: updated.json, created: false };
      } catch (err) {
        if (err instanceof StorageError && err.code === 'Conflict' && pinnedVersion === '') return undefined;
        if (err instanceof StorageError && err.code === 'NotFound' && pinnedVersion === '') return undefined;
        throw storageErrorToApi(err, r, name);
      }
    });
    return outcome ?? RETRY;
  });
}

function checkSubresource(r: ResourceRequest): void {
  if (!WRITABLE_SUBRESOURCES.has(r.ri.subresource)) throw methodNotAllowed();
  if (r.ri.name === '') throw methodNotAllowed();
}

/** The object's name must be the URL's, as kube-apiserver checks a PUT body and a patched object. */
function checkName(r: ResourceRequest, name: string): void {
  if (name === '') throw badRequest(`the name of the object (${r.ri.name} based on URL) was undeterminable: name must be provided`);
  if (name !== r.ri.name) throw badRequest(`the name of the object (${name}) does not match the name on the URL (${r.ri.name})`);
}

/** PUT: replaces the object (or subresource view); 409 on a stale resourceVersion. */
export async function handleUpdate(r: ResourceRequest): Promise<void> {
  checkSubresource(r);
  const format = outputFor(r, 'object', ...scaleKind(r));
  const dryRun = writeOptionsOf(r).dryRun;
  const isScale = r.ri.subresource === 'scale';
  const body = isScale ? await decodeObject(r, 'Scale', SCALE_API_VERSION) : await decodeObject(r);
  const bodyMeta = metadataOf(body);
  checkName(r, stringField(bodyMeta, 'name'));
  const bodyNs = stringField(bodyMeta, 'namespace');
  if (r.info.namespaced && bodyNs !== '' && bodyNs !== r.ri.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  // kube fills a missing namespace from the request (EnsureObjectNamespaceMatchesRequestNamespace).
  if (r.info.namespaced && bodyNs === '') bodyMeta.namespace = r.ri.namespace;
  const pinned = stringField(bodyMeta, 'resourceVersion');
  const outcome = await updateLoop(
    r,
    dryRun,
    () => ({ next: structuredClone(body), pinnedVersion: pinned }),
    async () => {
      if (r.ri.subresource === '' && allowsCreateOnUpdate(r.info)) {
        delete bodyMeta.resourceVersion;
        return { json: await createObject(r, body, dryRun), created: true };
      }
      throw notFound({ group: r.info.group, resource: r.info.resource }, r.ri.name);
    },
  );
  respond(r, outcome, format);
}

/** PATCH: applies a JSON, merge or strategic merge patch to the current object and stores the result. */
export async function handlePatch(r: ResourceRequest): Promise<void> {
  checkSubresource(r);
  const format = outputFor(r, 'object', ...scaleKind(r));
  const dryRun = writeOptionsOf(r).dryRun;
  const contentType = r.req.headers['content-type'] ?? '';
  const body = await readBody(r.req, r.services.limits.maxRequestBodyBytes);
  const patch = readPatch(r, contentType, body);
  const outcome = await updateLoop(
    r,
    dryRun,
    (current) => {
      const view = viewOf(r, current);
      const viewRv = stringField(metadataOf(view), 'resourceVersion');
      const patched = patchObject(r, patch, view);
      if (!isObject(patched)) throw badRequest('the patched object is not an object');
      decodePatchedObject(r, patch, patched);
      const patchedMeta = metadataOf(patched);
      const patchedRv = stringField(patchedMeta, 'resourceVersion');
      checkName(r, stringField(patchedMeta, 'name'));
      return { next: patched, pinnedVersion: patchedRv === viewRv ? '' : patchedRv };
    },
    async () => {
      throw notFound({ group: r.info.group, resource: r.info.resource }, r.ri.name);
    },
  );
  respond(r, outcome, format);
}

function respond(r: ResourceRequest, outcome: UpdateOutcome, format: OutputFormat): void {
  if (r.ri.subresource === 'scale') {
    writeObject(r.res, outcome.created ? 201 : 200, toScale(r, JSON.parse(outcome.json) as Obj), format);
    return;
  }
  writeObject(r.res, outcome.created ? 201 : 200, servedJsonFor(outcome.json, r.apiVersion, format.representation), format);
}
