import { int64ForWire, int64ToBigInt, int64ToNumber } from './wire-int64.js';

/**
 * The wire forms of `meta.v1.Time`, `meta.v1.MicroTime` ({seconds, nanos}) and `meta.v1.Duration`
 * ({duration: int64 nanoseconds}) and their JSON strings, following Go's formatting: Time is RFC 3339
 * in UTC with whole seconds, MicroTime has exactly six fractional digits, Duration is Go's
 * `time.Duration.String()` ("1h2m3s", "1.5s", "300ms", "0s").
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:\d{2})$/;

/** The value of the two ASCII digits of TEXT at AT, or -1 when they are not digits. */
function twoDigits(text: string, at: number): number {
  const a = text.charCodeAt(at) - 48;
  const b = text.charCodeAt(at + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * The seconds of TEXT when it has the form every stored time has (`2024-01-02T03:04:05Z`, year 1000
 * or later), without a regular expression; undefined for any other form. Date.UTC rolls over
 * out-of-range fields as the general path's setUTC* calls do.
 */
function wholeSecondsUtc(text: string): number | undefined {
  if (text.length !== 20 || text.charCodeAt(19) !== 90 || text.charCodeAt(10) !== 84) return undefined;
  if (text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return undefined;
  const c = twoDigits(text, 0);
  const y = twoDigits(text, 2);
  const mo = twoDigits(text, 5);
  const d = twoDigits(text, 8);
  const h = twoDigits(text, 11);
  const mi = twoDigits(text, 14);
  const sec = twoDigits(text, 17);
  if (c < 10 || y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || sec < 0) return undefined;
  return Math.floor(Date.UTC(c * 100 + y, mo - 1, d, h, mi, sec) / 1000);
}

/** {seconds, nanos} of an RFC 3339 timestamp, or undefined when TEXT is not one. */
export function parseTimestamp(text: string): { seconds: number | string; nanos: number } | undefined {
  const fast = wholeSecondsUtc(text);
  if (fast !== undefined) return { seconds: fast, nanos: 0 };
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), 0);
  let seconds = Math.floor(date.getTime() / 1000);
  if (Number.isNaN(seconds)) return undefined;
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    seconds -= sign * (Number(zone.slice(1, 3)) * 3600 + Number(zone.slice(4, 6)) * 60);
  }
  const nanos = frac === undefined ? 0 : Number(frac.padEnd(9, '0'));
  return { seconds: int64ForWire(seconds), nanos };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/**
 * The JSON string of a wire timestamp; undefined for the zero time, which Go writes as `null` and kube's
 * JSON objects therefore omit. FRACTION_DIGITS is 0 for Time, 6 for MicroTime.
 */
export function formatTimestamp(secondsValue: unknown, nanosValue: unknown, fractionDigits: 0 | 6): string | undefined {
  const seconds = int64ToNumber(secondsValue);
  const nanos = typeof nanosValue === 'number' ? nanosValue : 0;
  if (seconds === 0 && nanos === 0) return undefined;
  const date = new Date(seconds * 1000);
  if (Number.isNaN(date.getTime())) return undefined;
  const base =
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
    `T${pad(date.getUTCHours(), 2)}:${pad(date.getUTCMinutes(), 2)}:${pad(date.getUTCSeconds(), 2)}`;
  if (fractionDigits === 0) return `${base}Z`;
  return `${base}.${pad(Math.floor(nanos / 1000), 6)}Z`;
}

const NS = 1n;
const US = 1000n;
const MS = 1000_000n;
const SEC = 1000_000_000n;

/** Go's `fmtFrac`: the integer part of V / 10^PREC and its fraction without trailing zeros. */
function fracParts(v: bigint, prec: number): { int: bigint; frac: string } {
  const scale = 10n ** BigInt(prec);
  const int = v / scale;
  const frac = (v % scale).toString().padStart(prec, '0').replace(/0+$/, '');
  return { int, frac };
}

/** Go's `time.Duration.String()` of a wire duration in nanoseconds. */
export function formatDuration(value: unknown): string {
  let ns = int64ToBigInt(value);
  const neg = ns < 0n;
  if (neg) ns = -ns;
  let out: string;
  if (ns < SEC) {
    if (ns === 0n) return '0s';
    if (ns < US) out = `${ns}ns`;
    else {
      const { int, frac } = fracParts(ns, ns < MS ? 3 : 6);
      out = `${int}${frac ? `.${frac}` : ''}${ns < MS ? 'µs' : 'ms'}`;
    }
  } else {
    const { int: secs, frac } = fracParts(ns, 9);
    out = `${secs % 60n}${frac ? `.${frac}` : ''}s`;
    const mins = secs / 60n;
    if (mins > 0n) {
      out = `${mins % 60n}m${out}`;
      const hours = mins / 60n;
      if (hours > 0n) out = `${hours}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}

const UNITS: Record<string, bigint> = {
  ns: NS,
  us: US,
  µs: US,
  μs: US,
  ms: MS,
  s: SEC,
  m: 60n * SEC,
  h: 3600n * SEC,
};

/** Nanoseconds of a Go duration string ("1h2m3.5s", "-300ms", "0"), or undefined when malformed. */
export function parseDuration(text: string): bigint | undefined {
  let s = text;
  let neg = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    neg = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return undefined;
  const part = /^(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/;
  let total = 0n;
  while (s !== '') {
    const m = part.exec(s);
    if (!m || (m[1] === '' && (m[2] ?? '') === '')) return undefined;
    const unit = UNITS[m[3] ?? ''];
    if (unit === undefined) return undefined;
    const whole = BigInt(m[1] === '' ? '0' : (m[1] ?? '0'));
    const fracText = m[2] ?? '';
    const frac = fracText === '' ? 0n : (BigInt(fracText) * unit) / 10n ** BigInt(fracText.length);
    total += whole * unit + frac;
    s = s.slice(m[0].length);
  }
  return neg ? -total : total;
}

/** The wire value (`Duration.duration`) for a JSON duration string, or undefined when malformed. */
export function durationForWire(text: string): number | string | undefined {
  const ns = parseDuration(text);
  return ns === undefined ? undefined : int64ForWire(ns);
}
