/**
 * Static cost estimation as cel-go's checker does it (checker/cost.go) in kube-apiserver's CEL
 * environment: every expression gets a cost range and, where it can be known, a size range (of a
 * string, bytes, list or map) and a path saying where its value comes from (`self.spec.items`,
 * `@items` of a range...). Sizes come from literals, from the path (the schema's declared or
 * request-bounded sizes, given by a SizeOracle), from what a call returns, or are unknown
 * (0..2^64-1). Comprehensions multiply the cost of one step by the size of their range; a list or
 * map a comprehension builds is as large as its range. Calls are costed by the extensions'
 * estimators, then kube's library estimator, then cel-go's rules for its standard functions.
 * Costs are exact unsigned 64-bit integers that saturate (bigint), with number views.
 */
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { DYN, INT, STRING, type CelType } from './types.js';
import { OPT_LIST, OPT_MAP } from './source.js';
import { SORT_BY_KEYS } from './macros.js';
import type { SizeOracle } from './schema-sizes.js';
import { appendStep, pathOf, steps, type GoPath } from './cost-paths.js';
import { extensionCallCost, kubeCallCost, type CallEstimate, type CostNode } from './library-cost.js';
import {
  CONST_COST,
  LIST_CREATE_BASE_COST,
  MAP_CREATE_BASE_COST,
  MAX_U64,
  REGEX_STRING_LENGTH_COST_FACTOR as REGEX_FACTOR,
  SELECT_AND_IDENT_COST,
  STRING_TRAVERSAL_COST_FACTOR as STRING_FACTOR,
  UNKNOWN,
  ZERO,
  add,
  fixed,
  mul,
  scale,
  union,
  type Range,
} from './cost-units.js';

export interface CostEstimate {
  /** Smallest and largest cost as numbers (inexact beyond 2^53). */
  min: number;
  max: number;
  /** The exact range, saturated at 2^64-1. */
  exact: Range;
}

/** What is known of the entries of a list or map an expression makes. */
interface EntrySize {
  container: 'list' | 'map' | undefined;
  key: Range;
  val: Range;
}

interface LocalVar {
  path: GoPath | undefined;
  size: Range | undefined;
  entry: EntrySize | undefined;
}

const ACCUMULATORS = new Set(['@result', '__result__']);
/** Capstan expands two-variable comprehensions over `@pairs(range)` with the pair in `@kv`. */
const PAIR_VAR = '@kv';
const PAIRS = '@pairs';
const SCALARS = new Set(['bool', 'double', 'duration', 'int', 'timestamp', 'uint']);
const COMPARABLE = ['int', 'uint', 'double', 'bool', 'duration', 'timestamp', 'string', 'bytes'];

function isScalar(t: CelType): boolean {
  if (SCALARS.has(t.kind)) return true;
  return t.kind === 'optional_type' && t.elem !== undefined && isScalar(t.elem);
}

const toNumber = (r: Range): CostEstimate => ({ min: Number(r.min), max: Number(r.max), exact: r });

/** Estimates EXPR's cost given the TYPES the checker found and, for a CRD rule, the schema's SIZES. */
export function estimateCost(expr: Expr, types: ReadonlyMap<bigint, CelType>, sizes?: SizeOracle): CostEstimate {
  return toNumber(new Coster(types, sizes).cost(expr));
}

class Coster {
  private readonly paths = new Map<bigint, GoPath | undefined>();
  private readonly locals = new Map<string, LocalVar[]>();
  private readonly sizes = new Map<bigint, Range>();
  private readonly entries = new Map<bigint, EntrySize>();
  private readonly typeOverrides = new Map<bigint, CelType>();

  constructor(
    private readonly types: ReadonlyMap<bigint, CelType>,
    private readonly oracle: SizeOracle | undefined,
  ) {}

