/**
 * cel-go's optional types as kube-apiserver enables them: `optional.of`, `optional.none`,
 * `optional.ofNonZeroValue`, `hasValue`, `value`, `orValue`, `or`, and the optional selection and
 * indexing the source rewrite turns `a.?b` and `a[?k]` into.
 */
import { celList, celMap, isCelList, isCelMap, isCelUint, type CelValue } from '@bufbuild/cel';
import { isReflectMessage } from '@bufbuild/protobuf/reflect';
import { OPT_INDEX, OPT_LIST, OPT_MAP, OPT_SELECT } from '../source.js';
import { asOptional, optionalValue } from '../values.js';
import { CelEvalError, defineFunction, defineMethod } from './registry.js';

function isZero(v: CelValue): boolean {
  if (v === null || v === false || v === '' || v === 0 || v === 0n) return true;
  if (isCelUint(v)) return v.value === 0n;
  if (v instanceof Uint8Array) return v.length === 0;
  if (isCelList(v)) return v.size === 0;
  if (isCelMap(v)) return v.size === 0;
  return false;
}

/** The field or key K of V, or undefined when absent. */
function member(v: CelValue, k: CelValue): CelValue | undefined {
  if (isCelMap(v)) return v.has(k as string) ? v.get(k as string) : undefined;
  if (isCelList(v)) {
    const i = typeof k === 'bigint' ? Number(k) : typeof k === 'number' && Number.isInteger(k) ? k : isCelUint(k) ? Number(k.value) : NaN;
    if (Number.isNaN(i)) throw new CelEvalError('unsupported index type');
    return i >= 0 && i < v.size ? v.get(i) : undefined;
  }
  if (isReflectMessage(v)) return undefined;
  throw new CelEvalError(`no such overload`);
}

function optionalAccess(recv: CelValue, key: CelValue): CelValue {
  const opt = asOptional(recv);
  if (opt !== undefined) {
    if (!opt.present) return recv;
    return optionalValue(member(opt.value as CelValue, key));
  }
  return optionalValue(member(recv, key));
}

defineFunction('optional.of', 1, (v) => optionalValue(v));
defineFunction('optional.none', 0, () => optionalValue(undefined));
defineFunction('optional.ofNonZeroValue', 1, (v) => optionalValue(isZero(v) ? undefined : v));
defineMethod('hasValue', 0, (r) => asOptional(r)?.present);
defineMethod('value', 0, (r) => {
  const o = asOptional(r);
  if (o === undefined) return undefined;
  if (!o.present) throw new CelEvalError('optional.none() dereference');
  return o.value;
});
defineMethod('orValue', 1, (r, alt) => {
  const o = asOptional(r);
  if (o === undefined) return undefined;
  return o.present ? o.value : alt;
});
defineMethod('or', 1, (r, alt) => {
  const o = asOptional(r);
  if (o === undefined) return undefined;
  return o.present ? r : alt;
});
// A list's first and last elements, none when it is empty (cel-go's optional library, version 2).
defineMethod('first', 0, (r) => (isCelList(r) ? optionalValue(r.size > 0 ? r.get(0) : undefined) : undefined));
defineMethod('last', 0, (r) => (isCelList(r) ? optionalValue(r.size > 0 ? r.get(r.size - 1) : undefined) : undefined));
defineMethod(OPT_SELECT, 1, optionalAccess);
defineMethod(OPT_INDEX, 1, optionalAccess);

// `@charge(e)` and `@charge(e, n)` are E; the cost tracker charges 1 or N for evaluating them (see instrument in index.ts).
defineFunction('@charge', 1, (v) => v);
defineFunction('@charge', 2, (v) => v);

// Helpers of the two-variable comprehensions (macros.ts).
defineFunction('@pairs', 1, (r) => {
  if (isCelList(r)) return celList([...r].map((v, i) => celList([BigInt(i), v])));
  if (isCelMap(r)) return celList([...r].map(([k, v]) => celList([k, v])));
  return undefined;
});
defineFunction('@emptyMap', 0, () => celMap(new Map()));
const insert = (m: CelValue, k: CelValue, v: CelValue): CelValue | undefined => {
  if (!isCelMap(m)) return undefined;
  const key = k as string;
  if (m.has(key)) throw new CelEvalError(`insert failed: key ${String(key)} already exists`);
  return celMap(new Map([...m, [key, v]]));
};
defineFunction('@mapInsert', 3, insert);
defineFunction('@mapInsertEntry', 2, (m, entry) => {
  if (!isCelMap(entry) || entry.size !== 1) throw new CelEvalError('transformMapEntry: the expression must produce a map of one entry');
  const [[k, v]] = [...entry];
  return insert(m, k, v);
});

/** The positions an `@optList` / `@optMap` call marks optional. */
function marked(indexes: CelValue): Set<number> {
  return new Set(isCelList(indexes) ? [...indexes].map((i) => Number(i as bigint)) : []);
}

// Optional list elements and map entries (`[?e]`, `{?k: v}`): absent ones are left out, present ones unwrapped.
defineFunction(OPT_LIST, 2, (list, indexes) => {
  if (!isCelList(list)) return undefined;
  const optional = marked(indexes);
  const out: CelValue[] = [];
  [...list].forEach((v, i) => {
    if (!optional.has(i)) return out.push(v);
    const o = asOptional(v);
    if (o === undefined) throw new CelEvalError('no such overload');
    if (o.present) out.push(o.value as CelValue);
    return out.length;
  });
  return celList(out);
});
defineFunction(OPT_MAP, 2, (map, indexes) => {
  if (!isCelMap(map)) return undefined;
  const optional = marked(indexes);
  const out = new Map<string, CelValue>();
  [...map].forEach(([k, v], i) => {
    if (!optional.has(i)) return out.set(k as string, v);
    const o = asOptional(v);
    if (o === undefined) throw new CelEvalError('no such overload');
    if (o.present) out.set(k as string, o.value as CelValue);
    return out;
  });
  return celMap(out);
});
