/**
 * The call costs kube-apiserver's CEL environment adds to cel-go's estimator: the estimators the
 * lists and sets extensions register for their overloads, and kube's library estimator (strings,
 * lists, regex, URLs, IPs and CIDRs, quantities, semver, formats, authorizer). Each answers for
 * one call given what is known of its target and arguments, or undefined to leave the call to
 * cel-go's own rules.
 */
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import type { CelType } from './types.js';
import { NOMINAL_COST_FUNCTIONS as NOMINAL } from './nominal-cost.js';
import {
  LIST_CREATE_BASE_COST,
  MAX_U64,
  REGEX_STRING_LENGTH_COST_FACTOR as REGEX_FACTOR,
  STRING_TRAVERSAL_COST_FACTOR as STRING_FACTOR,
  add,
  fixed,
  mul,
  scale,
  type Range,
} from './cost-units.js';

/** An operand of a call as the estimators see it (cel-go's AstNode). */
export interface CostNode {
  /** Where the value comes from (`self`, a field, `@items`...), when known. */
  path?: string[];
  type: CelType;
  expr?: Expr;
  /** The size the estimator worked out for the expression, if any. */
  size?: Range;
}

/** The cost of a call and the size of what it returns. */
export interface CallEstimate {
  cost: Range;
  resultSize?: Range;
}

/** The size of N: worked out, or from where it comes from, or unknown. */
export type SizeOf = (n: CostNode) => Range;

const ONE = fixed(1n);
const call = (cost: Range, resultSize?: Range): CallEstimate => ({ cost, resultSize });

/** The literal int an argument is, else DEFAULT (cel-go's nodeAsIntValue). */
function literalInt(n: CostNode, fallback: bigint): bigint {
  const k = n.expr?.exprKind;
  if (k?.case !== 'constExpr' || k.value.constantKind.case !== 'int64Value') return fallback;
  const v = k.value.constantKind.value;
  return v < 0n ? 0n : v;
}

function allocatingListCall(factor: number, listSize: Range): CallEstimate {
  return call(add(add(scale(listSize, factor), ONE), fixed(LIST_CREATE_BASE_COST)), listSize);
}

/** The estimators cel-go's lists (version 3) and sets extensions register, by overload. */
export function extensionCallCost(overload: string, sizeOf: SizeOf, target: CostNode | undefined, args: CostNode[]): CallEstimate | undefined {
  if (overload.startsWith('list_sets_')) {
    if (args.length !== 2) return undefined;
    const factor = overload === 'list_sets_equivalent_list' ? 2 : 1;
    return call(add(scale(mul(sizeOf(args[0]), sizeOf(args[1])), factor), ONE));
  }
  const sortFactor = (elem: string): number => 2 + (elem === 'string' || elem === 'bytes' ? STRING_FACTOR : 0);
  const sort = /^list_(\w+)_sort$/.exec(overload);
  if (sort !== null) {
    if (target === undefined || args.length !== 0) return undefined;
    const sz = sizeOf(target);
    return allocatingListCall(sortFactor(sort[1]), mul(sz, sz));
  }
  const sortBy = /^list_(\w+)_sortByAssociatedKeys$/.exec(overload);
  if (sortBy !== null) {
    if (target === undefined || args.length !== 1) return undefined;
    const sz = sizeOf(args[0]);
    return allocatingListCall(sortFactor(sortBy[1]), mul(sz, sz));
  }
  switch (overload) {
    case 'list_slice': {
      if (target === undefined || args.length !== 2) return undefined;
      const sz = sizeOf(target);
      const start = literalInt(args[0], 0n);
      const end = literalInt(args[1], sz.max);
      return allocatingListCall(1, fixed(BigInt.asUintN(64, end - start)));
    }
    case 'lists_range':
      if (target !== undefined || args.length !== 1) return undefined;
      return allocatingListCall(1, fixed(literalInt(args[0], MAX_U64)));
    case 'list_reverse':
      if (target === undefined || args.length !== 0) return undefined;
      return allocatingListCall(1, sizeOf(target));
    case 'list_flatten':
    case 'list_flatten_int': {
      if (target === undefined || args.length > 1) return undefined;
      const depth = args.length === 1 ? literalInt(args[0], MAX_U64) : 1n;
      return allocatingListCall(Number(depth), sizeOf(target));
    }
    case 'list_distinct': {
      if (target === undefined || args.length !== 0) return undefined;
      const sz = sizeOf(target);
      return allocatingListCall(2, mul(sz, sz));
    }
  }
  return undefined;
}

