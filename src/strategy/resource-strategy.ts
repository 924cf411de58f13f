import type { ResourceInfo } from '../api/resource-info.js';
import { cloneJson } from '../codec/json-value.js';
import { isObject, jsonEqual, metadataOf, type Obj } from '../api/object-util.js';
import { applyDefaults, strategyFor } from './strategies.js';
import { shapeStoredObject } from '../codec/go-shape.js';
import type { User } from '../api/user.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';

export { applyDefaults };

/**
 * The generic part of every write's strategy, after kube-apiserver's registry store: what create and
 * update reset, keep and bump for any kind, with each kind's own facts taken from its strategy
 * (src/strategy/kinds/, see KindStrategy for the contract).
 */

export function hasStatusSubresource(info: ResourceInfo): boolean {
  return 'status' in info.subresources;
}

export function tracksGeneration(info: ResourceInfo): boolean {
  if (info.custom === true) return true;
  return strategyFor(info).tracksGeneration ?? hasStatusSubresource(info);
}

export function allowsCreateOnUpdate(info: ResourceInfo): boolean {
  return strategyFor(info).createOnUpdate === true;
}

export function returnsDeletedObject(info: ResourceInfo): boolean {
  return info.custom === true || strategyFor(info).returnsDeletedObject === true;
}

/**
 * Everything but metadata and status: a change here bumps generation. A custom resource without a
 * status subresource counts its status too, as kube's custom resource strategy does.
 */
function specPart(obj: Obj, withStatus = false): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(obj)) if (k !== 'metadata' && (withStatus || k !== 'status') && k !== 'kind' && k !== 'apiVersion') out[k] = v;
  return out;
}

/**
 * Resets what a create may not set, as each type's PrepareForCreate does: after the defaults (applied
 * when the body is decoded) and after mutating admission, as in kube's create path.
 */
export function prepareForCreate(info: ResourceInfo, obj: Obj): string[] {
  const strategy = strategyFor(info);
  const meta = metadataOf(obj);
  if (tracksGeneration(info)) meta.generation = 1;
  else delete meta.generation;
  if (hasStatusSubresource(info) && strategy.createStatus !== 'keep') {
    if (strategy.createStatus !== undefined) obj.status = strategy.createStatus(obj);
    else delete obj.status;
  }
  return strategy.prepareForCreate?.(obj) ?? [];
}

/** Records the creating user in the object where the kind's PrepareForCreate does (a CSR's spec.username, uid, groups, extra). */
export function recordRequester(info: ResourceInfo, obj: Obj, user: User): void {
  strategyFor(info).recordRequester?.(obj, user);
}

/** The warnings kube's strategy gives for a validated write of `obj` (`old` undefined on create). */
export function writeWarnings(info: ResourceInfo, subresource: string, obj: Obj, old: Obj | undefined): string[] {
  const strategy = strategyFor(info);
  if (subresource === 'status') return old === undefined ? [] : (strategy.statusWarnings?.(obj) ?? []);
  if (subresource !== '' && subresource !== 'scale') return [];
  return strategy.warnings?.(obj, old) ?? [];
}

/**
 * Prepares a write to the main resource: keeps the stored status where the type has a status
 * subresource, and bumps generation when anything outside metadata and status changed. Defaults
 * come from the kind's strategy (a custom resource's from its schema in `facts`).
 */
export function prepareForUpdate(info: ResourceInfo, next: Obj, old: Obj, facts: CustomResourceFacts): void {
  const strategy = strategyFor(info);
  applyDefaults(info, next, facts);
  // Compared with the stored object below, which has Go's shape (empty structs written): a body
  // without them is no change of the spec.
  shapeStoredObject(next, info);
  if (hasStatusSubresource(info)) {
    if (old.status === undefined) delete next.status;
    else next.status = old.status;
  }
  strategy.prepareForUpdate?.(next, old);
  const meta = metadataOf(next);
  const oldMeta = metadataOf(old);
  if (tracksGeneration(info)) {
    const oldGen = typeof oldMeta.generation === 'number' ? oldMeta.generation : 1;
    const labelsChanged = strategy.labelsCountAsSpec === true && !jsonEqual(meta.labels, oldMeta.labels);
    const withStatus = info.custom === true && !hasStatusSubresource(info);
    meta.generation = jsonEqual(specPart(next, withStatus), specPart(old, withStatus)) && !labelsChanged ? oldGen : oldGen + 1;
  } else if (oldMeta.generation !== undefined) meta.generation = oldMeta.generation;
  else delete meta.generation;
}

