/**
 * int64 values as protobufjs hands them over (a `Long` when the long package is installed, else a
 * number) and back. JSON carries them as numbers, so precision is exact up to 2^53 and rounded beyond,
 * as in any JavaScript JSON client of Kubernetes.
 */

interface LongLike {
  low: number;
  high: number;
  unsigned: boolean;
  toString(): string;
}

function isLongLike(v: unknown): v is LongLike {
  return typeof v === 'object' && v !== null && typeof (v as { low?: unknown }).low === 'number' && typeof (v as { high?: unknown }).high === 'number';
}

/** A decoded int64/uint64 as a JavaScript number (rounded beyond 2^53). */
export function int64ToNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (isLongLike(v)) return Number(BigInt(v.toString()));
  if (typeof v === 'string') return Number(v);
  return 0;
}

/** A decoded int64 exactly, for values that routinely exceed 2^53 (durations in nanoseconds). */
export function int64ToBigInt(v: unknown): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  if (isLongLike(v)) return BigInt(v.toString());
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return BigInt(v);
  return 0n;
}

/** A value protobufjs accepts for an int64 field: a number when exact, else the decimal string. */
export function int64ForWire(v: bigint | number): number | string {
  if (typeof v === 'number') return Math.trunc(v);
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}
