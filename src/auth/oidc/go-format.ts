import { goQuote } from '../../validation/field-errors.js';

/** Go's `%q` of a []string: `["a" "b"]`. */
export function goQuoteList(values: readonly string[]): string {
  return `[${values.map(goQuote).join(' ')}]`;
}

/** Go's time.Time String() in UTC (`2024-05-01 12:00:00 +0000 UTC`, fractions without trailing zeros). */
export function goTime(ms: number): string {
  if (!Number.isFinite(ms)) return '0001-01-01 00:00:00 +0000 UTC';
  const d = new Date(ms);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const fraction = d.getUTCMilliseconds() === 0 ? '' : `.${pad(d.getUTCMilliseconds(), 3).replace(/0+$/, '')}`;
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${fraction} +0000 UTC`;
}

/** encoding/json's name of a JSON value's kind in its type errors (number, string, bool, array, object). */
export function jsonKindOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  if (typeof value === 'string') return 'string';
  return 'object';
}

/** encoding/json's error for `value` decoded into a Go value of `goType` (`json: cannot unmarshal number into Go value of type string`). */
export function goValueTypeError(value: unknown, goType: string): string {
  return `json: cannot unmarshal ${jsonKindOf(value)} into Go value of type ${goType}`;
}
