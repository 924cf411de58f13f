import type { ResourceInfo } from '../registry/resource-types.js';
import { schemaForDefinition, schemaForKind } from '../schema/openapi-schema.js';
import { shapeStoredObject } from '../codec/go-shape.js';
import { nowTimestamp, type Obj } from '../api/object-util.js';
import { logger, serializeError } from '../logging/logger.js';
import { resetFieldsFor } from './reset-fields.js';
import { DEDUCED, smdTypeOf, type SmdType } from './smd-type.js';
import { updateManagedFields } from './update-managed-fields.js';

/** The write being recorded: the served type, its request version and subresource, and the manager. */
export interface TrackedWrite {
  info: ResourceInfo;
  /** The request's `apiVersion`. */
  apiVersion: string;
  subresource: string;
  /** From managerOrUserAgent ('' is recorded as `unknown`). */
  manager: string;
}

const typeCache = new Map<string, SmdType>();

/** The structured-merge-diff type of a served kind (deduced for custom resources), cached per kind. */
export function typeFor(info: ResourceInfo): SmdType {
  const key = `${info.group}/${info.version}/${info.kind}/${info.definition}`;
  const cached = typeCache.get(key);
  if (cached !== undefined) return cached;
  const schema =
    info.custom === true ? undefined : info.definition !== '' ? schemaForDefinition(info.definition) : schemaForKind(info.group, info.version, info.kind);
  const type = schema === undefined ? DEDUCED : smdTypeOf(schema);
  typeCache.set(key, type);
  return type;
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
    type: typeFor(w.info),
    resetFields: resetFieldsFor({ group: w.info.group, resource: w.info.resource, hasStatus: 'status' in w.info.subresources }, w.subresource),
    now: nowTimestamp(),
    sent,
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
