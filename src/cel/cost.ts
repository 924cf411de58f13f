/**
 * Static cost estimation after cel-go's estimator with kube's library costs: the worst case cost of
 * an expression given the largest sizes its values can have. A declared `maxLength`, `maxItems` or
 * `maxProperties` bounds a size; otherwise the size is what fits in kube's largest request (3 MiB).
 * Comprehensions multiply the cost of one step by the largest size of their range.
 */
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import type { CelType } from './types.js';

/** kube-apiserver's largest request body (celconfig.MaxRequestSizeBytes). */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

export interface CostEstimate {
  min: number;
  max: number;
}

/** The smallest JSON rendering of a value of type T (kube's minimum serialized sizes). */
export function minSerializedSize(t: CelType | undefined): number {
  switch (t?.kind) {
    case 'bool':
      return 4;
    case 'int':
    case 'uint':
    case 'double':
      return 1;
    case 'timestamp':
      return 21;
    case 'duration':
      return 3;
    case 'string':
    case 'bytes':
      return 2;
    default:
      return 2;
  }
}

/** The largest size of values of type T: declared bound, or what fits in a request. */
export function maxSizeOf(t: CelType | undefined): number {
  if (t?.maxSize !== undefined) return t.maxSize;
  switch (t?.kind) {
    case 'string':
    case 'bytes':
      return MAX_REQUEST_SIZE_BYTES - 2;
    case 'list':
      return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSerializedSize(t.elem) + 1));
    case 'map':
    case 'object':
      return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSerializedSize(t.elem) + 4));
    default:
      return 1;
  }
}

const STRING_FACTOR = 0.1;
const SIZE_FUNCS = new Set([
  'contains',
  'startsWith',
  'endsWith',
  'lowerAscii',
  'upperAscii',
  'trim',
  'indexOf',
  'lastIndexOf',
  'replace',
  'split',
  'substring',
  'join',
]);

/** Estimates EXPR's cost given the TYPES the checker found for its sub-expressions. */
export function estimateCost(expr: Expr, types: ReadonlyMap<bigint, CelType>): CostEstimate {
  const typeOf = (e: Expr | undefined): CelType | undefined => (e === undefined ? undefined : types.get(e.id));
  const add = (a: CostEstimate, b: CostEstimate): CostEstimate => ({ min: a.min + b.min, max: a.max + b.max });
  const ZERO = { min: 0, max: 0 };

  const visit = (e: Expr | undefined): CostEstimate => {
    if (e === undefined) return ZERO;
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr':
        return ZERO;
      case 'identExpr':
        return { min: 1, max: 1 };
      case 'selectExpr':
        return add(visit(k.value.operand), k.value.testOnly ? ZERO : { min: 1, max: 1 });
      case 'listExpr':
        return k.value.elements.map(visit).reduce(add, { min: 10, max: 10 });
      case 'structExpr':
        return k.value.entries.reduce((acc, en) => add(add(acc, en.keyKind.case === 'mapKey' ? visit(en.keyKind.value) : ZERO), visit(en.value)), {
          min: 30,
          max: 30,
        });
      case 'callExpr': {
        const c = k.value;
        // A literal with optional elements or entries costs what the literal costs.
        if (c.function === '@optList' || c.function === '@optMap') return visit(c.args[0]);
        let cost = c.args.map(visit).reduce(add, visit(c.target));
        const fn = c.function;
        if (fn === '_&&_' || fn === '_||_') {
          const [a, b] = c.args.map(visit);
          return { min: a.min, max: a.max + b.max };
        }
        if (fn === '_?_:_') {
          const [a, b, d] = c.args.map(visit);
          return { min: a.min + Math.min(b.min, d.min), max: a.max + Math.max(b.max, d.max) };
        }
        const recvType = c.target !== undefined ? typeOf(c.target) : typeOf(c.args[0]);
        const argType = c.target !== undefined ? typeOf(c.args[0]) : typeOf(c.args[1]);
        let call = { min: 1, max: 1 };
        const isStr = (t: CelType | undefined): boolean => t?.kind === 'string' || t?.kind === 'bytes';
        const strCost = (t: CelType | undefined, extra = 0): number => Math.ceil((maxSizeOf(t) + extra) * STRING_FACTOR);
        if ((fn === 'startsWith' || fn === 'endsWith') && isStr(recvType)) {
          // cel-go: the prefix or suffix is traversed, not the string.
          call = { min: Math.ceil(STRING_FACTOR), max: strCost(argType) };
        } else if (fn === 'contains' && isStr(recvType)) {
          call = { min: 1, max: strCost(recvType) * strCost(argType) };
        } else if (fn === 'split' && isStr(recvType)) {
          // kube's estimator: the traversal plus the construction of the result, without a call unit.
          call = { min: 0, max: Math.ceil(maxSizeOf(recvType) * 2 * STRING_FACTOR) };
        } else if (SIZE_FUNCS.has(fn) && isStr(recvType)) call = { min: 1, max: 1 + Math.ceil(maxSizeOf(recvType) * STRING_FACTOR) };
        else if (fn === 'matches') {
          // cel-go: (string size + 1) x 0.1 times the pattern size x 0.25 (RegexStringLengthCostFactor).
          call = { min: 1, max: strCost(recvType, 1) * Math.ceil(maxSizeOf(argType) * 0.25) };
        } else if (fn === 'find' || fn === 'findAll') {
          const strSize = maxSizeOf(recvType) * STRING_FACTOR;
          const patSize =
            c.args.length > 0 ? Math.max(1, (argType?.kind === 'string' && argType.maxSize === undefined ? 1 : maxSizeOf(argType)) * STRING_FACTOR) : 1;
          call = { min: 1, max: 1 + Math.ceil(strSize * patSize) };
        } else if (['_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_'].includes(fn) && isStr(recvType)) {
          const smallest = Math.min(maxSizeOf(recvType), maxSizeOf(argType));
          call = { min: smallest > 0 ? 1 : 0, max: Math.ceil(smallest * STRING_FACTOR) };
        } else if (fn === '_+_' && isStr(recvType)) {
          call = { min: 1, max: 1 + Math.ceil(Math.min(maxSizeOf(recvType), maxSizeOf(argType)) * STRING_FACTOR) };
        } else if (fn === '@in' && argType?.kind === 'list') call = { min: 1, max: 1 + maxSizeOf(argType) };
        else if (
          ['isSorted', 'sum', 'min', 'max', 'indexOf', 'lastIndexOf', 'distinct', 'reverse', 'flatten', 'join'].includes(fn) &&
          recvType?.kind === 'list'
        ) {
          call = { min: 1, max: 1 + maxSizeOf(recvType) };
        } else if (fn === 'sort' && recvType?.kind === 'list') {
          const n = maxSizeOf(recvType);
          call = { min: 1, max: 1 + Math.ceil(n * Math.log2(Math.max(2, n))) };
        } else if (fn.startsWith('sets.')) call = { min: 1, max: 1 + maxSizeOf(typeOf(c.args[0])) * maxSizeOf(typeOf(c.args[1])) };
        cost = add(cost, call);
        return cost;
      }
      case 'comprehensionExpr': {
        const c = k.value;
        const range = typeOf(c.iterRange);
        const n = range?.kind === 'list' || range?.kind === 'map' || range?.kind === 'object' ? maxSizeOf(range) : 1;
        const step = add(visit(c.loopCondition), visit(c.loopStep));
        const base = add(add(visit(c.iterRange), visit(c.accuInit)), visit(c.result));
        return { min: base.min, max: base.max + step.max * n };
      }
      default:
        return ZERO;
    }
  };
  return visit(expr);
}
