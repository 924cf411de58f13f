import type { Obj } from '../api/object-util.js';
/**
 * Read-only accessors for validating decoded JSON: each returns the value when it has the expected
 * JSON type and the Go zero value otherwise (an absent string is "", an absent list is empty), so
 * validators read objects the way kube's Go structs present them after decoding.
 */

export type { Obj } from '../api/object-util.js';

/** The object at `v`, or undefined when `v` is absent or not an object (a nil pointer in Go). */
export function objOrUndefined(v: unknown): Obj | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

/** The object at `v`, or an empty one. */
export function obj(v: unknown): Obj {
  return objOrUndefined(v) ?? {};
}

/** The list at `v`, or an empty one. */
export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** The objects of the list at `v` (non-objects read as empty objects, as Go's zero structs). */
export function objects(v: unknown): Obj[] {
  return list(v).map(obj);
}

/** The string at `v`, or "". */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The number at `v`, or 0. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

/** The number at `v`, or undefined when absent (a nil *int in Go). */
export function numOrUndefined(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/** The string-valued entries of a map, keys sorted (Go's map order is random; sorted is stable). */
export function stringEntries(v: unknown): Array<[string, string]> {
  return Object.entries(obj(v))
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A string map with sorted keys, as Go's json.Marshal writes it (null when absent). */
export function sortedStringMap(v: unknown): Record<string, string> | null {
  const o = objOrUndefined(v);
  return o === undefined ? null : Object.fromEntries(stringEntries(o));
}

/** Whether the value is present (not undefined and not null). */
export function isSet(v: unknown): boolean {
  return v !== undefined && v !== null;
}
