import { apiVersionOf, type ResourceInfo } from '../api/resource-info.js';
import { customResourceType } from './custom-smd-type.js';
import { schemaForDefinition, schemaForKind } from '../schema/openapi-schema.js';
import { shapeStoredObject } from '../codec/go-shape.js';
import { nowTimestamp, type Obj } from '../api/object-util.js';
import { logger, serializeError } from '../logging/logger.js';
import { resetFieldsFor } from './reset-fields.js';
import { DEDUCED, smdTypeOf, type SmdType } from './smd-type.js';
import { updateManagedFields } from './update-managed-fields.js';
import type { VersionViews } from './version-comparison.js';
import { conversionFor, servedObject, toStorageVersion } from '../conversion/version-conversion.js';
import { decodeManagedFields, encodeManagedFields } from './managed-fields.js';
import { parentEntriesAfterScale, scaleEntriesOf, type ReplicasPaths } from './scale-managed-fields.js';
import { SCALE_API_VERSION, SCALE_DEFINITION } from '../api/scale-kind.js';
import type { CustomResourceFacts, CustomSchema } from '../catalog/custom-resource-facts.js';

/** The write being recorded: the served type, its request version and subresource, and the manager. */
export interface TrackedWrite {
  info: ResourceInfo;
  /** The request's `apiVersion`. */
  apiVersion: string;
  subresource: string;
  /** From managerOrUserAgent ('' is recorded as `unknown`). */
  manager: string;
  /** The serving catalogue's custom resource facts (a custom type is typed by its version's schema). */
  facts: CustomResourceFacts;
  /** The other versions' views, when computed beforehand (webhook-version-views.ts); else `versionViewsFor`. */
  versionViews?: VersionViews;
}

const typeCache = new Map<string, { revision: string; type: SmdType }>();

/**
 * The structured-merge-diff type of a served kind, cached per kind: built-ins from the OpenAPI
 * definitions, custom resources from their CRD version's structural schema in `facts`
 * (customResourceType, cached per CRD revision).
 */
export function typeFor(info: ResourceInfo, facts: CustomResourceFacts): SmdType {
  return cachedType(info, info.custom === true ? facts.schemaOf(apiVersionOf(info.group, info.version), info.kind) : undefined);
}

/** typeFor, given a custom type's schema. */
function cachedType(info: ResourceInfo, custom: CustomSchema | undefined): SmdType {
  const key = `${info.group}/${info.version}/${info.kind}/${info.definition}`;
  // One entry per kind: a custom type's entry is replaced when its CRD changes (revision).
  const revision = custom?.cacheKey ?? '';
  const cached = typeCache.get(key);
  if (cached !== undefined && cached.revision === revision) return cached.type;
  let type: SmdType;
  if (info.custom === true) type = customResourceType(custom?.schema);
  else {
    const schema = info.definition !== '' ? schemaForDefinition(info.definition) : schemaForKind(info.group, info.version, info.kind);
    type = schema === undefined ? DEDUCED : smdTypeOf(schema);
  }
  typeCache.set(key, { revision, type });
  return type;
}

/**
 * The other versions of a converting built-in kind (HorizontalPodAutoscaler's autoscaling/v1 and
 * v2), for managers recorded at them: objects converted through the storage version, typed by that
 * version's schema. Undefined for kinds whose versions share one schema (relabelled).
 */
export function versionViewsFor(info: ResourceInfo): VersionViews | undefined {
  const own = apiVersionOf(info.group, info.version);
  const conversion = info.custom === true ? undefined : conversionFor(info.kind, own);
  if (conversion === undefined) return undefined;
  return (apiVersion) => {
    const slash = apiVersion.lastIndexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    if (apiVersion === own || group !== info.group || !conversion.versions.includes(apiVersion)) return undefined;
    const other: ResourceInfo = { ...info, version: apiVersion.slice(slash + 1), definition: '' };
    return {
      // A built-in kind: typed by its OpenAPI definitions, no custom schema.
      type: cachedType(other, undefined),
      convert: (value) => servedObject(toStorageVersion({ ...value, apiVersion: own, kind: info.kind }, info), apiVersion),
    };
  };
}

