/**
 * Runtime values: JSON values turned into the evaluator's CEL values by their declared type
 * (integers as bigint, `date-time` strings as timestamps, `duration` strings as durations, `byte`
 * strings as bytes), CEL results turned back into JSON, and the two kinds of values the evaluator
 * has no native representation for: optionals and opaque library values (Quantity, IP, CIDR, URL,
 * Semver, formats, authorizer checks). Both are maps with a hidden marker, so that CEL equality
 * compares them by content (`optional.of(1) == optional.of(1)`, `quantity('1') == quantity('1000m')`).
 */
import { celList, celMap, isCelList, isCelMap, isCelUint, type CelMap, type CelValue } from '@bufbuild/cel';
import { create, isMessage } from '@bufbuild/protobuf';
import { DurationSchema, TimestampSchema, timestampDate, type Duration, type Timestamp } from '@bufbuild/protobuf/wkt';
import { isReflectMessage } from '@bufbuild/protobuf/reflect';
import { escapeFieldName, type CelType } from './types.js';

const OPTIONAL = Symbol('capstan.cel.optional');
const OPAQUE = Symbol('capstan.cel.opaque');

interface OptionalState {
  present: boolean;
  value?: CelValue;
}

type Marked = CelMap & { [OPTIONAL]?: OptionalState; [OPAQUE]?: { type: string; impl: unknown } };

/** An optional holding VALUE, or the empty optional. */
export function optionalValue(value: CelValue | undefined): CelMap {
  const m = celMap(new Map(value === undefined ? [['@optional_none', true]] : [['@optional', value]])) as Marked;
  m[OPTIONAL] = value === undefined ? { present: false } : { present: true, value };
  return m;
}

/** The state of V when it is an optional. */
export function asOptional(v: unknown): OptionalState | undefined {
  return isCelMap(v) ? (v as Marked)[OPTIONAL] : undefined;
}

/** Whether V is an opaque value of any type (a quantity, IP, URL...). */
export function isOpaque(v: unknown): boolean {
  return isCelMap(v) && (v as Marked)[OPAQUE] !== undefined;
}

/** An opaque value of TYPE whose equality is by KEY, carrying IMPL for the library's methods. */
export function opaqueValue(type: string, key: string, impl: unknown): CelMap {
  const m = celMap(new Map([['@' + type, key]])) as Marked;
  m[OPAQUE] = { type, impl };
  return m;
}

/** The implementation behind V when it is an opaque value of TYPE. */
export function asOpaque<T>(v: unknown, type: string): T | undefined {
  if (!isCelMap(v)) return undefined;
  const o = (v as Marked)[OPAQUE];
  return o !== undefined && o.type === type ? (o.impl as T) : undefined;
}

/** Parses a Go duration string (`1h30m`, `-1.5s`, `300ms`); undefined when malformed. */
export function parseGoDuration(s: string): { seconds: bigint; nanos: number } | undefined {
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(s);
  if (m === null) {
    if (s === '0' || s === '+0' || s === '-0') return { seconds: 0n, nanos: 0 };
    return undefined;
  }
  const units: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
  let total = 0n;
  for (const part of s.replace(/^[-+]/, '').matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    const [whole, frac = ''] = part[1].split('.');
    const unit = BigInt(units[part[2]]);
    total += BigInt(whole === '' ? '0' : whole) * unit;
    if (frac !== '') total += (BigInt(frac.padEnd(18, '0').slice(0, 18)) * unit) / 10n ** 18n;
  }
  if (m[1] === '-') total = -total;
  return { seconds: total / 1_000_000_000n, nanos: Number(total % 1_000_000_000n) };
}

/** A timestamp message for an RFC 3339 date-time or date string; undefined when malformed. */
export function parseTimestamp(s: string): Timestamp | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2}))?$/.exec(s);
  if (m === null) return undefined;
  const base = Date.UTC(+m[1], +m[2] - 1, +m[3], +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0));
  if (Number.isNaN(base)) return undefined;
  let offsetMs = 0;
  if (m[8] !== undefined && m[8].toUpperCase() !== 'Z') {
    const sign = m[8][0] === '-' ? -1 : 1;
    offsetMs = sign * (+m[8].slice(1, 3) * 60 + +m[8].slice(4, 6)) * 60000;
  }
  const nanos = m[7] === undefined ? 0 : Number(m[7].slice(1).padEnd(9, '0').slice(0, 9));
  return create(TimestampSchema, { seconds: BigInt((base - offsetMs) / 1000), nanos });
}