/** The element type of a list (the first type parameter: a map's key), if any. */
function firstParam(t: CelType): CelType | undefined {
  if (t.kind === 'list' || t.kind === 'optional_type') return t.elem;
  if (t.kind === 'map') return t.key;
  return undefined;
}

/** kube's node for the elements of LIST: its path plus `@items`, its first type parameter. */
function elementNode(list: CostNode): CostNode | undefined {
  const t = firstParam(list.type);
  if (t === undefined) return undefined;
  return { path: list.path !== undefined && list.path.length > 0 ? [...list.path, '@items'] : undefined, type: t };
}

const isStringLike = (t: CelType | undefined): boolean => t?.kind === 'string' || t?.kind === 'bytes';

/** kube's MaxNameFormatRegexSize and MaxFormatSize. */
const MAX_NAME_FORMAT_REGEX_SIZE = 128;
const MAX_FORMAT_SIZE = 64n;

/** kube's library cost estimator (k8s.io/apiserver/pkg/cel/library.CostEstimator), by function name. */
export function kubeCallCost(fn: string, overload: string, sizeOf: SizeOf, target: CostNode | undefined, args: CostNode[]): CallEstimate | undefined {
  if (NOMINAL.has(fn)) return call(ONE);
  switch (fn) {
    case 'check':
      return call(fixed(350_000n));
    case 'fieldSelector':
    case 'labelSelector':
      if (args.length === 1) {
        const len = sizeOf(args[0]);
        return call(add(add(fixed(LIST_CREATE_BASE_COST), scale(len, STRING_FACTOR)), scale(scale(len, 0.5), 50)));
      }
      return undefined;
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      if (target !== undefined) {
        const el = elementNode(target);
        if (el === undefined) return call(scale(sizeOf(target), STRING_FACTOR));
        let elCost = ONE;
        if (isStringLike(el.type)) elCost = add(elCost, scale(sizeOf(el), STRING_FACTOR));
        return call(mul(sizeOf(target), elCost));
      }
      return undefined;
    case 'url':
    case 'jsonpatch.escapeKey':
      if (args.length === 1) {
        const sz = sizeOf(args[0]);
        return call(scale(sz, STRING_FACTOR), sz);
      }
      return undefined;
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
      if (target !== undefined) {
        const sz = sizeOf(target);
        return call(scale(sz, STRING_FACTOR), sz);
      }
      return undefined;
    case 'replace':
      if (target !== undefined && args.length >= 2) return replaceCost(sizeOf(target), sizeOf(args[0]), sizeOf(args[1]));
      return undefined;
    case 'split':
      if (target !== undefined) {
        const sz = sizeOf(target);
        let max = sz.max;
        if (args.length > 1) {
          const k = args[1].expr?.exprKind;
          if (k?.case === 'constExpr' && k.value.constantKind.case === 'int64Value') max = BigInt.asUintN(64, k.value.constantKind.value);
        }
        return call(scale(sz, 2 * STRING_FACTOR), { min: 0n, max });
      }
      return undefined;
    case 'join':
      if (target !== undefined) {
        let sz: Range = { min: 0n, max: 0n };
        const listSize = sizeOf(target);
        const el = elementNode(target);
        if (el !== undefined) sz = mul(listSize, sizeOf(el));
        if (args.length > 0) {
          const separators = { min: listSize.min > 0n ? listSize.min - 1n : 0n, max: listSize.max > 0n ? listSize.max - 1n : 0n };
          sz = add(sz, mul(sizeOf(args[0]), separators));
        }
        return call(scale(sz, STRING_FACTOR), sz);
      }
      return undefined;
    case 'find':
    case 'findAll':
      if (target !== undefined && args.length >= 1) {
        const sz = sizeOf(target);
        const strCost = scale(add(sz, ONE), STRING_FACTOR);
        const regexCost = scale(sizeOf(args[0]), REGEX_FACTOR);
        return call(mul(strCost, regexCost), { min: 0n, max: sz.max });
      }
      return undefined;
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'semver':
    case 'isSemver':
      if (args.length >= 1) return call(scale(sizeOf(args[0]), STRING_FACTOR));
      return undefined;
    case 'ip':
      if (overload === 'cidr_ip') return call(ONE);
      if (args.length >= 1) return call(scale(sizeOf(args[0]), STRING_FACTOR));
      return undefined;
    case 'ip.isCanonical':
      if (args.length >= 1) return call(scale(sizeOf(args[0]), 2 * STRING_FACTOR));
      return undefined;
    case 'containsIP':
    case 'containsCIDR':
      if (args.length >= 1) {
        const ipSize: Range = { min: 4n, max: 16n };
        let cost = scale(add(ipSize, ipSize), STRING_FACTOR);
        if (fn === 'containsCIDR') cost = add(add(cost, scale(ipSize, STRING_FACTOR)), ONE);
        if (overload.endsWith('_string')) cost = add(cost, scale(sizeOf(args[0]), STRING_FACTOR));
        return call(cost);
      }
      return undefined;
    case 'validate':
      if (args.length >= 1) return call(scale(scale(sizeOf(args[0]), STRING_FACTOR), MAX_NAME_FORMAT_REGEX_SIZE * REGEX_FACTOR));
      return undefined;
    case '_==_':
      if (args.length === 2 && sameType(args[0].type, args[1].type)) {
        const name = args[0].type.name;
        switch (name ?? '') {
          case 'net.IP':
          case 'net.CIDR':
          case 'kubernetes.Quantity':
          case 'kubernetes.Semver':
          case 'kubernetes.authorization.Authorizer':
          case 'kubernetes.authorization.PathCheck':
          case 'kubernetes.authorization.GroupCheck':
          case 'kubernetes.authorization.ResourceCheck':
          case 'kubernetes.authorization.Decision':
            return call(ONE);
          case 'kubernetes.NamedFormat':
            return call(scale({ min: 1n, max: MAX_FORMAT_SIZE }, STRING_FACTOR));
          case 'kubernetes.URL': {
            // kube takes both sizes from the right operand.
            return call(scale({ min: 1n, max: args[1].size?.max ?? 1n }, STRING_FACTOR));
          }
        }
      }
      return undefined;
  }
  return undefined;
}

