/**
 * kube's canonical `resource.Quantity` string ("1024Mi" prints as "1Gi", "0.5" as "500m",
 * "1000" as "1k"), so capacities and quota cells read as kube-apiserver prints them. Values are
 * exact (BigInt); precision finer than nano is rounded up, as kube does when parsing. Texts are read
 * as Go's ParseQuantity reads them (../quantity-grammar.ts), and any exponent is handled without
 * building a number of that size.
 */
import { exactQuantity, type ExactQuantity, type QuantityFormat } from './quantity-grammar.js';

const DECIMAL_SUFFIX: Record<number, string> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
/** Go caps a binary-suffixed quantity at the largest int64. */
const MAX_BINARY = 2n ** 63n - 1n;

type Format = QuantityFormat;

type Exact = ExactQuantity;

/** The value Go's ParseQuantity gives `text` (trimmed), or undefined where it fails. */
function parse(text: string): { value: Exact; format: Format } | undefined {
  const exact = exactQuantity(text);
  if (exact === undefined) return undefined;
  let value = roundUpToNano(exact.value);
  if (exact.format === 'BinarySI' && abs(value.mantissa) > MAX_BINARY * 10n ** BigInt(Math.max(0, -value.scale))) {
    value = { mantissa: exact.value.mantissa < 0n ? -MAX_BINARY : MAX_BINARY, scale: 0 };
  }
  return { value, format: exact.format };
}

/** Rounds to a multiple of 1n away from zero, as Go's ParseQuantity does (inf.RoundUp on the magnitude). */
function roundUpToNano(v: Exact): Exact {
  if (v.scale >= -9) return v;
  if (v.mantissa === 0n) return { mantissa: 0n, scale: -9 };
  const sign = v.mantissa < 0n ? -1n : 1n;
  const magnitude = abs(v.mantissa);
  // Below 1n (more dropped digits than the mantissa has) it rounds to 1n without a huge power of ten.
  if (-9 - v.scale > magnitude.toString().length) return { mantissa: sign, scale: -9 };
  const div = 10n ** BigInt(-9 - v.scale);
  let q = magnitude / div;
  if (magnitude % div !== 0n) q += 1n;
  return { mantissa: sign * q, scale: -9 };
}

function abs(n: bigint): bigint {
  return n < 0n ? -n : n;
}

/** The integer value when exact, else undefined. */
function asInteger(v: Exact): bigint | undefined {
  if (v.scale >= 0) return v.mantissa * 10n ** BigInt(v.scale);
  const div = 10n ** BigInt(-v.scale);
  return v.mantissa % div === 0n ? v.mantissa / div : undefined;
}

function decimalString(v: Exact, format: Format): string {
  if (v.mantissa === 0n) return '0';
  let { mantissa, scale } = v;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    scale += 1;
  }
  const rem = ((scale % 3) + 3) % 3;
  mantissa *= 10n ** BigInt(rem);
  scale -= rem;
  if (format === 'DecimalExponent') return scale === 0 ? `${mantissa}` : `${mantissa}e${scale}`;
  const suffix = DECIMAL_SUFFIX[scale];
  return suffix === undefined ? `${mantissa}e${scale}` : `${mantissa}${suffix}`;
}

/** The canonical form of a quantity; text that does not parse is returned unchanged. */
export function canonicalQuantity(text: string): string {
  const parsed = parse(text);
  return parsed === undefined ? text : canonicalOf(parsed.value, parsed.format);
}

/**
 * The quantity rounded up to a multiple of 1m (kube's defaulting of resource lists: "1n" is "1m",
 * "1.0001" is "1001m"), in canonical form; text that does not parse is returned unchanged.
 */
export function roundUpToMilli(text: string): string {
  const parsed = parse(text);
  if (parsed === undefined) return text;
  let { mantissa, scale } = parsed.value;
  if (scale < -3) {
    const div = 10n ** BigInt(-3 - scale);
    let q = mantissa / div;
    if (mantissa % div !== 0n && mantissa > 0n) q += 1n;
    mantissa = q;
    scale = -3;
  }
  return canonicalOf({ mantissa, scale }, parsed.format);
}

