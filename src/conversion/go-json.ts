/**
 * Reading and writing JSON the way Go's `encoding/json` does for the few places where kube keeps a
 * Go-marshalled value inside a string (the autoscaling/v1 round-trip annotations):
 *
 * - readers match a struct field's key case-insensitively (the last matching key wins), treat `null`
 *   as "not set" and throw `GoDecodeError` on a value of the wrong type, as `json.Unmarshal` fails;
 *   callers that mirror kube ignore the whole value then;
 * - `goMarshal` writes compact JSON with Go's HTML escaping (`<`, `>`, `&`, U+2028, U+2029).
 */
import { canonicalQuantity } from '../api/quantity.js';
import type { Obj } from '../api/object-util.js';

/** A value that `json.Unmarshal` would refuse for the Go type it is read into. */
export class GoDecodeError extends Error {}

/** The value of a struct field in a decoded JSON object: exact or case-insensitive key, last one wins. */
export function goField(obj: Obj, name: string): unknown {
  let found: unknown;
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj)) if (k.toLowerCase() === lower) found = v;
  return found;
}

/** A JSON object (a struct or pointer to one): undefined for absent or null. */
export function goObject(v: unknown): Obj | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw new GoDecodeError('expected an object');
  return v as Obj;
}

/** A JSON array (a slice): undefined for absent or null. */
export function goArray(v: unknown): unknown[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw new GoDecodeError('expected an array');
  return v as unknown[];
}

/** A string: undefined for absent or null. */
export function goString(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new GoDecodeError('expected a string');
  return v;
}

/** An int32: undefined for absent or null. */
export function goInt32(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) throw new GoDecodeError('expected an int32');
  return v;
}

/** An int64 (as far as a JS number holds it): undefined for absent or null. */
export function goInt64(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new GoDecodeError('expected an int64');
  return v;
}

const QUANTITY_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$/;

/** A resource.Quantity (string or bare number) in canonical form: undefined for absent or null. */
export function goQuantity(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v.trim() : undefined;
  if (text === undefined || !QUANTITY_TEXT.test(text)) throw new GoDecodeError('expected a quantity');
  return canonicalQuantity(text);
}

/** A metav1.Time: a string, or null when absent or null (Go's zero time marshals as null). */
export function goTime(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new GoDecodeError('expected a time');
  return v;
}

/** A map[string]string: undefined for absent or null. */
export function goStringMap(v: unknown): Record<string, string> | undefined {
  const obj = goObject(v);
  if (obj === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(obj)) out[k] = goString(value) ?? '';
  return out;
}

/** A metav1.LabelSelector in its wire form (matchLabels, matchExpressions): undefined for absent or null. */
export function goLabelSelector(v: unknown): Obj | undefined {
  const obj = goObject(v);
  if (obj === undefined) return undefined;
  const out: Obj = {};
  const labels = goStringMap(goField(obj, 'matchLabels'));
  if (labels !== undefined && Object.keys(labels).length > 0) out.matchLabels = labels;
  const expressions = goArray(goField(obj, 'matchExpressions'));
  if (expressions !== undefined && expressions.length > 0) {
    out.matchExpressions = expressions.map((e) => {
      const req = goObject(e) ?? {};
      const item: Obj = { key: goString(goField(req, 'key')) ?? '', operator: goString(goField(req, 'operator')) ?? '' };
      const values = goArray(goField(req, 'values'));
      if (values !== undefined && values.length > 0) item.values = values.map((x) => goString(x) ?? '');
      return item;
    });
  }
  return out;
}

/** `json.Marshal` of a JSON value: compact, with Go's escaping of `<`, `>`, `&`, U+2028 and U+2029. */
export function goMarshal(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
