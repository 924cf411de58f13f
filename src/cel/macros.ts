/**
 * cel-go's two-variable comprehensions (kube-apiserver 1.32+), which the parser leaves as plain
 * calls: `all`, `exists`, `exists_one` with an index or key and a value variable,
 * `transformList`, `transformMap` and `transformMapEntry`. Each is expanded into a one-variable
 * comprehension over `@pairs(range)` (the `[key, value]` pairs of a list or map), with the two
 * variables read as `@kv[0]` and `@kv[1]`.
 */
import { create } from '@bufbuild/protobuf';
import { ExprSchema, type Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';

let nextId = 1n << 40n;
const id = (): bigint => nextId++;

const ident = (name: string): Expr => create(ExprSchema, { id: id(), exprKind: { case: 'identExpr', value: { name } } });
const call = (fn: string, args: Expr[]): Expr => create(ExprSchema, { id: id(), exprKind: { case: 'callExpr', value: { function: fn, args } } });
const constant = (value: { case: 'boolValue'; value: boolean } | { case: 'int64Value'; value: bigint }): Expr =>
  create(ExprSchema, { id: id(), exprKind: { case: 'constExpr', value: { constantKind: value } } });
const list = (elements: Expr[]): Expr => create(ExprSchema, { id: id(), exprKind: { case: 'listExpr', value: { elements } } });
const index = (e: Expr, i: number): Expr => call('_[_]', [e, constant({ case: 'int64Value', value: BigInt(i) })]);

const ACCU = '@result';
const ITER = '@kv';

/** Replaces identifiers K and V in E (not where a nested comprehension rebinds them) by `@kv[0]`, `@kv[1]`. */
function substitute(e: Expr, k: string, v: string): Expr {
  const x = e.exprKind;
  switch (x.case) {
    case 'identExpr':
      if (x.value.name === k) return index(ident(ITER), 0);
      if (x.value.name === v) return index(ident(ITER), 1);
      return e;
    case 'selectExpr':
      if (x.value.operand !== undefined) x.value.operand = substitute(x.value.operand, k, v);
      return e;
    case 'callExpr':
      if (x.value.target !== undefined) x.value.target = substitute(x.value.target, k, v);
      x.value.args = x.value.args.map((a) => substitute(a, k, v));
      return e;
    case 'listExpr':
      x.value.elements = x.value.elements.map((a) => substitute(a, k, v));
      return e;
    case 'structExpr':
      for (const entry of x.value.entries) {
        if (entry.keyKind.case === 'mapKey') entry.keyKind.value = substitute(entry.keyKind.value, k, v);
        if (entry.value !== undefined) entry.value = substitute(entry.value, k, v);
      }
      return e;
    case 'comprehensionExpr': {
      const c = x.value;
      if (c.iterRange !== undefined) c.iterRange = substitute(c.iterRange, k, v);
      if (c.accuInit !== undefined) c.accuInit = substitute(c.accuInit, k, v);
      const bound = new Set([c.iterVar, c.iterVar2, c.accuVar]);
      if (bound.has(k) || bound.has(v)) return e;
      for (const part of ['loopCondition', 'loopStep', 'result'] as const) {
        const p = c[part];
        if (p !== undefined) c[part] = substitute(p, k, v);
      }
      return e;
    }
    default:
      return e;
  }
}

const MACROS = new Set(['all', 'exists', 'exists_one', 'transformList', 'transformMap', 'transformMapEntry']);

/** The expansion of E when it is a two-variable macro call, else undefined. */
export function expandTwoVarMacro(e: Expr): Expr | undefined {
  const x = e.exprKind;
  if (x.case !== 'callExpr' || x.value.target === undefined || !MACROS.has(x.value.function)) return undefined;
  const args = x.value.args;
  const [kArg, vArg] = args;
  const arity = x.value.function === 'transformList' || x.value.function === 'transformMap' ? [3, 4] : [3];
  if (!arity.includes(args.length) || kArg?.exprKind.case !== 'identExpr' || vArg?.exprKind.case !== 'identExpr') return undefined;
  const k = kArg.exprKind.value.name;
  const v = vArg.exprKind.value.name;
  const body = args.slice(2).map((a) => substitute(a, k, v));
  const accu = (): Expr => ident(ACCU);
  let init: Expr;
  let cond: Expr = constant({ case: 'boolValue', value: true });
  let step: Expr;
  let result: Expr = accu();
  const [first, second] = body;
  switch (x.value.function) {
    case 'all':
      init = constant({ case: 'boolValue', value: true });
      cond = call('@not_strictly_false', [accu()]);
      step = call('_&&_', [accu(), first]);
      break;
    case 'exists':
      init = constant({ case: 'boolValue', value: false });
      cond = call('@not_strictly_false', [call('!_', [accu()])]);
      step = call('_||_', [accu(), first]);
      break;
    case 'exists_one':
      init = constant({ case: 'int64Value', value: 0n });
      step = call('_?_:_', [first, call('_+_', [accu(), constant({ case: 'int64Value', value: 1n })]), accu()]);
      result = call('_==_', [accu(), constant({ case: 'int64Value', value: 1n })]);
      break;
    case 'transformList': {
      init = list([]);
      const add = (value: Expr): Expr => call('_+_', [accu(), list([value])]);
      step = second === undefined ? add(first) : call('_?_:_', [first, add(second), accu()]);
      break;
    }
    case 'transformMap': {
      init = call('@emptyMap', []);
      const add = (value: Expr): Expr => call('@mapInsert', [accu(), index(ident(ITER), 0), value]);
      step = second === undefined ? add(first) : call('_?_:_', [first, add(second), accu()]);
      break;
    }
    default:
      init = call('@emptyMap', []);
      step = call('@mapInsertEntry', [accu(), first]);
  }
  return create(ExprSchema, {
    id: e.id,
    exprKind: {
      case: 'comprehensionExpr',
      value: {
        iterRange: call('@pairs', [x.value.target]),
        iterVar: ITER,
        iterVar2: '',
        accuVar: ACCU,
        accuInit: init,
        loopCondition: cond,
        loopStep: step,
        result,
      },
    },
  });
}

/**
 * cel-go's `sortBy` macro (lists extension, version 2+): `l.sortBy(e, key)` binds the list to
 * `@__sortBy_input__` (a comprehension over nothing, as `cel.bind` is) and sorts it by its keys:
 * `@sortByAssociatedKeys(input, input.map(e, key))`; undefined when E is not such a call.
 */
export function expandSortBy(e: Expr): Expr | undefined {
  const x = e.exprKind;
  if (x.case !== 'callExpr' || x.value.function !== 'sortBy' || x.value.target === undefined || x.value.args.length !== 2) return undefined;
  const [v, key] = x.value.args;
  if (v.exprKind.case !== 'identExpr') return undefined;
  const keys = create(ExprSchema, {
    id: id(),
    exprKind: {
      case: 'comprehensionExpr',
      value: {
        iterRange: ident(SORT_BY_INPUT),
        iterVar: v.exprKind.value.name,
        iterVar2: '',
        accuVar: ACCU,
        accuInit: list([]),
        loopCondition: constant({ case: 'boolValue', value: true }),
        loopStep: call('_+_', [ident(ACCU), list([key])]),
        result: ident(ACCU),
      },
    },
  });
  return create(ExprSchema, {
    id: e.id,
    exprKind: {
      case: 'comprehensionExpr',
      value: {
        iterRange: list([]),
        iterVar: '#unused',
        iterVar2: '',
        accuVar: SORT_BY_INPUT,
        accuInit: x.value.target,
        loopCondition: constant({ case: 'boolValue', value: false }),
        loopStep: ident(SORT_BY_INPUT),
        result: call(SORT_BY_KEYS, [ident(SORT_BY_INPUT), keys]),
      },
    },
  });
}

const SORT_BY_INPUT = '@__sortBy_input__';
export const SORT_BY_KEYS = '@sortByAssociatedKeys';