function canonicalOf(value: Exact, parsedFormat: Format): string {
  let format = parsedFormat;
  let integer: bigint | undefined;
  if (format === 'BinarySI') {
    integer = asInteger(value);
    if (integer === undefined || abs(integer) < 1024n) format = 'DecimalSI';
  }
  if (format !== 'BinarySI' || integer === undefined) return decimalString(value, format);
  if (integer === 0n) return '0';
  let exponent = 0;
  while (integer % 1024n === 0n && exponent < BINARY_SUFFIX.length - 1) {
    integer /= 1024n;
    exponent += 1;
  }
  return `${integer}${BINARY_SUFFIX[exponent] ?? ''}`;
}

/** A quantity-valued field printed canonically; `fallback` when absent. */
export function quantityOf(value: unknown, fallback = ''): string {
  if (typeof value === 'string') return canonicalQuantity(value);
  if (typeof value === 'number' && Number.isFinite(value)) return canonicalQuantity(String(value));
  return fallback;
}

function atScale(v: Exact, scale: number): bigint {
  return v.scale >= scale ? v.mantissa * 10n ** BigInt(v.scale - scale) : v.mantissa / 10n ** BigInt(scale - v.scale);
}

/** The power of ten just above |v| (its number of digits plus its scale); v must not be 0. */
function magnitudeOrder(v: Exact): number {
  return abs(v.mantissa).toString().length + v.scale;
}

/** Compares two quantities by value (-1, 0, 1); undefined when either does not parse. */
export function compareQuantities(a: string, b: string): number | undefined {
  const pa = parse(a);
  const pb = parse(b);
  if (pa === undefined || pb === undefined) return undefined;
  const signA = pa.value.mantissa > 0n ? 1 : pa.value.mantissa < 0n ? -1 : 0;
  const signB = pb.value.mantissa > 0n ? 1 : pb.value.mantissa < 0n ? -1 : 0;
  if (signA !== signB || signA === 0) return Math.sign(signA - signB);
  // Different orders of magnitude decide without scaling (exponents may be near 2^31).
  const orderA = magnitudeOrder(pa.value);
  const orderB = magnitudeOrder(pb.value);
  if (orderA !== orderB) return (orderA > orderB ? 1 : -1) * signA;
  const scale = Math.min(pa.value.scale, pb.value.scale);
  const x = atScale(pa.value, scale);
  const y = atScale(pb.value, scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Whether the quantity is a whole number (its value in milli-units is a multiple of 1000, as kube checks). */
export function isWholeQuantity(text: string): boolean {
  const parsed = parse(text);
  if (parsed === undefined) return false;
  const { mantissa, scale } = parsed.value;
  if (scale >= 0) return true;
  let milli: bigint;
  if (scale >= -3) milli = mantissa * 10n ** BigInt(scale + 3);
  else {
    // Values finer than 1m are rounded up to 1m first, as Quantity.MilliValue does.
    const div = 10n ** BigInt(-3 - scale);
    milli = mantissa / div;
    if (mantissa % div !== 0n && mantissa > 0n) milli += 1n;
  }
  return milli % 1000n === 0n;
}

/**
 * The quantity in milli-units rounded up, as Quantity.MilliValue reports it; undefined when it does
 * not parse. (Go saturates at the int64 range; values that large are not clamped here.)
 */
export function milliValueOf(text: string): bigint | undefined {
  const parsed = parse(text);
  if (parsed === undefined) return undefined;
  const { mantissa, scale } = parsed.value;
  if (scale >= -3) return mantissa * 10n ** BigInt(scale + 3);
  const div = 10n ** BigInt(-3 - scale);
  let milli = mantissa / div;
  if (mantissa % div !== 0n && mantissa > 0n) milli += 1n;
  return milli;
}

/** Quantity.Value(): the amount as a whole number, rounded away from zero; undefined when it does not parse. */
export function quantityIntegerValue(text: string): bigint | undefined {
  const parsed = parse(text);
  if (parsed === undefined) return undefined;
  const { mantissa, scale } = parsed.value;
  if (scale >= 0) return mantissa * 10n ** BigInt(scale);
  const div = 10n ** BigInt(-scale);
  const q = mantissa / div;
  return mantissa % div === 0n ? q : q + (mantissa < 0n ? -1n : 1n);
}
