import { badRequest, invalid, methodNotAllowed, type StatusCause } from '../api/errors.js';
import { dryRunCauses, listOptionsFrom, queryInt64, queryOptionalBool } from '../api/request-options.js';
import { BODY_MEDIA_TYPES, CBOR_MEDIA_TYPE, decodeBody, readBody } from '../codec/request-body.js';
import { decodeInto, TypedDecodeError } from '../codec/typed-decode.js';
import { schemaForDefinition } from '../schema/openapi-schema.js';
import { writeList, writeObject } from '../codec/response-writer.js';
import { returnsDeletedObject } from '../strategy/resource-strategy.js';
import { type ResourceRequest, outputFor, scaleKind } from './context.js';
import { isObject, metadataOf, type Obj } from '../api/object-util.js';
import { servedJsonForAsync, servedJsonsFor } from '../conversion/converting-io.js';
import { selectionFor } from '../rest/selection.js';
import { authorizeUnsafeDelete } from '../auth/unsafe-delete-authorization.js';
import { deleteCorruptObject, unsafeDeleteCollectionRefused } from '../rest/unsafe-delete.js';
import { deleteOptionsOf, type DeleteOptions, type DeleteOutcome } from '../rest/delete.js';
import type { CollectionDeleter, GracefulDeleter } from '../rest/rest-verbs.js';
import { conversionAwareSelection } from '../rest/converted-selection.js';

const PROPAGATION_POLICIES = ['Foreground', 'Background', 'Orphan'];
const DELETE_OPTIONS_DEFINITION = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';

/** DeleteOptions from a request body: decoded into the type (400 for type errors, as kube's decoder says). */
function bodyDeleteOptions(r: ResourceRequest, body: Buffer): Obj {
  const accepted = r.server.featureGates.CBORServingAndStorage === true ? [...BODY_MEDIA_TYPES, CBOR_MEDIA_TYPE] : BODY_MEDIA_TYPES;
  const decoded = decodeBody(r.req.headers['content-type'], body, 'DeleteOptions', accepted, 'meta.k8s.io/v1', r.server.limits);
  const value = decoded.value;
  if (!isObject(value)) {
    throw badRequest(
      "the object provided is unrecognized (must be of type DeleteOptions): couldn't get version/kind; json parse error: json: cannot unmarshal " +
        `${Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value === 'boolean' ? 'bool' : typeof value} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  if (value.kind !== undefined && value.kind !== 'DeleteOptions') {
    throw badRequest(
      `${JSON.stringify(value.kind)?.replace(/^"|"$/g, '') ?? ''} in version "v1" cannot be handled as a DeleteOptions: no kind "${JSON.stringify(value.kind)?.replace(/^"|"$/g, '') ?? ''}" is registered for version "meta.k8s.io/v1"`,
    );
  }
  const schema = schemaForDefinition(DELETE_OPTIONS_DEFINITION);
  if (schema !== undefined) {
    try {
      decodeInto(value, schema, decoded.numberLiteral);
    } catch (err) {
      if (err instanceof TypedDecodeError) throw badRequest(err.message);
      throw err;
    }
  }
  return value;
}

/** DeleteOptions from the query (used only when the request has no body, as kube reads them). */
function queryDeleteOptions(query: URLSearchParams): Obj {
  const out: Obj = {};
  const grace = queryInt64(query, 'gracePeriodSeconds');
  if (grace !== undefined) out.gracePeriodSeconds = grace;
  const orphan = queryOptionalBool(query, 'orphanDependents');
  if (orphan !== undefined) out.orphanDependents = orphan;
  const policy = query.get('propagationPolicy');
  if (policy !== null) out.propagationPolicy = policy;
  const dryRun = query.getAll('dryRun');
  if (dryRun.length > 0) out.dryRun = dryRun;
  const ignore = queryOptionalBool(query, 'ignoreStoreReadErrorWithClusterBreakingPotential');
  if (ignore !== undefined) out.ignoreStoreReadErrorWithClusterBreakingPotential = ignore;
  return out;
}

/** kube's DeleteOptions validation: 422 on DeleteOptions.meta.k8s.io with one cause per problem. */
function validateDeleteOptions(o: Obj): void {
  const causes: StatusCause[] = [];
  const policy = typeof o.propagationPolicy === 'string' ? o.propagationPolicy : undefined;
  if (o.orphanDependents !== undefined && o.orphanDependents !== null && policy !== undefined) {
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${JSON.stringify(policy)}: orphanDependents and deletionPropagation cannot be both set`,
      field: 'propagationPolicy',
    });
  }
  if (policy !== undefined && !PROPAGATION_POLICIES.includes(policy)) {
    causes.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan", "nil"`,
      field: 'propagationPolicy',
    });
  }
  const dryRun = Array.isArray(o.dryRun) ? o.dryRun.filter((v): v is string => typeof v === 'string') : [];
  causes.push(...dryRunCauses(dryRun));
  if (o.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    const field = 'ignoreStoreReadErrorWithClusterBreakingPotential';
    const clash = (detail: string): void => {
      causes.push({ reason: 'FieldValueInvalid', message: `Invalid value: true: cannot be set together with .${detail}`, field });
    };
    if (dryRun.length > 0) clash('dryRun');
    if (policy !== undefined) clash('propagationPolicy');
    if (o.orphanDependents !== undefined && o.orphanDependents !== null) clash('orphanDependents');
    if (o.gracePeriodSeconds !== undefined && o.gracePeriodSeconds !== null) clash('gracePeriodSeconds');
    if (o.preconditions !== undefined && o.preconditions !== null) clash('preconditions');
  }
  if (causes.length > 0) throw invalid('DeleteOptions', 'meta.k8s.io', '', causes);
}

