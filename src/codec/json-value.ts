/**
 * Small helpers over parsed JSON values shared by the patch engines. All of them treat their inputs as
 * immutable and never assign through a key that could reach `Object.prototype` (`__proto__`).
 */
import { isObject } from '../api/values.js';

/** A parsed JSON object. */
export type JsonObject = Record<string, unknown>;

/** Sets an own enumerable property, also for keys such as `__proto__` that plain assignment would not create. */
export function setOwn(obj: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** Own-property membership (never consults the prototype chain). */
export function hasOwn(obj: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/**
 * Nesting the patch engines walk at most. Values deeper than this (only a patch that nests a document
 * into itself again and again can build one) fail with PatchDepthError instead of exhausting the stack.
 */
export const MAX_WALK_DEPTH = 2000;

/** A value too deeply nested for the patch engines to copy or compare. */
export class PatchDepthError extends Error {
  constructor() {
    super(`exceeded max depth of ${MAX_WALK_DEPTH}`);
    this.name = 'PatchDepthError';
  }
}

function cloneAt<T>(v: T, depth: number): T {
  if (Array.isArray(v)) {
    if (depth > MAX_WALK_DEPTH) throw new PatchDepthError();
    return v.map((x: unknown) => cloneAt(x, depth + 1)) as T;
  }
  if (isObject(v)) {
    if (depth > MAX_WALK_DEPTH) throw new PatchDepthError();
    const out: JsonObject = {};
    for (const k of Object.keys(v)) setOwn(out, k, cloneAt(v[k], depth + 1));
    return out as T;
  }
  return v;
}

/** A deep copy of a JSON value; the copy shares nothing with the input. Throws PatchDepthError past MAX_WALK_DEPTH. */
export function cloneJson<T>(v: T): T {
  return cloneAt(v, 1);
}

function equalAt(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (depth > MAX_WALK_DEPTH) throw new PatchDepthError();
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => equalAt(x, b[i], depth + 1));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => hasOwn(b, k) && equalAt(a[k], b[k], depth + 1));
  }
  return false;
}

/** Structural equality of two JSON values (object key order is irrelevant). Throws PatchDepthError past MAX_WALK_DEPTH. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return equalAt(a, b, 1);
}

/** Go's `encoding/json` name for the JSON kind of a value, as used in its unmarshal errors. */
export function goJsonKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'object':
      return 'object';
    case 'string':
      return 'string';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    default:
      return 'unknown';
  }
}

/**
 * The Go dynamic type a value has after kube decodes JSON into `interface{}` (integers keep int64,
 * other numbers are float64). Strategic merge patch compares these types, so it is reproduced here.
 */
export function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'nil';
  if (Array.isArray(v)) return '[]interface {}';
  switch (typeof v) {
    case 'object':
      return 'map[string]interface {}';
    case 'string':
      return 'string';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    case 'boolean':
      return 'bool';
    default:
      return 'unknown';
  }
}

/**
 * A float as Go's `strconv.FormatFloat(n, 'g', -1, bits)` (and `%v`) prints it: the shortest digits
 * that read back as the same float64 (or float32, after rounding to one), in exponent form when the
 * exponent is below -4 or at least 6.
 */
export function goFloat(value: number, bits: 32 | 64 = 64): string {
  const n = bits === 32 ? Math.fround(value) : value;
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  let shortest = n.toExponential();
  if (bits === 32)
    for (let digits = 0; digits < 9; digits++) {
      const candidate = n.toExponential(digits);
      if (Math.fround(Number(candidate)) === n) {
        shortest = candidate;
        break;
      }
    }
  const [mantissa = '', expPart = '0'] = shortest.split('e');
  const exp = Number(expPart);
  if (exp < -4 || exp >= 6) {
    const sign = exp < 0 ? '-' : '+';
    const digits = String(Math.abs(exp)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(Number(shortest));
}

/**
 * Formats a JSON value like Go's `fmt.Sprintf("%v", v)` on the decoded `interface{}` value (maps print
 * as `map[k:v ...]` with sorted keys, slices as `[a b]`, nil as `<nil>`), so error texts match kube's.
 */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  }
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e21 ? String(v) : goFloat(v);
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return '<nil>';
}

/** Like Go's `%s` on an `interface{}`: strings print as-is, other values as `%!s(type=value)`. */
export function goFormatS(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '%!s(<nil>)';
  if (typeof v === 'number' || typeof v === 'boolean') return `%!s(${goTypeName(v)}=${goFormat(v)})`;
  return goFormat(v);
}
