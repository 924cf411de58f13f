import type { OutputFormat } from '../codec/negotiation.js';
import { cloneJson } from '../codec/json-value.js';
import { badRequest, methodNotAllowed, notFound } from '../api/errors.js';
import { writeObject } from '../codec/response-writer.js';
import { managerOrUserAgent } from '../fieldmanager/manager-name.js';
import { readBody } from '../codec/request-body.js';
import { allowsCreateOnUpdate } from '../strategy/resource-strategy.js';
import { writeOptionsOf, type ResourceRequest, outputFor, scaleKind } from './context.js';
import { isCreater, type Updater } from '../rest/rest-verbs.js';
import { appliedDuplicates, applyToObject, applyToObjectConverting, applyToScale, readAppliedConfiguration } from '../apply/server-side-apply.js';
import { parseMediaType } from '../codec/media-type.js';
import { APPLY_CBOR_PATCH_TYPE, APPLY_YAML_PATCH_TYPE, BUILTIN_PATCH_TYPES } from '../patch/apply-patch.js';
import { RouteUnsupportedMediaTypeError } from '../codec/negotiation.js';
import { CborDecodeError, decodeCbor } from '../codec/cbor/cbor-decoder.js';
import type { UpdateOutcome } from '../rest/update.js';
import { addWarnings, decodeObject, fieldValidationOf } from './decode-object.js';
import { isObject, metadataOf, stringField, type Obj } from '../api/object-util.js';
import { servedJsonForAsync } from '../conversion/converting-io.js';
import { decodePatchedObject, patchObject, readPatch } from './patching.js';
import { SCALE_API_VERSION } from '../api/scale-kind.js';

/** Subresources written through PUT/PATCH, and how each maps onto the stored object. */
const WRITABLE_SUBRESOURCES = new Set(['', 'status', 'scale', 'finalize', 'approval', 'ephemeralcontainers', 'resize']);

function checkSubresource(r: ResourceRequest): void {
  if (!WRITABLE_SUBRESOURCES.has(r.ri.subresource)) throw methodNotAllowed();
  if (r.ri.name === '') throw methodNotAllowed();
}

/** The object's name must be the URL's, as kube-apiserver checks a PUT body and a patched object. */
function checkName(r: ResourceRequest, name: string): void {
  if (name === '') throw badRequest(`the name of the object (${r.ri.name} based on URL) was undeterminable: name must be provided`);
  if (name !== r.ri.name) throw badRequest(`the name of the object (${name}) does not match the name on the URL (${r.ri.name})`);
}