/**
 * Reads DeleteOptions as kube-apiserver does: from the body when there is one (JSON, YAML or protobuf),
 * otherwise from the query; then validates them (422).
 */
async function readDeleteOptions(r: ResourceRequest): Promise<DeleteOptions> {
  const body = await readBody(r.req, r.server.limits.maxRequestBodyBytes);
  const opts = body.length > 0 ? bodyDeleteOptions(r, body) : queryDeleteOptions(r.query);
  // As kube: without the gate the option does not exist (not validated, not acted on).
  if (r.server.featureGates.AllowUnsafeMalformedObjectDeletion !== true) delete opts.ignoreStoreReadErrorWithClusterBreakingPotential;
  validateDeleteOptions(opts);
  return deleteOptionsOf(opts);
}

function successStatus(r: ResourceRequest, obj: Obj): Obj {
  const meta = metadataOf(obj);
  const details: Obj = { name: meta.name, kind: r.info.resource, uid: meta.uid };
  if (r.info.group) details.group = r.info.group;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

/** DELETE of one object. */
export async function handleDelete(r: ResourceRequest, store: GracefulDeleter): Promise<void> {
  if (r.ri.subresource !== '') throw methodNotAllowed();
  const format = outputFor(r, 'object', ...scaleKind(r));
  const opts = await readDeleteOptions(r);
  let outcome: DeleteOutcome;
  if (opts.ignoreStoreReadErrorWithClusterBreakingPotential === true) {
    await authorizeUnsafeDelete(r.server.authorizer, r.user, r.ri);
    const forced = await deleteCorruptObject(r, r.ri.name, () => store.delete(r.ri.name, opts));
    if (forced.status !== undefined) return writeObject(r.res, 200, forced.status, { ...format, representation: 'object' });
    outcome = forced.outcome;
  } else {
    outcome = await store.delete(r.ri.name, opts);
  }
  if (outcome.removed && !returnsDeletedObject(r.info)) {
    writeObject(r.res, 200, successStatus(r, JSON.parse(outcome.json) as Obj), { ...format, representation: 'object' });
    return;
  }
  writeObject(r.res, 200, await servedJsonForAsync(r.server.catalog.customResources, outcome.json, r.apiVersion, format.representation), format);
}

/** DELETE of a collection: deletes every selected object, answering the list of what was deleted. */
export async function handleDeleteCollection(r: ResourceRequest, store: CollectionDeleter): Promise<void> {
  if (r.ri.subresource !== '') throw methodNotAllowed();
  const format = outputFor(r, 'list');
  const listOpts = listOptionsFrom(r.query, false, r.server.featureGates.WatchList);
  const opts = await readDeleteOptions(r);
  if (opts.ignoreStoreReadErrorWithClusterBreakingPotential === true) throw unsafeDeleteCollectionRefused();
  const outcome = await store.deleteCollection(
    conversionAwareSelection(r.server.catalog.customResources, r, r.apiVersion, listOpts, selectionFor(r, listOpts)),
    opts,
  );
  const deleted = await servedJsonsFor(r.server.catalog.customResources, outcome.deleted, r.apiVersion, format.representation);
  const envelope = {
    kind: `${r.info.kind}List`,
    apiVersion: r.apiVersion,
    metadata: { resourceVersion: outcome.resourceVersion },
    typedItems: r.info.custom === true,
  };
  await writeList(r.res, envelope, deleted, format);
}
