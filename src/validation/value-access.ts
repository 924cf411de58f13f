/**
 * Read-only helpers for validating decoded JSON, beyond the shared accessors of src/api/values.ts
 * (asString, asObject, asArray, objectOrUndefined, ...): like those they return the Go zero value for
 * an absent or mistyped value, so validators read objects the way kube's Go structs present them
 * after decoding.
 */
import { asArray, asObject, objectOrUndefined, type Obj } from '../api/values.js';

/** The objects of the list at `v` (non-objects read as empty objects, as Go's zero structs). */
export function objects(v: unknown): Obj[] {
  return asArray(v).map(asObject);
}

/** The string-valued entries of a map, keys sorted (Go's map order is random; sorted is stable). */
export function stringEntries(v: unknown): Array<[string, string]> {
  return Object.entries(asObject(v))
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A string map with sorted keys, as Go's json.Marshal writes it (null when absent). */
export function sortedStringMap(v: unknown): Record<string, string> | null {
  const o = objectOrUndefined(v);
  return o === undefined ? null : Object.fromEntries(stringEntries(o));
}

/** Whether the value is present (not undefined and not null). */
export function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}
