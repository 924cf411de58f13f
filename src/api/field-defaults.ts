import { isObject, type Obj } from './object-util.js';

/**
 * The small steps every defaulting function is made of, named after the Go zero value they look
 * for: a field is "unset" when absent or null (Go's nil pointer), and a string or number default
 * also replaces Go's zero value ("" or 0).
 */

/** The object at `parent[key]`, or undefined when it is absent or not an object. */
export function objectAt(parent: Obj, key: string): Obj | undefined {
  const v = parent[key];
  return isObject(v) ? v : undefined;
}

/** The objects of the list at `parent[key]` (none when absent). */
export function objectsAt(parent: Obj | undefined, key: string): Obj[] {
  const v = parent?.[key];
  return Array.isArray(v) ? v.filter(isObject) : [];
}

/** Absent or null: a Go nil pointer. */
export function unset(v: unknown): boolean {
  return v === undefined || v === null;
}

/** Unset or "": a Go string's zero value. */
export function unsetOrEmpty(v: unknown): boolean {
  return unset(v) || v === '';
}

/** A Go string's zero value ("" or absent) gets `value`. */
export function defaultString(obj: Obj, key: string, value: string): void {
  if (unsetOrEmpty(obj[key])) obj[key] = value;
}

/** A Go pointer (absent or null) gets `value`. */
export function defaultPointer(obj: Obj, key: string, value: unknown): void {
  if (unset(obj[key])) obj[key] = value;
}

/** A Go integer's zero value (0 or absent) gets `value`. */
export function defaultNumber(obj: Obj, key: string, value: number): void {
  if (unset(obj[key]) || obj[key] === 0) obj[key] = value;
}