  cost(e: Expr | undefined): Range {
    if (e === undefined) return ZERO;
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr':
        return fixed(CONST_COST);
      case 'identExpr':
        return this.costIdent(e, k.value.name);
      case 'selectExpr': {
        const sel = k.value;
        if (sel.testOnly) return this.cost(sel.operand); // kube: presence tests cost nothing
        let sum = this.cost(sel.operand);
        const ot = this.typeOf(sel.operand);
        if (ot.kind === 'map' || ot.kind === 'object') sum = add(sum, fixed(SELECT_AND_IDENT_COST));
        this.paths.set(e.id, appendStep(this.pathOf(sel.operand), sel.field));
        return sum;
      }
      case 'callExpr':
        return this.costCall(e);
      case 'listExpr':
        return this.costList(e, k.value.elements);
      case 'structExpr': {
        let sum = ZERO;
        let key: Range = k.value.entries.length === 0 ? ZERO : { min: MAX_U64, max: 0n };
        let val: Range = key;
        for (const en of k.value.entries) {
          if (en.keyKind.case === 'mapKey') {
            sum = add(sum, this.cost(en.keyKind.value));
            key = union(key, this.sizeOrUnknown(en.keyKind.value));
          }
          sum = add(sum, this.cost(en.value));
          val = union(val, this.sizeOrUnknown(en.value));
        }
        this.entries.set(e.id, { container: 'map', key, val });
        return add(sum, fixed(MAP_CREATE_BASE_COST));
      }
      case 'comprehensionExpr':
        return this.isBind(e) ? this.costBind(e) : this.costComprehension(e);
      default:
        return ZERO;
    }
  }

  private typeOf(e: Expr | undefined): CelType {
    if (e === undefined) return DYN;
    return this.typeOverrides.get(e.id) ?? this.types.get(e.id) ?? DYN;
  }

  /** The variable E names: an identifier, or Capstan's `@kv[0]` / `@kv[1]` for a two-variable comprehension. */
  private varName(e: Expr | undefined): string | undefined {
    const k = e?.exprKind;
    if (k?.case === 'identExpr') return k.value.name;
    if (k?.case === 'callExpr' && k.value.function === '_[_]' && k.value.target === undefined) {
      const [a, i] = k.value.args;
      const c = i?.exprKind.case === 'constExpr' ? i.exprKind.value.constantKind : undefined;
      if (a?.exprKind.case === 'identExpr' && a.exprKind.value.name === PAIR_VAR && c?.case === 'int64Value') return `${PAIR_VAR}#${c.value}`;
    }
    return undefined;
  }

  private peek(name: string): LocalVar | undefined {
    const stack = this.locals.get(name);
    return stack === undefined || stack.length === 0 ? undefined : stack[stack.length - 1];
  }

  private push(name: string, v: LocalVar): void {
    const stack = this.locals.get(name) ?? [];
    stack.push(v);
    this.locals.set(name, stack);
  }

  private pop(name: string): void {
    this.locals.get(name)?.pop();
  }

  private costIdent(e: Expr, name: string): Range {
    const v = this.peek(name);
    this.paths.set(e.id, v !== undefined ? v.path : pathOf(name));
    return fixed(SELECT_AND_IDENT_COST);
  }

  private pathOf(e: Expr | undefined): GoPath | undefined {
    if (e === undefined) return undefined;
    const name = this.varName(e);
    if (name !== undefined) {
      const v = this.peek(name);
      if (v !== undefined) return v.path;
    }
    return this.paths.get(e.id);
  }

  private node(e: Expr): CostNode {
    let path = steps(this.pathOf(e));
    if (path !== undefined && path.length > 0 && ACCUMULATORS.has(path[0])) path = undefined;
    return { path, type: this.typeOf(e), expr: e, size: this.computeSize(e) };
  }

  private literalSize(e: Expr): Range | undefined {
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr': {
        const c = k.value.constantKind;
        if (c.case === 'stringValue') return fixed(BigInt([...c.value].length));
        if (c.case === 'bytesValue') return fixed(BigInt(c.value.length));
        if (c.case === undefined) return undefined;
        return fixed(1n);
      }
      case 'listExpr':
        return fixed(BigInt(k.value.elements.length));
      case 'structExpr':
        return fixed(BigInt(k.value.entries.length));
      case 'callExpr':
        if (k.value.function === '@emptyMap') return ZERO;
        return undefined;
      default:
        return undefined;
    }
  }

  private computeSize(e: Expr): Range | undefined {
    const known = this.sizes.get(e.id);
    if (known !== undefined) return known;
    const lit = this.literalSize(e);
    if (lit !== undefined) return lit;
    const path = steps(this.pathOf(e));
    if (this.oracle !== undefined && path !== undefined && path.length > 0) {
      const sz = this.oracle(path);
      if (sz !== undefined) {
        this.sizes.set(e.id, sz);
        return sz;
      }
    }
    if (isScalar(this.typeOf(e))) return fixed(1n);
    const name = this.varName(e);
    if (name !== undefined) {
      const v = this.peek(name);
      if (v?.size !== undefined) return v.size;
    }
    return undefined;
  }

  private sizeOrUnknown(e: Expr | undefined): Range {
    return (e === undefined ? undefined : this.computeSize(e)) ?? UNKNOWN;
  }

  private entryOf(e: Expr | undefined): EntrySize | undefined {
    if (e === undefined) return undefined;
    const known = this.entries.get(e.id);
    if (known !== undefined) return known;
    const name = this.varName(e);
    if (name !== undefined) return this.peek(name)?.entry;
    return undefined;
  }

  private copySizes(dst: Expr, src: Expr): void {
    const sz = this.computeSize(src);
    if (sz !== undefined) this.sizes.set(dst.id, sz);
    const en = this.entryOf(src);
    if (en !== undefined) this.entries.set(dst.id, en);
  }

  private costList(e: Expr, elements: Expr[]): Range {
    let sum = ZERO;
    let item: Range = elements.length === 0 ? ZERO : { min: MAX_U64, max: 0n };
    for (const el of elements) {
      sum = add(sum, this.cost(el));
      item = union(item, this.sizeOrUnknown(el));
    }
    this.entries.set(e.id, { container: 'list', key: fixed(1n), val: item });
    return add(sum, fixed(LIST_CREATE_BASE_COST));
  }

  private containerOf(range: Expr): 'list' | 'map' | undefined {
    const en = this.entryOf(range);
    if (en?.container !== undefined) return en.container;
    return this.typeOf(range).kind === 'list' ? 'list' : 'map';
  }

  private pushLocal(name: string, e: Expr | undefined): void {
    if (e === undefined) return this.push(name, { path: undefined, size: undefined, entry: undefined });
    this.push(name, { path: this.pathOf(e), size: this.computeSize(e), entry: this.entryOf(e) });
  }

  private costComprehension(e: Expr): Range {
    const c = e.exprKind.case === 'comprehensionExpr' ? e.exprKind.value : undefined;
    if (c === undefined) return ZERO;
    // Capstan's `@pairs(range)` with `@kv[0]`, `@kv[1]` is cel-go's two-variable comprehension over range.
    const pairs = c.iterRange?.exprKind.case === 'callExpr' && c.iterRange.exprKind.value.function === PAIRS && c.iterVar === PAIR_VAR;
    const range = pairs && c.iterRange?.exprKind.case === 'callExpr' ? c.iterRange.exprKind.value.args[0] : c.iterRange;
    let sum = add(this.cost(range), this.cost(c.accuInit));
    this.pushLocal(c.accuVar, c.accuInit);
    const iterVars: string[] = [];
    if (range !== undefined) {
      const en = this.entryOf(range);
      const container = this.containerOf(range);
      const path = this.pathOf(range);
      if (pairs) {
        const rt = this.typeOf(range);
        this.push(`${PAIR_VAR}#0`, { path: appendStep(path, container === 'list' ? '@indices' : '@keys'), size: en?.key, entry: undefined });
        this.push(`${PAIR_VAR}#1`, { path: appendStep(path, container === 'list' ? '@items' : '@values'), size: en?.val, entry: undefined });
        iterVars.push(`${PAIR_VAR}#0`, `${PAIR_VAR}#1`);
        this.typePairs(c.loopStep, c.loopCondition, c.result, rt);
      } else {
        const list = container === 'list';
        this.push(c.iterVar, { path: appendStep(path, list ? '@items' : '@keys'), size: list ? en?.val : en?.key, entry: undefined });
        iterVars.push(c.iterVar);
      }
    }
    const loopCost = this.cost(c.loopCondition);
    const stepCost = this.cost(c.loopStep);
    for (const v of iterVars) this.pop(v);
    sum = add(sum, this.cost(c.result));
    this.pop(c.accuVar);
    const rangeCount = this.sizeOrUnknown(range);
    sum = add(sum, mul(rangeCount, add(stepCost, loopCost)));
    const init = c.accuInit;
    const initKind = init?.exprKind.case;
    if (initKind === 'constExpr') {
      const sz = init === undefined ? undefined : this.computeSize(init);
      if (sz !== undefined) this.sizes.set(e.id, sz);
    } else if (initKind === 'listExpr' || initKind === 'structExpr' || (initKind === 'callExpr' && isEmptyMap(init))) {
      this.sizes.set(e.id, rangeCount);
      const stepEntry = this.entryOf(c.loopStep);
      if (stepEntry !== undefined) this.entries.set(e.id, stepEntry);
    }
    return sum;
  }

  /** Gives `@kv[0]` and `@kv[1]` in PARTS the key and value types of a range of type RT, as cel-go types them. */
  private typePairs(...partsAndType: (Expr | CelType | undefined)[]): void {
    const rt = partsAndType.pop() as CelType;
    const keyType = rt.kind === 'list' ? INT : rt.kind === 'map' ? (rt.key ?? DYN) : rt.kind === 'object' ? STRING : DYN;
    const valType = rt.elem ?? DYN;
    const visit = (e: Expr | undefined): void => {
      if (e === undefined) return;
      const name = this.varName(e);
      if (name === `${PAIR_VAR}#0`) this.typeOverrides.set(e.id, keyType);
      if (name === `${PAIR_VAR}#1`) this.typeOverrides.set(e.id, valType);
      const k = e.exprKind;
      if (k.case === 'selectExpr') visit(k.value.operand);
      else if (k.case === 'callExpr') {
        visit(k.value.target);
        k.value.args.forEach(visit);
      } else if (k.case === 'listExpr') k.value.elements.forEach(visit);
      else if (k.case === 'structExpr')
        k.value.entries.forEach((en) => {
          if (en.keyKind.case === 'mapKey') visit(en.keyKind.value);
          visit(en.value);
        });
    };
    for (const p of partsAndType as (Expr | undefined)[]) visit(p);
  }

  /** cel-go's `cel.bind` shape (sortBy expands to one): an empty range, a false condition, a named accumulator. */
  private isBind(e: Expr): boolean {
    if (e.exprKind.case !== 'comprehensionExpr') return false;
    const c = e.exprKind.value;
    const r = c.iterRange?.exprKind;
    const cond = c.loopCondition?.exprKind;
    return (
      r?.case === 'listExpr' &&
      r.value.elements.length === 0 &&
      cond?.case === 'constExpr' &&
      cond.value.constantKind.case === 'boolValue' &&
      cond.value.constantKind.value === false &&
      c.accuVar !== '__result__'
    );
  }

  private costBind(e: Expr): Range {
    const c = e.exprKind.case === 'comprehensionExpr' ? e.exprKind.value : undefined;
    if (c === undefined) return ZERO;
    let sum = add(this.cost(c.iterRange), this.cost(c.accuInit));
    this.pushLocal(c.accuVar, c.accuInit);
    sum = add(sum, this.cost(c.result));
    this.pop(c.accuVar);
    if (c.result !== undefined) this.copySizes(e, c.result);
    return sum;
  }

  private costCall(e: Expr): Range {
    if (e.exprKind.case !== 'callExpr') return ZERO;
    const callExpr = e.exprKind.value;
    let fn = callExpr.function;
    let targetExpr = callExpr.target;
    let argExprs = callExpr.args;
    // Capstan's pair variables are cel-go's iteration variables.
    const pairVar = this.varName(e);
    if (pairVar !== undefined && pairVar.startsWith(`${PAIR_VAR}#`)) return this.costIdent(e, pairVar);
    if (fn === 'dyn' && argExprs.length === 1) {
      const argCost = this.cost(argExprs[0]);
      this.copySizes(e, argExprs[0]);
      return add(fixed(1n), argCost);
    }
    // An optional literal (`[?x]`, `{?k: v}`) is the literal.
    if (fn === OPT_LIST || fn === OPT_MAP) {
      const c = this.cost(argExprs[0]);
      if (argExprs[0] !== undefined) this.copySizes(e, argExprs[0]);
      return c;
    }
    if (fn === '@emptyMap') {
      this.entries.set(e.id, { container: 'map', key: ZERO, val: ZERO });
      return fixed(MAP_CREATE_BASE_COST);
    }
    // cel-go's sortBy calls `list.@sortByAssociatedKeys(keys)`.
    if (fn === SORT_BY_KEYS && targetExpr === undefined && argExprs.length === 2) {
      targetExpr = argExprs[0];
      argExprs = argExprs.slice(1);
    }
    if (fn === '@mapInsert' || fn === '@mapInsertEntry') fn = 'cel.@mapInsert';
    const argCosts: Range[] = [];
    const args: CostNode[] = [];
    for (const a of argExprs) {
      argCosts.push(this.cost(a));
      args.push(this.node(a));
    }
    let sum = ZERO;
    let target: CostNode | undefined;
    if (targetExpr !== undefined) {
      sum = add(sum, this.cost(targetExpr));
      target = this.node(targetExpr);
    }
    let fnCost: Range = { min: MAX_U64, max: 0n };
    let resultSize: Range | undefined;
    for (const overload of this.overloads(fn, target, args)) {
      const est = this.functionCost(e, fn, overload, target, args, argCosts);
      fnCost = union(fnCost, est.cost);
      if (est.resultSize !== undefined) resultSize = resultSize === undefined ? est.resultSize : union(resultSize, est.resultSize);
      if ((overload === 'index_list' || overload === 'index_map') && argExprs.length > 0) {
        resultSize = this.entryOf(argExprs[0])?.val;
        this.paths.set(e.id, appendStep(this.pathOf(argExprs[0]), overload === 'index_list' ? '@items' : '@values'));
      }
      if (resultSize === undefined) resultSize = this.computeSize(e);
    }
    if (resultSize !== undefined) this.sizes.set(e.id, resultSize);
    return add(sum, fnCost);
  }

  /** The overloads of FN the checker would find for these operands, as far as costs tell them apart. */
  private overloads(fn: string, target: CostNode | undefined, args: CostNode[]): string[] {
    const kind = (n: CostNode | undefined): string => n?.type.kind ?? 'dyn';
    const [a0, a1] = args;
    const either = (k: string): boolean => kind(a0) === k || kind(a1) === k;
    const bothDyn = kind(a0) === 'dyn' && kind(a1) === 'dyn';
    // The lists extension's functions are on lists only: a dyn target may be one.
    const listLike = (n: CostNode | undefined): boolean => kind(n) === 'list' || kind(n) === 'dyn';
    switch (fn) {
      case '_[_]':
        if (kind(a0) === 'list') return ['index_list'];
        if (kind(a0) === 'map') return ['index_map'];
        if (kind(a0) === 'dyn') return ['index_list', 'index_map'];
        return [fn];
      case '_+_':
        if (bothDyn) return ['add_other', 'add_string', 'add_bytes', 'add_list'];
        if (either('string')) return ['add_string'];
        if (either('bytes')) return ['add_bytes'];
        if (either('list')) return ['add_list'];
        return ['add_other'];
      case '_<_':
      case '_<=_':
      case '_>_':
      case '_>=_':
        if (bothDyn) return ['compare_other', 'compare_string'];
        if (either('string') || either('bytes')) return ['compare_string'];
        return ['compare_other'];
      case '_==_':
      case '_!=_':
        return ['equals'];
      case '@in':
        if (kind(a1) === 'list') return ['in_list'];
        if (kind(a1) === 'dyn') return ['in_list', 'in_map'];
        return ['in_map'];
      case 'startsWith':
      case 'endsWith':
        return target !== undefined ? ['starts_with_string'] : [fn];
      case 'contains':
        return target !== undefined ? ['contains_string'] : [fn];
      case 'matches':
        return target !== undefined ? ['matches_string'] : [fn];
      case 'format':
        return target !== undefined && kind(target) === 'string' ? ['ext_format_string'] : [fn];
      case 'bytes':
        if (kind(a0) === 'dyn') return [fn, 'string_to_bytes'];
        return kind(a0) === 'string' ? ['string_to_bytes'] : [fn];
      case 'string':
        if (kind(a0) === 'dyn') return [fn, 'bytes_to_string'];
        return kind(a0) === 'bytes' ? ['bytes_to_string'] : [fn];
      case 'strings.quote':
        return ['strings_quote'];
      case '_&&_':
      case '_||_':
        return ['logical'];
      case '_?_:_':
        return ['conditional'];
      case 'slice':
        return listLike(target) ? ['list_slice'] : [fn];
      case 'flatten':
        return listLike(target) ? [args.length === 1 ? 'list_flatten_int' : 'list_flatten'] : [fn];
      case 'lists.range':
        return ['lists_range'];
      case 'reverse':
        return listLike(target) ? ['list_reverse'] : [fn];
      case 'distinct':
        return listLike(target) ? ['list_distinct'] : [fn];
      case 'sort':
        return listLike(target) ? comparableOverloads(target?.type.elem, 'sort') : [fn];
      case SORT_BY_KEYS:
        return a0?.type.kind === 'list' ? comparableOverloads(a0.type.elem, 'sortByAssociatedKeys') : [fn];
      case 'sets.contains':
        return ['list_sets_contains_list'];
      case 'sets.intersects':
        return ['list_sets_intersects_list'];
      case 'sets.equivalent':
        return ['list_sets_equivalent_list'];
      case 'ip':
        return target !== undefined ? ['cidr_ip'] : [fn];
      case 'containsIP':
      case 'containsCIDR':
        return [kind(a0) === 'string' ? `${fn}_string` : fn];
      default:
        return [fn];
    }
  }

  private functionCost(e: Expr, fn: string, overload: string, target: CostNode | undefined, args: CostNode[], argCosts: Range[]): CallEstimate {
    const argSum = (): Range => argCosts.reduce(add, ZERO);
    const withArgs = (est: CallEstimate | undefined): CallEstimate | undefined =>
      est === undefined ? undefined : { cost: add(est.cost, argSum()), resultSize: est.resultSize };
    const sizeOf = (n: CostNode): Range => n.size ?? this.byPath(n) ?? UNKNOWN;
    const known = withArgs(extensionCallCost(overload, sizeOf, target, args)) ?? withArgs(kubeCallCost(fn, overload, sizeOf, target, args));
    if (known !== undefined) return known;
    const sized = (n: CostNode): Range => n.size ?? UNKNOWN;
    switch (overload) {
      case 'ext_format_string':
        if (target !== undefined) return { cost: add(scale(sized(target), STRING_FACTOR), argSum()) };
        break;
      case 'string_to_bytes':
        if (args.length === 1) {
          const sz = sized(args[0]);
          return { cost: add(scale(sz, STRING_FACTOR), argSum()), resultSize: { min: sz.min, max: mulMax(sz.max, 4n) } };
        }
        break;
      case 'bytes_to_string':
        if (args.length === 1) {
          const sz = sized(args[0]);
          return { cost: add(scale(sz, STRING_FACTOR), argSum()), resultSize: { min: sz.min / 4n, max: sz.max } };
        }
        break;
      case 'strings_quote':
        if (args.length === 1) {
          const sz = sized(args[0]);
          return { cost: add(scale(sz, STRING_FACTOR), argSum()), resultSize: { min: sz.min + 2n, max: sz.max * 2n + 2n } };
        }
        break;
      case 'starts_with_string':
        if (args.length === 1) return { cost: add(scale(sized(args[0]), STRING_FACTOR), argSum()) };
        break;
      case 'in_list':
        if (args.length === 2) return { cost: add(scale(sized(args[1]), 1), argSum()) };
        break;
      case 'matches_string':
        if (target !== undefined && args.length === 1) {
          const strCost = scale(add(sized(target), fixed(1n)), STRING_FACTOR);
          const regexCost = scale(sized(args[0]), REGEX_FACTOR);
          return { cost: add(mul(strCost, regexCost), argSum()) };
        }
        break;
      case 'contains_string':
        if (target !== undefined && args.length === 1) {
          const strCost = scale(sized(target), STRING_FACTOR);
          const subCost = scale(sized(args[0]), STRING_FACTOR);
          return { cost: add(mul(strCost, subCost), argSum()) };
        }
        break;
      case 'logical': {
        const [lhs, rhs] = argCosts;
        return { cost: { min: lhs.min, max: add(lhs, rhs).max } };
      }
      case 'conditional': {
        const size = union(sized(args[1]), sized(args[2]));
        const a = this.entryOf(args[1].expr);
        const b = this.entryOf(args[2].expr);
        if (a !== undefined && b !== undefined) this.entries.set(e.id, { container: a.container, key: union(a.key, b.key), val: union(a.val, b.val) });
        return { cost: add(argCosts[0], union(argCosts[1], argCosts[2])), resultSize: size };
      }
      case 'add_string':
      case 'add_bytes':
      case 'add_list':
        if (args.length === 2) {
          const resultSize = add(sized(args[0]), sized(args[1]));
          const a = this.entryOf(args[0].expr);
          const b = this.entryOf(args[1].expr);
          if (a !== undefined && b !== undefined) this.entries.set(e.id, { container: a.container, key: union(a.key, b.key), val: union(a.val, b.val) });
          if (overload === 'add_list') return { cost: add(fixed(1n), argSum()), resultSize };
          return { cost: add(scale(resultSize, STRING_FACTOR), argSum()), resultSize };
        }
        break;
      case 'compare_string':
      case 'equals': {
        if (overload === 'compare_string' && !isStringLike(args[0]?.type) && !isStringLike(args[1]?.type) && args[0]?.type.kind !== 'dyn') break;
        const l = sized(args[0]);
        const r = sized(args[1]);
        const smallestMax = r.max < l.max ? r.max : l.max;
        return { cost: add(scale({ min: smallestMax > 0n ? 1n : 0n, max: smallestMax }, STRING_FACTOR), argSum()) };
      }
    }
    return { cost: add(fixed(1n), argSum()) };
  }

  private byPath(n: CostNode): Range | undefined {
    if (this.oracle === undefined || n.path === undefined || n.path.length === 0) return undefined;
    return this.oracle(n.path);
  }
}

const isStringLike = (t: CelType | undefined): boolean => t?.kind === 'string' || t?.kind === 'bytes';

function mulMax(a: bigint, b: bigint): bigint {
  // cel-go multiplies without a guard here; a uint64 product wraps.
  return BigInt.asUintN(64, a * b);
}

function isEmptyMap(e: Expr | undefined): boolean {
  return e?.exprKind.case === 'callExpr' && e.exprKind.value.function === '@emptyMap';
}

/** The overloads of a lists-extension function over a list of ELEM: one per comparable type it may be. */
function comparableOverloads(elem: CelType | undefined, name: string): string[] {
  const k = elem?.kind ?? 'dyn';
  if (k === 'dyn') return COMPARABLE.map((t) => `list_${t}_${name}`);
  return [`list_${k}_${name}`];
}