function sameType(a: CelType, b: CelType): boolean {
  return (a.kind === 'opaque' || a.kind === 'object') && a.kind === b.kind && a.name === b.name;
}

/** kube's estimate of `s.replace(old, new)`: the traversal twice; the result by how often OLD can occur. */
function replaceCost(sz: Range, toReplace: Range, replaceWith: Range): CallEstimate {
  const count: Range = { min: 0n, max: 0n };
  const retained: Range = { min: 0n, max: 0n };
  if (toReplace.min === 0n) {
    count.max = sz.max < MAX_U64 ? sz.max + 1n : sz.max;
    retained.max = sz.max;
  } else if (replaceWith.max <= toReplace.min) {
    retained.max = sz.max;
  } else {
    count.max = BigInt(Math.ceil(Number(sz.max) / Number(toReplace.min)));
  }
  if (toReplace.max === 0n) {
    count.min = sz.min < MAX_U64 ? sz.min + 1n : sz.min;
    retained.min = sz.min;
  } else if (toReplace.max <= replaceWith.min) {
    retained.min = sz.min;
  } else {
    count.min = BigInt(Math.ceil(Number(sz.min) / Number(toReplace.max)));
  }
  return call(scale(sz, 2 * STRING_FACTOR), add(mul(count, replaceWith), retained));
}
