/**
 * kube's quantity library: `quantity(string)`, `isQuantity`, `sign`, `isInteger`, `asInteger`,
 * `asApproximateFloat`, `add`, `sub`, `isLessThan`, `isGreaterThan`, `compareTo`. Quantities are
 * equal when their values are (`quantity('1') == quantity('1000m')`).
 */
import { addQuantities } from '../../validation/quantity-sum.js';
import { canonicalQuantity } from '../../api/quantity.js';
import { exactQuantity, parseQuantityText } from '../../api/quantity-grammar.js';
import { asOpaque, opaqueValue } from '../values.js';
import { CelEvalError, defineFunction, defineMethod } from './registry.js';

const TYPE = 'kubernetes.Quantity';
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

interface Q {
  text: string;
  mantissa: bigint;
  scale: number;
}

function quantity(text: string): ReturnType<typeof opaqueValue> {
  const exact = exactQuantity(text);
  if (exact === undefined) throw new Error('unparsable');
  const q: Q = { text: canonicalQuantity(text), ...exact.value };
  // Equality is by value: the key is the value in lowest terms.
  let { mantissa, scale } = exact.value;
  while (mantissa !== 0n && mantissa % 10n === 0n) {
    mantissa /= 10n;
    scale++;
  }
  return opaqueValue(TYPE, mantissa === 0n ? '0' : `${mantissa}e${scale}`, q);
}

function integerValue(q: Q): bigint | undefined {
  if (q.scale >= 0) {
    const v = q.mantissa * 10n ** BigInt(q.scale);
    return v <= INT64_MAX && v >= INT64_MIN ? v : undefined;
  }
  const div = 10n ** BigInt(-q.scale);
  return q.mantissa % div === 0n ? q.mantissa / div : undefined;
}

function compare(a: Q, b: Q): number {
  const scale = Math.min(a.scale, b.scale);
  const x = a.mantissa * 10n ** BigInt(a.scale - scale);
  const y = b.mantissa * 10n ** BigInt(b.scale - scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

defineFunction('quantity', 1, (s) => {
  if (typeof s !== 'string') return undefined;
  const parsed = parseQuantityText(s);
  if (typeof parsed === 'string') throw new CelEvalError(parsed);
  try {
    return quantity(s);
  } catch {
    throw new CelEvalError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  }
});
defineFunction('isQuantity', 1, (s) => (typeof s === 'string' ? exactQuantity(s) !== undefined && s.trim() === s : undefined));

const q = (v: unknown): Q | undefined => asOpaque<Q>(v, TYPE);
defineMethod('sign', 0, (r) => {
  const x = q(r);
  return x === undefined ? undefined : BigInt(x.mantissa > 0n ? 1 : x.mantissa < 0n ? -1 : 0);
});
defineMethod('isInteger', 0, (r) => {
  const x = q(r);
  return x === undefined ? undefined : integerValue(x) !== undefined;
});
defineMethod('asInteger', 0, (r) => {
  const x = q(r);
  if (x === undefined) return undefined;
  const v = integerValue(x);
  if (v === undefined) throw new CelEvalError('cannot convert value to integer');
  return v;
});
defineMethod('asApproximateFloat', 0, (r) => {
  const x = q(r);
  return x === undefined ? undefined : Number(x.mantissa) * 10 ** x.scale;
});
for (const [name, sign] of [
  ['add', 1n],
  ['sub', -1n],
] as const) {
  defineMethod(name, 1, (r, other) => {
    const x = q(r);
    if (x === undefined) return undefined;
    const y = typeof other === 'bigint' ? exactQuantity(String(other)) : q(other) !== undefined ? { value: q(other)! } : undefined;
    if (y === undefined) return undefined;
    const neg = `${sign * y.value.mantissa}e${y.value.scale}`;
    const sum = addQuantities(x.text, neg);
    if (sum === undefined) throw new CelEvalError('no such overload');
    return quantity(sum);
  });
}
defineMethod('isLessThan', 1, (r, o) => (q(r) && q(o) ? compare(q(r)!, q(o)!) < 0 : undefined));
defineMethod('isGreaterThan', 1, (r, o) => (q(r) && q(o) ? compare(q(r)!, q(o)!) > 0 : undefined));
defineMethod('compareTo', 1, (r, o) => (q(r) && q(o) ? BigInt(compare(q(r)!, q(o)!)) : undefined));