/** The error kube's conversion of a decoded body of the kind gives (see KindStrategy.decodeConversion), after normalizing `obj` in place. */
export function decodeConversionProblem(info: ResourceInfo, obj: Obj): string | undefined {
  return strategyFor(info).decodeConversion?.(obj);
}

/**
 * Prepares a write to the status subresource: the result is the stored object with only the new
 * status (and, for the kinds whose kube status strategy resets only the spec, such as nodes,
 * namespaces, workloads, Services, Ingresses, PVs and PVCs, the whole metadata but its system fields;
 * Deployments keep their labels, pods their owner references) taken from the request. `next` is the
 * request's own object, sharing nothing with `old`; the result may share parts of it, never of `old`.
 */
export function prepareForStatusUpdate(info: ResourceInfo, next: Obj, old: Obj): Obj {
  const nextMeta = metadataOf(next);
  const strategy = strategyFor(info);
  const statusUpdatesMetadata = strategy.statusUpdatesMetadata;
  const result = storedWithStatusOf(next, old, statusUpdatesMetadata !== undefined);
  if (statusUpdatesMetadata !== undefined) {
    result.metadata = requestMetadataWithSystemFields(nextMeta, metadataOf(old));
    const kept = statusUpdatesMetadata === 'all-but-labels' ? 'labels' : statusUpdatesMetadata === 'all-but-owner-references' ? 'ownerReferences' : undefined;
    if (kept !== undefined) {
      const stored = metadataOf(old)[kept];
      if (stored === undefined) delete metadataOf(result)[kept];
      else metadataOf(result)[kept] = stored;
    }
  }
  const meta = metadataOf(result);
  meta.resourceVersion = nextMeta.resourceVersion;
  strategy.canonicalizeStatusWrite?.(result);
  return result;
}

/**
 * `old` with the status of `next`, in `old`'s key order, sharing nothing with `old`: a field other
 * than status that `next` holds unchanged (same JSON, same key order, as a status write built on a
 * copy of the stored object does) is taken from `next`, which the request owns, instead of being
 * cloned from `old`. With `requestMetadata` the metadata is left as a placeholder (null, in its
 * place) for the caller, which takes it from the request.
 */
function storedWithStatusOf(next: Obj, old: Obj, requestMetadata: boolean): Obj {
  const result: Obj = {};
  for (const key of Object.keys(old)) {
    if (key === 'status') {
      if (next.status !== undefined) result.status = next.status;
      continue;
    }
    if (key === 'metadata' && requestMetadata) {
      result.metadata = null;
      continue;
    }
    const value = old[key];
    const mine = next[key];
    if (typeof value !== 'object' || value === null) result[key] = value;
    else if (mine !== value && sameJsonTree(mine, value)) result[key] = mine;
    else result[key] = cloneJson(value);
  }
  // A status the stored object lacks goes last, where an assignment to the clone put it.
  if (next.status !== undefined && !Object.prototype.hasOwnProperty.call(old, 'status')) result.status = next.status;
  return result;
}

/** Whether `a` and `b` are the same JSON value written the same way: equal scalars, and keys in the same order. */
function sameJsonTree(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJsonTree(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ak = Object.keys(a);
  const bk = Object.keys(b);
  if (ak.length !== bk.length) return false;
  for (let i = 0; i < ak.length; i++) {
    const k = ak[i];
    if (k !== bk[i] || !sameJsonTree((a as Obj)[k], (b as Obj)[k])) return false;
  }
  return true;
}

/**
 * The request's metadata with the fields a client never sets (identity, creation, deletion,
 * generation) taken from the stored object: a new top level, sharing the rest with the request's.
 */
function requestMetadataWithSystemFields(nextMeta: Obj, oldMeta: Obj): Obj {
  const meta: Obj = { ...nextMeta };
  for (const field of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation']) {
    if (oldMeta[field] === undefined) delete meta[field];
    else meta[field] = oldMeta[field];
  }
  delete meta.selfLink;
  return meta;
}

/** Prepares a `namespaces/NAME/finalize` write: only `spec.finalizers` changes. */
export function prepareForFinalize(next: Obj, old: Obj): Obj {
  const result: Obj = structuredClone(old);
  const spec = isObject(result.spec) ? result.spec : {};
  const nextSpec = isObject(next.spec) ? next.spec : {};
  // Go drops an empty finalizers list (omitempty), so [] reads back as absent.
  if (nextSpec.finalizers === undefined || nextSpec.finalizers === null || (Array.isArray(nextSpec.finalizers) && nextSpec.finalizers.length === 0))
    delete spec.finalizers;
  else spec.finalizers = nextSpec.finalizers;
  result.spec = spec;
  metadataOf(result).resourceVersion = metadataOf(next).resourceVersion;
  return result;
}
