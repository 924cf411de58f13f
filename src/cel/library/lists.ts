/**
 * kube's lists library (isSorted, sum, min, max, indexOf, lastIndexOf) and cel-go's lists extension
 * version 3 and sets extension as kube-apiserver 1.36 enables them.
 */
import { celList, isCelList, isCelUint, type CelList, type CelValue } from '@bufbuild/cel';
import { isReflectMessage, type ReflectMessage } from '@bufbuild/protobuf/reflect';
import { celEquals, compareValues } from './compare.js';
import { CelEvalError, defineFunction, defineMethod } from './registry.js';

function list(v: CelValue): CelList | undefined {
  return isCelList(v) ? v : undefined;
}

function isNumeric(v: CelValue): boolean {
  return typeof v === 'bigint' || typeof v === 'number' || isCelUint(v);
}

defineMethod('isSorted', 0, (r) => {
  const l = list(r);
  if (l === undefined) return undefined;
  const items = [...l];
  for (let i = 1; i < items.length; i++) if (compareValues(items[i - 1], items[i]) > 0) return false;
  return true;
});

defineMethod('sum', 0, (r) => {
  const l = list(r);
  if (l === undefined) return undefined;
  const items = [...l];
  if (items.length === 0) return 0n;
  let acc: CelValue = items[0];
  for (const v of items.slice(1)) {
    if (typeof acc === 'bigint' && typeof v === 'bigint') {
      acc = acc + v;
      if (acc > 9223372036854775807n || acc < -9223372036854775808n) throw new CelEvalError('integer overflow');
    } else if (typeof acc === 'number' && typeof v === 'number') acc = acc + v;
    else if (isCelUint(acc) && isCelUint(v)) acc = { ...acc, value: acc.value + v.value };
    else if (isReflectMessage(acc) && isReflectMessage(v)) acc = addDurations(acc, v);
    else throw new CelEvalError('no such overload');
  }
  return acc;
});

function addDurations(a: ReflectMessage, b: ReflectMessage): CelValue {
  const ma = a.message as unknown as { seconds: bigint; nanos: number };
  const mb = b.message as unknown as { seconds: bigint; nanos: number };
  const total = ma.seconds * 1_000_000_000n + BigInt(ma.nanos) + mb.seconds * 1_000_000_000n + BigInt(mb.nanos);
  return { ...a.message, seconds: total / 1_000_000_000n, nanos: Number(total % 1_000_000_000n) } as unknown as CelValue;
}

for (const [name, sign] of [
  ['min', -1],
  ['max', 1],
] as const) {
  defineMethod(name, 0, (r) => {
    const l = list(r);
    if (l === undefined) return undefined;
    const items = [...l];
    if (items.length === 0) throw new CelEvalError(`${name} called on empty list`);
    let best = items[0];
    for (const v of items.slice(1)) if (compareValues(v, best) * sign > 0) best = v;
    return best;
  });
}

defineMethod('indexOf', 1, (r, x) => {
  const l = list(r);
  if (l === undefined) return undefined;
  const items = [...l];
  return BigInt(items.findIndex((v) => celEquals(v, x)));
});
defineMethod('lastIndexOf', 1, (r, x) => {
  const l = list(r);
  if (l === undefined) return undefined;
  const items = [...l];
  for (let i = items.length - 1; i >= 0; i--) if (celEquals(items[i], x)) return BigInt(i);
  return -1n;
});

// cel-go lists extension v3.
defineMethod('slice', 2, (r, start, end) => {
  const l = list(r);
  if (l === undefined || typeof start !== 'bigint' || typeof end !== 'bigint') return undefined;
  if (start < 0n) throw new CelEvalError(`cannot slice(${start}, ${end}), negative indexes not supported`);
  if (start > end) throw new CelEvalError(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
  if (end > BigInt(l.size)) throw new CelEvalError(`cannot slice(${start}, ${end}), list is length ${l.size}`);
  return celList([...l].slice(Number(start), Number(end)));
});
function flatten(l: CelList, depth: number): CelValue[] {
  const out: CelValue[] = [];
  for (const v of l) {
    if (isCelList(v) && depth > 0) out.push(...flatten(v, depth - 1));
    else out.push(v);
  }
  return out;
}
defineMethod('flatten', 0, (r) => (isCelList(r) ? celList(flatten(r, 1)) : undefined));
defineMethod('flatten', 1, (r, d) => {
  if (!isCelList(r) || typeof d !== 'bigint') return undefined;
  if (d < 0n) throw new CelEvalError('level must be non-negative');
  return celList(flatten(r, Number(d)));
});
defineFunction('lists.range', 1, (n) => (typeof n === 'bigint' ? celList(Array.from({ length: Number(n) }, (_, i) => BigInt(i))) : undefined));
defineMethod('distinct', 0, (r) => {
  const l = list(r);
  if (l === undefined) return undefined;
  const out: CelValue[] = [];
  for (const v of l) if (!out.some((o) => celEquals(o, v))) out.push(v);
  return celList(out);
});
defineMethod('reverse', 0, (r) => (isCelList(r) ? celList([...r].reverse()) : undefined));
defineMethod('sort', 0, (r) => {
  const l = list(r);
  if (l === undefined) return undefined;
  return celList([...l].sort(compareValues));
});

// The sortBy macro's helper: the list ordered by the keys computed for its elements (a stable sort).
defineFunction('@sortByAssociatedKeys', 2, (r, keys) => {
  const l = list(r);
  const k = list(keys);
  if (l === undefined || k === undefined || l.size !== k.size) return undefined;
  const ks = [...k];
  const order = [...l].map((v, i) => ({ v, key: ks[i] }));
  order.sort((a, b) => compareValues(a.key, b.key));
  return celList(order.map((o) => o.v));
});

// cel-go sets extension.
const setsFn = (name: string, test: (a: CelValue[], b: CelValue[]) => boolean): void =>
  defineFunction(`sets.${name}`, 2, (a, b) => (isCelList(a) && isCelList(b) ? test([...a], [...b]) : undefined));
const has = (xs: CelValue[], v: CelValue): boolean => xs.some((x) => celEquals(x, v));
setsFn('contains', (a, b) => b.every((v) => has(a, v)));
setsFn('equivalent', (a, b) => b.every((v) => has(a, v)) && a.every((v) => has(b, v)));
setsFn('intersects', (a, b) => b.some((v) => has(a, v)));

export { isNumeric };