/** Lists whose equality ignores order (`x-kubernetes-list-type` set and map). */
export const unorderedLists = new WeakSet<unknown[]>();

/** VALUE (decoded JSON) as the evaluator's input for declared TYPE. */
export function toCelInput(value: unknown, type: CelType | undefined): unknown {
  if (value === null || value === undefined) return null;
  const kind = type?.kind ?? 'dyn';
  if (typeof value === 'number') {
    if (kind === 'double') return value;
    if (kind === 'int' || (kind === 'dyn' && Number.isInteger(value))) return Number.isInteger(value) ? BigInt(value) : value;
    return value;
  }
  if (typeof value === 'string') {
    if (kind === 'timestamp') return parseTimestamp(value) ?? value;
    if (kind === 'duration') {
      const d = parseGoDuration(value);
      return d === undefined ? value : create(DurationSchema, d);
    }
    if (kind === 'bytes') return Uint8Array.from(Buffer.from(value, 'base64'));
    return value;
  }
  if (Array.isArray(value)) {
    const out = value.map((v) => toCelInput(v, type?.kind === 'list' ? type.elem : undefined));
    if (type?.kind === 'list' && type.listType !== undefined) unorderedLists.add(out);
    return out;
  }
  if (typeof value === 'object') {
    const out = new Map<string, unknown>();
    const isObjectType = type?.kind === 'object';
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const key = isObjectType ? escapeFieldName(k) : k;
      if (key === undefined) continue;
      const ft = isObjectType ? type.fields?.get(key) : type?.kind === 'map' ? type.elem : undefined;
      const converted = toCelInput(v, ft);
      if (Array.isArray(converted) && ft?.kind === 'list' && ft.listType !== undefined) unorderedLists.add(converted);
      out.set(key, converted);
    }
    return out;
  }
  return value;
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

/** Go's rendering of a duration (`1h30m0s`, `1.5s`, `0s`). */
export function formatGoDuration(d: Duration): string {
  let total = d.seconds * 1_000_000_000n + BigInt(d.nanos);
  if (total === 0n) return '0s';
  const neg = total < 0n;
  if (neg) total = -total;
  let out: string;
  if (total < 1_000_000_000n) {
    const [unit, div] = total < 1000n ? ['ns', 1n] : total < 1_000_000n ? ['µs', 1000n] : ['ms', 1_000_000n];
    out = `${fraction(total, div)}${unit}`;
  } else {
    const h = total / 3_600_000_000_000n;
    const m = (total / 60_000_000_000n) % 60n;
    const s = total % 60_000_000_000n;
    out = `${h > 0n ? `${h}h` : ''}${h > 0n || m > 0n ? `${m}m` : ''}${fraction(s, 1_000_000_000n)}s`;
  }
  return neg ? `-${out}` : out;
}

function fraction(v: bigint, div: bigint): string {
  const whole = v / div;
  const rest = v % div;
  if (rest === 0n) return String(whole);
  const digits = String(div).length - 1;
  return `${whole}.${String(rest).padStart(digits, '0').replace(/0+$/, '')}`;
}

/** RFC 3339 rendering of a timestamp, as Go's time.Time marshals (nanoseconds trimmed). */
export function formatTimestamp(t: Timestamp): string {
  const d = timestampDate(t);
  const frac = t.nanos === 0 ? '' : `.${String(t.nanos).padStart(9, '0').replace(/0+$/, '')}`;
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${frac}Z`;
}

/** A CEL result as JSON (ints as numbers, lists as arrays, maps as objects, optionals unwrapped). */
export function fromCel(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v === null || typeof v !== 'object') return v;
  if (isCelUint(v)) return Number(v.value);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  const opt = asOptional(v);
  if (opt !== undefined) return opt.present ? fromCel(opt.value) : null;
  if (isCelList(v)) return [...v].map(fromCel);
  if (isCelMap(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, val] of v) out[typeof k === 'object' ? String(k.value) : String(k)] = fromCel(val);
    return out;
  }
  if (isReflectMessage(v)) {
    const msg = v.message;
    if (isMessage(msg, TimestampSchema)) return formatTimestamp(msg);
    if (isMessage(msg, DurationSchema)) return formatGoDuration(msg);
  }
  if (Array.isArray(v)) return v.map(fromCel);
  return v;
}

export { celList, celMap };
