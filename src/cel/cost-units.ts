/**
 * The arithmetic of cel-go's cost estimates: ranges of unsigned 64-bit integers (held as bigint so
 * that large estimates stay exact) where sums and products saturate at 2^64-1 instead of wrapping,
 * and scaling by a cost factor goes through float64 and rounds up, as cel-go does it.
 */

/** The largest uint64, where every estimate saturates. */
export const MAX_U64 = (1n << 64n) - 1n;

/** A range of sizes or costs, smallest and largest. */
export interface Range {
  min: bigint;
  max: bigint;
}

/** cel-go's unit costs (common/cost.go). */
export const SELECT_AND_IDENT_COST = 1n;
export const CONST_COST = 0n;
export const LIST_CREATE_BASE_COST = 10n;
export const MAP_CREATE_BASE_COST = 30n;
export const STRING_TRAVERSAL_COST_FACTOR = 0.1;
export const REGEX_STRING_LENGTH_COST_FACTOR = 0.25;

export const fixed = (n: bigint): Range => ({ min: n, max: n });
export const ZERO: Range = fixed(0n);
/** A size nothing is known about. */
export const UNKNOWN: Range = { min: 0n, max: MAX_U64 };

export function addU64(x: bigint, y: bigint): bigint {
  const s = x + y;
  return s > MAX_U64 ? MAX_U64 : s;
}

export function mulU64(x: bigint, y: bigint): bigint {
  const p = x * y;
  return p > MAX_U64 ? MAX_U64 : p;
}

const TWO_TO_64 = 2 ** 64;

/** X times the float FACTOR, rounded up; saturating as cel-go's multiplyByCostFactor. */
export function mulFactor(x: bigint, factor: number): bigint {
  const xf = Number(x);
  if (xf > 0 && factor > 0 && xf > TWO_TO_64 / factor) return MAX_U64;
  const c = Math.ceil(xf * factor);
  if (c >= TWO_TO_64) return MAX_U64;
  return BigInt(c);
}

export const add = (a: Range, b: Range): Range => ({ min: addU64(a.min, b.min), max: addU64(a.max, b.max) });
export const mul = (a: Range, b: Range): Range => ({ min: mulU64(a.min, b.min), max: mulU64(a.max, b.max) });
export const scale = (a: Range, factor: number): Range => ({ min: mulFactor(a.min, factor), max: mulFactor(a.max, factor) });
export const union = (a: Range, b: Range): Range => ({ min: b.min < a.min ? b.min : a.min, max: b.max > a.max ? b.max : a.max });
