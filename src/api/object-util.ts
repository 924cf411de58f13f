/** Small helpers over API objects held as plain JSON values; the accessors are in `values.ts`. */
import { isObject, type Obj } from './values.js';

// Re-exported because most modules import the object type and these two with the helpers below.
export { isObject, stringField, type Obj } from './values.js';

/** The object's metadata, created empty when missing or not an object. */
export function metadataOf(obj: Obj): Obj {
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as Obj;
}

/** Storage key of an object: `namespace/name` or `name`. */
export function objectKey(namespace: string, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

/** The fields of ObjectMeta in kube-apiserver's order, so stored and served objects read as kube's do. */
export const METADATA_ORDER: readonly string[] = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

/**
 * Returns the object with `kind`, `apiVersion`, `metadata` first and metadata fields in kube's order.
 * Stored JSON therefore always starts with `{"kind":...,"apiVersion":...,`, which lets the server
 * rewrite `apiVersion` for another served version without parsing.
 */
export function canonicalize(obj: Obj, kind: string, apiVersion: string): Obj {
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const orderedMeta: Obj = {};
  for (const k of METADATA_ORDER) {
    // resourceVersion always has its slot, so storage fills the version in kube's position.
    if (k === 'resourceVersion') orderedMeta[k] = meta[k] ?? '';
    else if (meta[k] !== undefined) orderedMeta[k] = meta[k];
  }
  for (const [k, v] of Object.entries(meta)) if (!(k in orderedMeta) && v !== undefined) orderedMeta[k] = v;
  const out: Obj = { kind, apiVersion, metadata: orderedMeta };
  for (const [k, v] of Object.entries(obj)) if (k !== 'kind' && k !== 'apiVersion' && k !== 'metadata') out[k] = v;
  return out;
}

/**
 * Relabels stored JSON with another `apiVersion` by replacing the leading `"apiVersion"` (see
 * `canonicalize`), without parsing. Fields are not converted: serve objects with
 * `servedJson` (src/conversion), which uses this for kinds whose versions share one schema.
 */
export function withApiVersion(json: string, apiVersion: string): string {
  const m = /^\{"kind":"[^"]*","apiVersion":"([^"]*)"/.exec(json);
  if (!m || m[1] === apiVersion) return json;
  const start = m[0].length - m[1].length - 1;
  return `${json.slice(0, start)}${apiVersion}${json.slice(start + m[1].length)}`;
}

let timestampSecond = Number.NaN;
let timestampText = '';

/** RFC 3339 timestamp with second precision, as kube writes metav1.Time (formatted once per second). */
export function nowTimestamp(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== timestampSecond) {
    timestampSecond = second;
    timestampText = new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  return timestampText;
}

/**
 * A text that is the same for two JSON values exactly when `jsonEqual` holds for them (members in
 * key order, undefined members left out): a key for sets and maps of values compared that way.
 */
export function jsonKey(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (!isObject(v)) return v;
    const sorted: Obj = {};
    for (const k of Object.keys(v).sort()) sorted[k] = v[k];
    return sorted;
  });
}

/** Deep equality of JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  const ao = a as Obj,
    bo = b as Obj;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined),
    bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => jsonEqual(ao[k], bo[k]));
}
