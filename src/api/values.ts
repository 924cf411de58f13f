/**
 * The accessors over decoded JSON values (request bodies, stored objects, configuration files). Every
 * module reads untyped values through these instead of its own copies, so one name means one rule:
 *
 * - `isObject(v)`: the type guard for a plain JSON object (not null, not an array).
 * - `asString(v)`, `asNumber(v)`, `asBoolean(v)`, `asObject(v)`, `asArray(v)`: the value itself when
 *   it has that JSON type, else the empty value ('', 0, false, a new {}, a new []), which is how
 *   kube's Go structs read an absent or mistyped field after decoding.
 * - `stringOrUndefined(v)`, `numberOrUndefined(v)`, `booleanOrUndefined(v)`, `objectOrUndefined(v)`:
 *   the same, but undefined instead of the empty value (a nil pointer in Go).
 * - `stringField(o, key)`, `numberField`, `booleanField`, `objectField`, `arrayField`: the coercions
 *   of `o[key]`, where a non-object `o` reads as an object without fields; `...FieldOrUndefined` the
 *   same with undefined.
 *
 * - `stringElements(v)`, `objectElements(v)`: the elements of an array that have that type.
 *
 * None of them throws, copies a present value or looks at anything but the JSON type: numbers are
 * returned as they are (NaN included), and arrays are never objects.
 */

/** A JSON object held as a plain record; the one object type of the code base. */
export type Obj = Record<string, unknown>;

/** Whether `value` is a plain object: not null and not an array. */
export function isObject(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `v` when it is a string, else ''. */
export function asString(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** `v` when it is a number, else 0. */
export function asNumber(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}

/** `v` when it is a boolean, else false. */
export function asBoolean(v: unknown): boolean {
  return typeof v === 'boolean' ? v : false;
}

/** `v` when it is an object (see `isObject`), else a new empty object. */
export function asObject(v: unknown): Obj {
  return isObject(v) ? v : {};
}

/** `v` when it is an array, else a new empty array. */
export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** `v` when it is a string, else undefined. */
export function stringOrUndefined(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** `v` when it is a number, else undefined. */
export function numberOrUndefined(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}

/** `v` when it is a boolean, else undefined. */
export function booleanOrUndefined(v: unknown): boolean | undefined {
  return typeof v === 'boolean' ? v : undefined;
}

/** `v` when it is an object (see `isObject`), else undefined. */
export function objectOrUndefined(v: unknown): Obj | undefined {
  return isObject(v) ? v : undefined;
}

/** `o[key]` when `o` is an object and the field a string, else ''. */
export function stringField(o: unknown, key: string): string {
  return isObject(o) ? asString(o[key]) : '';
}

/** `o[key]` when `o` is an object and the field a number, else 0. */
export function numberField(o: unknown, key: string): number {
  return isObject(o) ? asNumber(o[key]) : 0;
}

/** `o[key]` when `o` is an object and the field a boolean, else false. */
export function booleanField(o: unknown, key: string): boolean {
  return isObject(o) && o[key] === true;
}

/** `o[key]` when `o` is an object and the field an object, else a new empty object. */
export function objectField(o: unknown, key: string): Obj {
  return isObject(o) ? asObject(o[key]) : {};
}

/** `o[key]` when `o` is an object and the field an array, else a new empty array. */
export function arrayField(o: unknown, key: string): unknown[] {
  return isObject(o) ? asArray(o[key]) : [];
}

/** `o[key]` when `o` is an object and the field a string, else undefined. */
export function stringFieldOrUndefined(o: unknown, key: string): string | undefined {
  return isObject(o) ? stringOrUndefined(o[key]) : undefined;
}

/** `o[key]` when `o` is an object and the field a boolean, else undefined. */
export function booleanFieldOrUndefined(o: unknown, key: string): boolean | undefined {
  return isObject(o) ? booleanOrUndefined(o[key]) : undefined;
}

/** `o[key]` when `o` is an object and the field an object, else undefined. */
export function objectFieldOrUndefined(o: unknown, key: string): Obj | undefined {
  return isObject(o) ? objectOrUndefined(o[key]) : undefined;
}

/** The string elements of `v` in order, others dropped; empty when `v` is not an array. */
export function stringElements(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((e): e is string => typeof e === 'string') : [];
}

/** The object elements of `v` in order (see `isObject`), others dropped; empty when `v` is not an array. */
export function objectElements(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isObject) : [];
}
