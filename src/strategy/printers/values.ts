/**
 * Printer-specific readers over untyped API objects, beside the shared accessors of
 * src/api/values.ts (stringField, objectField, arrayField, ...): every printer reads fields through
 * these, so a missing or mistyped field prints as its zero value instead of throwing.
 */
import { arrayField, isObject, objectField, type Obj } from '../../api/values.js';

/** Follows `path` through nested objects. */
export function path(value: unknown, ...keys: string[]): Obj {
  let cur: Obj = isObject(value) ? value : {};
  for (const k of keys) cur = objectField(cur, k);
  return cur;
}

/**
 * `obj[key]` when it is a finite number, else `fallback`. Unlike `numberField`, NaN and the
 * infinities read as absent, so a printer never prints them.
 */
export function finiteNumberField(value: unknown, key: string, fallback = 0): number {
  const v = finiteNumberFieldOrUndefined(value, key);
  return v === undefined ? fallback : v;
}

/** `obj[key]` when it is a finite number, else undefined (for optional pointers). */
export function finiteNumberFieldOrUndefined(value: unknown, key: string): number | undefined {
  if (!isObject(value)) return undefined;
  const v = value[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** The object elements of `obj[key]`. */
export function objs(value: unknown, key: string): Obj[] {
  return arrayField(value, key).filter(isObject);
}

/** The string elements of `obj[key]`. */
export function strs(value: unknown, key: string): string[] {
  return arrayField(value, key).filter((v): v is string => typeof v === 'string');
}

/** A string-valued map (labels, selectors, data). */
export function strMap(value: unknown, key: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(objectField(value, key))) if (typeof v === 'string') out[k] = v;
  return out;
}

/** Number of keys of an object-valued field. */
export function keyCount(value: unknown, key: string): number {
  return Object.keys(objectField(value, key)).length;
}

/** An IntOrString (or Quantity) value as kube prints it; undefined when absent. */
export function intOrString(value: unknown, key: string): string | undefined {
  if (!isObject(value)) return undefined;
  const v = value[key];
  if (typeof v === 'number' && Number.isFinite(v)) return String(Math.trunc(v));
  if (typeof v === 'string') return v;
  return undefined;
}
