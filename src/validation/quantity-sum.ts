/**
 * Sums of resource quantities as Go's `resource.Quantity.Add` computes them: the exact value, in the
 * format of the left operand (the right one's when the left is zero), printed canonically as
 * Quantity.String() prints it. Used to total a pod's container requests and limits.
 */
import { canonicalQuantity, compareQuantities } from '../api/quantity.js';
import { exactQuantity, type ExactQuantity, type QuantityFormat } from '../api/quantity-grammar.js';

type Exact = ExactQuantity;
const exactOf = exactQuantity;

function atScale(v: Exact, scale: number): bigint {
  return v.mantissa * 10n ** BigInt(v.scale - scale);
}

/** `n / 10^digits` written in plain decimal notation. */
function decimalText(n: bigint, digits: number): string {
  const negative = n < 0n;
  const text = (negative ? -n : n).toString().padStart(digits + 1, '0');
  const whole = text.slice(0, text.length - digits);
  const fraction = text.slice(text.length - digits).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/** The canonical text of an exact value in `format`. */
function printed(v: Exact, format: QuantityFormat): string {
  const integer = v.scale >= 0 ? v.mantissa * 10n ** BigInt(v.scale) : undefined;
  // A binary value is written in Ki (n/1024 always has a finite decimal expansion) so it parses as BinarySI.
  if (format === 'BinarySI' && integer !== undefined) return canonicalQuantity(`${decimalText(integer * 9765625n, 10)}Ki`);
  if (format === 'DecimalExponent') return canonicalQuantity(`${decimalText(v.scale >= 0 ? (integer ?? 0n) : v.mantissa, Math.max(0, -v.scale))}e0`);
  return canonicalQuantity(v.scale >= 0 ? `${integer ?? 0n}` : `${decimalText(v.mantissa, -v.scale)}`);
}

/** `a + b` as Go's Quantity.Add leaves `a`; undefined when either does not parse. */
export function addQuantities(a: string, b: string): string | undefined {
  const x = exactOf(a);
  const y = exactOf(b);
  if (x === undefined || y === undefined) return undefined;
  const scale = Math.min(x.value.scale, y.value.scale);
  const sum = { mantissa: atScale(x.value, scale) + atScale(y.value, scale), scale };
  return printed(sum, x.value.mantissa === 0n ? y.format : x.format);
}

/** A resource list (name to quantity text). */
export type ResourceTotals = Map<string, string>;

/** addResourceList: each quantity of `next` added to the same resource of `totals`. */
export function addResourceList(totals: ResourceTotals, next: ResourceTotals): void {
  for (const [name, quantity] of next) {
    const current = totals.get(name);
    totals.set(name, current === undefined ? canonicalQuantity(quantity) : (addQuantities(current, quantity) ?? current));
  }
}

/** maxResourceList: each resource of `totals` raised to the quantity in `next` when that is larger. */
export function maxResourceList(totals: ResourceTotals, next: ResourceTotals): void {
  for (const [name, quantity] of next) {
    const current = totals.get(name);
    if (current === undefined || compareQuantities(quantity, current) === 1) totals.set(name, canonicalQuantity(quantity));
  }
}