function record(w: TrackedWrite, live: Obj, next: Obj, sent: unknown): void {
  try {
    recordOrThrow(w, live, next, sent);
  } catch (err) {
    // As kube's UpdateNoErrors: a failure to track never fails the write; the object is stored
    // without managedFields and the failure is logged.
    const meta = next.metadata;
    if (typeof meta === 'object' && meta !== null && !Array.isArray(meta)) delete (meta as Obj).managedFields;
    logger.error('failed to update managedFields', { kind: w.info.kind, apiVersion: w.apiVersion, ...serializeError(err) });
  }
}

function recordOrThrow(w: TrackedWrite, live: Obj, next: Obj, sent: unknown): void {
  updateManagedFields(live, next, {
    manager: w.manager,
    apiVersion: w.apiVersion,
    subresource: w.subresource,
    type: typeFor(w.info, w.facts),
    resetFields: resetFieldsFor(
      { group: w.info.group, resource: w.info.resource, hasStatus: 'status' in w.info.subresources, custom: w.info.custom },
      w.subresource,
    ),
    now: nowTimestamp(),
    sent,
    versionViews: w.versionViews ?? versionViewsFor(w.info),
  });
}

/**
 * The create hook: `obj` (decoded and defaulted, before admission) gets the managedFields kube
 * gives a created object: its manager owns every field it differs from the kind's empty object in,
 * or the request's own managedFields are kept when it sends valid, non-empty ones. `sent` is the
 * `metadata.managedFields` of the request as decoded (`[]` resets, which shaping would hide).
 */
export function trackCreate(w: TrackedWrite, obj: Obj, sent: unknown): void {
  record(w, emptyObjectFor(w.info), obj, sent);
}

/**
 * What kube diffs a created object against: the kind's zero Go object, here the empty object in
 * the stored shape (structs written, lists and maps without omitempty as null).
 */
export function emptyObjectFor(kind: { group: string; version: string; kind: string; custom?: boolean }): Obj {
  const empty: Obj = { metadata: {} };
  shapeStoredObject(empty, kind);
  return empty;
}

/**
 * The update hook (PUT, PATCH, subresources): `next` (the object the request makes, defaulted,
 * before admission) gets its managedFields from `live` (the stored object in the request's
 * version) and what changed between them; `sent` as for trackCreate.
 */
export function trackUpdate(w: TrackedWrite, live: Obj, next: Obj, sent: unknown): void {
  record(w, live, next, sent);
}

let scaleType: SmdType | undefined;

/** The structured-merge-diff type of autoscaling/v1 Scale. */
export function scaleTypeOf(): SmdType {
  scaleType ??= smdTypeOf(schemaForDefinition(SCALE_DEFINITION));
  return scaleType;
}

/**
 * The update hook of the `scale` subresource, as kube records a Scale write: `liveScale` and
 * `nextScale` are the Scale views of the stored object `live` and of `next` (the object the write
 * makes); the write is recorded on the Scale (autoscaling/v1, the parent's replicas owners as its
 * entries) and moved back onto the parent's entries (scale-managed-fields), which become `next`'s.
 * `paths` is where each version of the parent keeps its replicas.
 */
export function trackScaleUpdate(w: TrackedWrite, live: Obj, next: Obj, liveScale: Obj, nextScale: Obj, paths: ReplicasPaths): void {
  try {
    const parentEntries = metaOfObj(live).managedFields;
    const oldScale = structuredClone(liveScale);
    const entries = encodeManagedFields(scaleEntriesOf(parentEntries, paths));
    if (entries !== undefined) metaOfObj(oldScale).managedFields = entries;
    const newScale = structuredClone(nextScale);
    updateManagedFields(oldScale, newScale, {
      manager: w.manager,
      apiVersion: SCALE_API_VERSION,
      subresource: 'scale',
      type: scaleTypeOf(),
      resetFields: undefined,
      now: nowTimestamp(),
      sent: undefined,
    });
    const parent = parentEntriesAfterScale(parentEntries, decodeManagedFields(metaOfObj(newScale).managedFields), w.apiVersion, paths);
    const meta = metaOfObj(next);
    if (parent === undefined) delete meta.managedFields;
    else meta.managedFields = parent;
  } catch (err) {
    delete metaOfObj(next).managedFields;
    logger.error('failed to update managedFields', { kind: w.info.kind, apiVersion: w.apiVersion, ...serializeError(err) });
  }
}

function metaOfObj(o: Obj): Obj {
  if (typeof o.metadata !== 'object' || o.metadata === null || Array.isArray(o.metadata)) o.metadata = {};
  return o.metadata as Obj;
}
