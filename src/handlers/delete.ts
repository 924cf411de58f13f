import { ApiError, badRequest, conflict, methodNotAllowed, notFound } from '../api/errors.js';
import { decodeBody, readBody } from '../codec/request-body.js';
import { writeList, writeObject } from '../codec/response-writer.js';
import { StorageError, type StoredObject } from '../storage/storage.js';
import { returnsDeletedObject } from '../strategy/resource-strategy.js';
import { isDryRun, storageErrorToApi, withStorage, type ResourceRequest, type ResourceTarget, outputFor, scaleKind } from './context.js';
import { isObject, metadataOf, objectKey, stringField, withApiVersion, type Obj } from './object-util.js';
import { selectionFor } from './selection.js';

/** The parts of DeleteOptions Capstan acts on. */
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun: boolean;
}

const PROPAGATION_POLICIES = new Set(['Orphan', 'Background', 'Foreground']);

/** Reads DeleteOptions from the body (JSON or YAML) and the query; query values win, as in kube. */
async function readDeleteOptions(r: ResourceRequest): Promise<DeleteOptions> {
  const body = await readBody(r.req);
  let opts: Obj = {};
  if (body.length > 0) {
    const value = decodeBody(r.req.headers['content-type'], body, 'DeleteOptions');
    if (!isObject(value)) throw badRequest('the object provided is unrecognized (must be of type DeleteOptions)');
    if (value.kind !== undefined && value.kind !== 'DeleteOptions') {
      throw badRequest(`${String(value.kind)} in version "v1" cannot be handled as a DeleteOptions`);
    }
    opts = value;
  }
  const out: DeleteOptions = { dryRun: isDryRun(r.query) || (Array.isArray(opts.dryRun) && opts.dryRun.includes('All')) };
  const grace = r.query.get('gracePeriodSeconds') ?? opts.gracePeriodSeconds;
  if (grace !== undefined && grace !== null) {
    const n = Number(grace);
    if (!Number.isInteger(n)) throw badRequest(`gracePeriodSeconds: Invalid value: "${String(grace)}": must be an integer`);
    out.gracePeriodSeconds = n;
  }
  const policy = r.query.get('propagationPolicy') ?? opts.propagationPolicy;
  if (policy !== undefined && policy !== null) {
    if (typeof policy !== 'string' || !PROPAGATION_POLICIES.has(policy)) {
      throw new ApiError(422, 'Invalid', `DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "${String(policy)}": supported values: "Foreground", "Background", "Orphan", "nil"`, {});
    }
    out.propagationPolicy = policy;
  }
  if (isObject(opts.preconditions)) {
    const p = opts.preconditions;
    out.preconditions = {
      uid: typeof p.uid === 'string' ? p.uid : undefined,
      resourceVersion: typeof p.resourceVersion === 'string' ? p.resourceVersion : undefined,
    };
  }
  return out;
}