/** kube's EnsureObjectNamespaceMatchesRequestNamespace for a namespaced object's result. */
function checkNamespace(r: ResourceRequest, obj: Obj): void {
  const ns = stringField(metadataOf(obj), 'namespace');
  if (r.info.namespaced && ns !== '' && ns !== r.ri.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
}

/** PUT: replaces the object (or subresource view); 409 on a stale resourceVersion. */
export async function handleUpdate(r: ResourceRequest, store: Updater): Promise<void> {
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
  const outcome = await store.update(
    () => ({ next: cloneJson(body), pinnedVersion: pinned }),
    async () => {
      if (r.ri.subresource === '' && allowsCreateOnUpdate(r.info) && isCreater(store)) {
        delete bodyMeta.resourceVersion;
        return {
          json: await store.create(body, { dryRun, manager: managerOrUserAgent(writeOptionsOf(r).fieldManager, r.req.headers['user-agent']) }),
          created: true,
        };
      }
      throw notFound({ group: r.info.group, resource: r.info.resource }, r.ri.name);
    },
    { dryRun, manager: managerOrUserAgent(writeOptionsOf(r).fieldManager, r.req.headers['user-agent']) },
  );
  await respond(r, outcome, format);
}

/** PATCH: applies a JSON, merge or strategic merge patch to the current object and stores the result. */
export async function handlePatch(r: ResourceRequest, store: Updater): Promise<void> {
  checkSubresource(r);
  const format = outputFor(r, 'object', ...scaleKind(r));
  const dryRun = writeOptionsOf(r).dryRun;
  const contentType = r.req.headers['content-type'] ?? '';
  const cbor = r.server.featureGates.CBORServingAndStorage === true;
  const type = parseMediaType(contentType).type;
  if (r.info.custom !== true && !routeConsumesPatch(type, cbor)) throw new RouteUnsupportedMediaTypeError();
  const body = await readBody(r.req, r.server.limits.maxRequestBodyBytes);
  if ((type === APPLY_YAML_PATCH_TYPE || (cbor && type === APPLY_CBOR_PATCH_TYPE)) && APPLY_SUBRESOURCES.has(r.ri.subresource)) {
    return handleApply(r, store, body, format, type === APPLY_CBOR_PATCH_TYPE ? 'cbor' : 'yaml');
  }
  const patch = readPatch(r, contentType, body);
  const outcome = await store.update(
    (view: Obj) => {
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
    { dryRun, manager: managerOrUserAgent(writeOptionsOf(r).fieldManager, r.req.headers['user-agent']) },
  );
  await respond(r, outcome, format);
}

/** The subresources server-side apply writes: the object itself, its status and its Scale. */
const APPLY_SUBRESOURCES = new Set(['', 'status', 'scale']);

/**
 * The patch media types kube-apiserver's PATCH routes for built-in resources declare; go-restful
 * answers 415 before the handler for any other Content-Type, or none.
 */
function routeConsumesPatch(type: string, cbor: boolean): boolean {
  return BUILTIN_PATCH_TYPES.includes(type) || (cbor && type === APPLY_CBOR_PATCH_TYPE);
}

/** An `application/apply-patch+cbor` body: the same object an apply-patch+yaml body gives, decoded from CBOR. */
function decodeCborApplyBody(body: Buffer, maxDepth: number): unknown {
  try {
    return decodeCbor(body, { maxDepth });
  } catch (err) {
    // kube reads both apply bodies through its YAML-or-CBOR decoder and words failures as YAML ones.
    if (err instanceof CborDecodeError) throw badRequest(`error decoding YAML: ${err.message}`);
    throw err;
  }
}

/**
 * Server-side apply (PATCH with application/apply-patch+yaml or, with CBORServingAndStorage, +cbor): the applied configuration is merged
 * into the current object by src/fieldmanager (conflicts answer 409), or applied to the kind's
 * empty object and created through the store's create path when there is none. On `status` and
 * `scale` the subresource's rules decide what is stored (the stored spec, or only the replicas)
 * and the managedFields the apply computed are stored with it (the manager's entry naming the
 * subresource); those answer 404 when there is no object. The store records no Update entry.
 */
async function handleApply(r: ResourceRequest, store: Updater, body: Buffer, format: OutputFormat, encoding: 'yaml' | 'cbor'): Promise<void> {
  const options = writeOptionsOf(r);
  const subresource = r.ri.subresource;
  const isScale = subresource === 'scale';
  const target = isScale ? { apiVersion: SCALE_API_VERSION, kind: 'Scale' } : { apiVersion: r.apiVersion, kind: r.info.kind };
  const decodeOther = encoding === 'cbor' ? decodeCborApplyBody : undefined;
  const { config, duplicates } = readAppliedConfiguration(body, target, r.server.limits.maxNestingDepth, decodeOther);
  let warnings: string[] = [];
  const facts = r.server.catalog.customResources;
  const t = { info: r.info, apiVersion: r.apiVersion, subresource, manager: options.fieldManager, force: options.force === true, facts };
  const pinned = stringField(metadataOf(config), 'resourceVersion');
  const outcome = await store.update(
    async (current: Obj, object: Obj) => {
      let next: Obj;
      let managedFields: unknown;
      if (isScale) {
        ({ scale: next, managedFields } = applyToScale(t, object, current, config));
      } else {
        next = await applyToObjectConverting(t, current, config);
        checkNamespace(r, next);
        if (subresource !== '') managedFields = metadataOf(next).managedFields ?? [];
      }
      checkName(r, stringField(metadataOf(next), 'name'));
      warnings = appliedDuplicates(duplicates, fieldValidationOf(r));
      return { next, pinnedVersion: pinned, managedFields };
    },
    async () => {
      if (!isCreater(store) || subresource !== '') throw notFound({ group: r.info.group, resource: r.info.resource }, r.ri.name);
      const next = applyToObject(t, undefined, config);
      checkName(r, stringField(metadataOf(next), 'name'));
      warnings = appliedDuplicates(duplicates, fieldValidationOf(r));
      return { json: await store.create(next, { dryRun: options.dryRun }), created: true };
    },
    { dryRun: options.dryRun },
  );
  addWarnings(r, warnings);
  await respond(r, outcome, format);
}

async function respond(r: ResourceRequest, outcome: UpdateOutcome, format: OutputFormat): Promise<void> {
  if (r.ri.subresource === 'scale') {
    // The scale store answers the Scale itself.
    writeObject(r.res, outcome.created ? 201 : 200, outcome.json, format);
    return;
  }
  writeObject(
    r.res,
    outcome.created ? 201 : 200,
    await servedJsonForAsync(r.server.catalog.customResources, outcome.json, r.apiVersion, format.representation),
    format,
  );
}
