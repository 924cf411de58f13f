/**
 * The text of a `resource.Quantity` as Go's `resource.ParseQuantity` (k8s.io/apimachinery 0.36) reads
 * it: which texts it accepts, with which error it refuses the others, and the parts (sign, digits,
 * suffix base and exponent) the value is made of. Every client built on apimachinery parses a stored
 * quantity with that function, so a text it refuses must never be stored: one such value makes a
 * whole list undecodable for client-go. The pattern in Go's error message admits more than the parser
 * does (`1e`, `1i`, `1.5.5Gi`); this module follows the parser, not the pattern.
 */

/** Go's `ErrFormatWrong`. */
export const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/** Go's `ErrSuffix`. */
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";
/** Go's `ErrNumeric`. */
export const QUANTITY_NUMERIC_ERROR = 'unable to parse numeric part of quantity';

export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

/** A parsed quantity: value = sign * `whole`.`fraction` * base^exponent. */
export interface QuantityParts {
  negative: boolean;
  /** Integer digits without leading zeros ('' for none). */
  whole: string;
  /** Fraction digits as written ('' for none). */
  fraction: string;
  base: 2 | 10;
  /** A 32-bit exponent, wrapped as Go's int32 conversion wraps it. */
  exponent: number;
  format: QuantityFormat;
}

const DECIMAL_SUFFIXES: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const SUFFIX_CHARS = 'eEinumkKMGTP';
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

/** Go's strconv.ParseInt(s, 10, 64), or undefined where it fails. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

/**
 * Parses `text` (already trimmed, as Quantity.UnmarshalJSON trims) as Go's ParseQuantity does; a
 * string is Go's error message.
 */
export function parseQuantityText(text: string): QuantityParts | string {
  if (text === '') return QUANTITY_FORMAT_ERROR;
  let pos = 0;
  const end = text.length;
  let negative = false;
  if (text[0] === '-') {
    negative = true;
    pos++;
  } else if (text[0] === '+') pos++;
  while (pos < end && text[pos] === '0') pos++;
  const numStart = pos;
  while (pos < end && isDigit(text[pos])) pos++;
  const whole = text.slice(numStart, pos);
  let fraction = '';
  if (pos < end && text[pos] === '.') {
    const start = ++pos;
    while (pos < end && isDigit(text[pos])) pos++;
    fraction = text.slice(start, pos);
  }
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(text[pos])) pos++;
  if (pos < end && (text[pos] === '-' || text[pos] === '+')) pos++;
  while (pos < end && isDigit(text[pos])) pos++;
  if (pos < end) return QUANTITY_FORMAT_ERROR;
  const suffix = text.slice(suffixStart);

  let base: 2 | 10 = 10;
  let exponent: number;
  let format: QuantityFormat;
  if (DECIMAL_SUFFIXES[suffix] !== undefined) {
    exponent = DECIMAL_SUFFIXES[suffix];
    format = 'DecimalSI';
  } else if (BINARY_SUFFIXES[suffix] !== undefined) {
    base = 2;
    exponent = BINARY_SUFFIXES[suffix];
    format = 'BinarySI';
  } else if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    const parsed = parseInt64(suffix.slice(1));
    if (parsed === undefined) return QUANTITY_SUFFIX_ERROR;
    exponent = Number(BigInt.asIntN(32, parsed));
    format = 'DecimalExponent';
  } else {
    return QUANTITY_SUFFIX_ERROR;
  }
  // Go's exact (fast) path needs no digits at all ("." and "+" are 0); its big-decimal path parses
  // the number's text and refuses one without digits.
  const wholeDigits = whole === '' ? 1 : whole.length;
  const fastPath =
    base === 10
      ? wholeDigits + fraction.length <= 18 && exponent - fraction.length >= -9
      : fraction === '' && 15 - wholeDigits - Math.trunc((exponent * 3) / 10) - 1 >= 0;
  if (!fastPath && whole === '' && fraction === '' && !/\d/.test(text.slice(0, suffixStart))) return QUANTITY_NUMERIC_ERROR;
  return { negative, whole, fraction, base, exponent, format };
}

/** A quantity's exact value: mantissa * 10^scale. */
export interface ExactQuantity {
  mantissa: bigint;
  scale: number;
}

/** The exact value and format of `text` (trimmed) as Go's ParseQuantity reads it, before any rounding; undefined where it fails. */
export function exactQuantity(text: string): { value: ExactQuantity; format: QuantityFormat } | undefined {
  const parts = parseQuantityText(text.trim());
  if (typeof parts === 'string') return undefined;
  let mantissa = BigInt(`${parts.whole}${parts.fraction}` || '0');
  let scale = -parts.fraction.length;
  if (parts.base === 2) mantissa *= 2n ** BigInt(parts.exponent);
  else scale += parts.exponent;
  if (parts.negative) mantissa = -mantissa;
  return { value: { mantissa, scale }, format: parts.format };
}
