/**
 * Narrowing accessors over untyped API objects: every printer reads fields through these, so a
 * missing or mistyped field prints as its zero value instead of throwing.
 */
import type { Obj } from '../../codec/table-printer.js';

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `obj[key]` when it is an object, else an empty object. */
export function obj(value: unknown, key: string): Obj {
  if (!isObj(value)) return {};
  const v = value[key];
  return isObj(v) ? v : {};
}

/** `obj[key]` when it is an object, else undefined (for optional pointers). */
export function optObj(value: unknown, key: string): Obj | undefined {
  if (!isObj(value)) return undefined;
  const v = value[key];
  return isObj(v) ? v : undefined;
}

/** Follows `path` through nested objects. */
export function path(value: unknown, ...keys: string[]): Obj {
  let cur: Obj = isObj(value) ? value : {};
  for (const k of keys) cur = obj(cur, k);
  return cur;
}

export function str(value: unknown, key: string): string {
  if (!isObj(value)) return '';
  const v = value[key];
  return typeof v === 'string' ? v : '';
}

/** `obj[key]` when it is a string, else undefined (for optional pointers). */
export function optStr(value: unknown, key: string): string | undefined {
  if (!isObj(value)) return undefined;
  const v = value[key];
  return typeof v === 'string' ? v : undefined;
}

export function num(value: unknown, key: string, fallback = 0): number {
  const v = optNum(value, key);
  return v === undefined ? fallback : v;
}

export function optNum(value: unknown, key: string): number | undefined {
  if (!isObj(value)) return undefined;
  const v = value[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function bool(value: unknown, key: string): boolean {
  return optBool(value, key) ?? false;
}

export function optBool(value: unknown, key: string): boolean | undefined {
  if (!isObj(value)) return undefined;
  const v = value[key];
  return typeof v === 'boolean' ? v : undefined;
}

export function arr(value: unknown, key: string): unknown[] {
  if (!isObj(value)) return [];
  const v = value[key];
  return Array.isArray(v) ? v : [];
}

/** The object elements of `obj[key]`. */
export function objs(value: unknown, key: string): Obj[] {
  return arr(value, key).filter(isObj);
}

/** The string elements of `obj[key]`. */
export function strs(value: unknown, key: string): string[] {
  return arr(value, key).filter((v): v is string => typeof v === 'string');
}

/** A string-valued map (labels, selectors, data). */
export function strMap(value: unknown, key: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj(value, key))) if (typeof v === 'string') out[k] = v;
  return out;
}

/** Number of keys of an object-valued field. */
export function keyCount(value: unknown, key: string): number {
  return Object.keys(obj(value, key)).length;
}

/** An IntOrString (or Quantity) value as kube prints it; undefined when absent. */
export function intOrString(value: unknown, key: string): string | undefined {
  if (!isObj(value)) return undefined;
  const v = value[key];
  if (typeof v === 'number' && Number.isFinite(v)) return String(Math.trunc(v));
  if (typeof v === 'string') return v;
  return undefined;
}