function successStatus(r: ResourceRequest, obj: Obj): Obj {
  const meta = metadataOf(obj);
  const details: Obj = { name: meta.name, kind: r.info.resource, uid: meta.uid };
  if (r.info.group) details.group = r.info.group;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

/** Whether a pod is deleted gracefully (bound to a node and not finished), as kube's pod strategy decides. */
function gracefulSeconds(r: ResourceTarget, obj: Obj, opts: DeleteOptions): number {
  if (r.info.group !== '' || r.info.resource !== 'pods') return 0;
  const spec = isObject(obj.spec) ? obj.spec : {};
  const status = isObject(obj.status) ? obj.status : {};
  if (stringField(spec, 'nodeName') === '' || status.phase === 'Succeeded' || status.phase === 'Failed') return 0;
  if (opts.gracePeriodSeconds !== undefined) return Math.max(0, opts.gracePeriodSeconds);
  return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
}

export interface DeleteOutcome {
  /** The object after the request: removed (with the deletion's version) or marked terminating. */
  json: string;
  removed: boolean;
}

/**
 * Deletes one object: removed at once when nothing holds it, otherwise marked with
 * `deletionTimestamp` and kept until its finalizers are gone (SPEC section 3).
 */
export async function deleteObject(r: ResourceTarget, name: string, opts: DeleteOptions): Promise<DeleteOutcome> {
  const key = objectKey(r.info.namespaced ? r.ri.namespace : '', name);
  const qr = { group: r.info.group, resource: r.info.resource };
  for (let attempt = 0; attempt < 20; attempt++) {
    const stored: StoredObject | undefined = await withStorage(r, name, () => r.services.storage.get(r.type, key));
    if (!stored) throw notFound(qr, name);
    const obj = JSON.parse(stored.json) as Obj;
    const meta = metadataOf(obj);
    const pre = opts.preconditions;
    if (pre?.uid !== undefined && pre.uid !== meta.uid) {
      throw conflict(qr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(meta.uid)}`);
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== stored.resourceVersion) {
      throw conflict(qr, name, `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${stored.resourceVersion}`);
    }
    await r.services.admission.run({
      operation: 'DELETE', info: r.info, namespace: r.ri.namespace, name, subresource: '', object: undefined, oldObject: obj, dryRun: opts.dryRun,
    });
    const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
    const grace = gracefulSeconds(r, obj, opts);
    const namespaceHold = r.info.group === '' && r.info.resource === 'namespaces';
    if (finalizers.length === 0 && grace === 0 && !namespaceHold) {
      if (opts.dryRun) return { json: stored.json, removed: true };
      try {
        const removed = await r.services.storage.delete(r.type, key, stored.resourceVersion);
        return { json: removed.json, removed: true };
      } catch (err) {
        if (err instanceof StorageError && (err.code === 'Conflict')) continue;
        throw storageErrorToApi(err, r, name);
      }
    }
    // Graceful: mark terminating (once), keep the object until finalizers and grace are done.
    if (meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null) {
      const currentGrace = typeof meta.deletionGracePeriodSeconds === 'number' ? meta.deletionGracePeriodSeconds : 0;
      if (grace >= currentGrace) return { json: stored.json, removed: false };
    }
    meta.deletionTimestamp = meta.deletionTimestamp ?? new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    meta.deletionGracePeriodSeconds = grace;
    if (namespaceHold) {
      obj.status = { ...(isObject(obj.status) ? obj.status : {}), phase: 'Terminating' };
    }
    if (opts.dryRun) return { json: JSON.stringify(obj), removed: false };
    try {
      const updated = await r.services.storage.update(r.type, key, obj, stored.resourceVersion);
      return { json: updated.json, removed: false };
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Conflict') continue;
      throw storageErrorToApi(err, r, name);
    }
  }
  throw conflict(qr, name, 'too many concurrent updates, please retry');
}

/** DELETE of one object. */
export async function handleDelete(r: ResourceRequest): Promise<void> {
  if (r.ri.subresource !== '') throw methodNotAllowed();
  const format = outputFor(r, 'object', ...scaleKind(r));
  const opts = await readDeleteOptions(r);
  const outcome = await deleteObject(r, r.ri.name, opts);
  const obj = JSON.parse(outcome.json) as Obj;
  if (outcome.removed && !returnsDeletedObject(r.info)) {
    writeObject(r.res, 200, successStatus(r, obj), { ...format, representation: 'object' });
    return;
  }
  writeObject(r.res, 200, withApiVersion(outcome.json, r.apiVersion), format);
}

/** DELETE of a collection: deletes every selected object, answering the list of what was deleted. */
export async function handleDeleteCollection(r: ResourceRequest): Promise<void> {
  if (r.ri.subresource !== '') throw methodNotAllowed();
  const format = outputFor(r, 'list');
  const opts = await readDeleteOptions(r);
  const selection = selectionFor(r);
  const listed = await withStorage(r, '', () => r.services.storage.list(r.type, {
    namespace: r.info.namespaced && r.ri.namespace !== '' ? r.ri.namespace : undefined,
    filter: selection.matchesStored,
  }));
  const deleted: string[] = [];
  for (const item of listed.items) {
    const name = stringField(metadataOf(JSON.parse(item.json) as Obj), 'name');
    const ns = item.key.includes('/') ? item.key.slice(0, item.key.indexOf('/')) : '';
    const scoped: ResourceRequest = { ...r, ri: { ...r.ri, namespace: ns, name } };
    try {
      const outcome = await deleteObject(scoped, name, opts);
      deleted.push(withApiVersion(outcome.json, r.apiVersion));
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) continue;
      throw err;
    }
  }
  await writeList(r.res, { kind: `${r.info.kind}List`, apiVersion: r.apiVersion, metadata: { resourceVersion: listed.resourceVersion } }, deleted, format);
}
