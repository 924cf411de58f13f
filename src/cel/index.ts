/**
 * Capstan's CEL: compile an expression against declared variables (parse, kube's optional syntax,
 * type check, static cost estimate) and evaluate it with kube's runtime cost limit. Evaluation is
 * @bufbuild/cel's; type checking, cost and the Kubernetes libraries are Capstan's (src/cel/*).
 *
 *   const c = compileExpression('self.replicas <= self.max', { variables: { self: typeFromSchema(schema) } });
 *   if (!c.ok) c.errors;                       // ["ERROR: <input>:1:5: undefined field 'replicas'\n | ..."]
 *   const r = evaluate(c.program, { self: toCelInput(obj, c.variables.self) });
 *   if (r.error === undefined) r.value;        // a CEL value; fromCel(r.value) is JSON
 */
import { celEnv, parse, plan, type CelEnv, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { create } from '@bufbuild/protobuf';
import { Expr_CallSchema as CallSchema, ExprSchema, type Expr, type ParsedExpr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { RE2JS } from '@bufbuild/re2';
import { checkExpr, TYPED_OBJECTS, type CheckIssue } from './checker.js';
import { estimateCost, type CostEstimate } from './cost.js';
import { celGoOffset, formatIssue, OPT_ELEM, OPT_INDEX, OPT_KEY, OPT_LIST, OPT_MAP, OPT_SELECT, rewriteOptionalSyntax } from './source.js';
import { expandSortBy, expandTwoVarMacro, SORT_BY_KEYS } from './macros.js';
import { DECLARATIONS } from './declarations.js';
import type { CelType } from './types.js';
import type { SizeOracle } from './schema-sizes.js';
import { buildFuncs, CelEvalError } from './library/registry.js';
import { callCost, RuntimeCost } from './runtime-cost.js';
import './library/optionals.js';
import './library/lists.js';
import { stringOverrides } from './library/strings.js';
import { equalityOverrides } from './library/equality.js';
import { listConcatOverride } from './library/list-append.js';
import './library/regex.js';
import './library/urls.js';
import './library/quantity.js';
import './library/net.js';
import './library/format.js';
import './library/semver.js';
import './library/authz.js';

export * from './types.js';
export { typeForKind } from './kind-types.js';
export { toCelInput, fromCel, optionalValue } from './values.js';
export { authorizerValue, requestResourceValue, type AuthorizerBackend, type AuthzAttributes, type AuthzDecision } from './library/authz.js';
export { estimateCost, type CostEstimate } from './cost.js';
export { schemaSizes, unboundedCardinality, type SizeOracle } from './schema-sizes.js';

import { PER_CALL_LIMIT } from './limits.js';

export { PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET } from './limits.js';

/** The syntax tree of CEL source, unchecked (@bufbuild/cel's parser; throws on a syntax error). */
export function parseSource(source: string): ParsedExpr {
  return parse(source);
}

export interface CompileEnv {
  /** Declared variables and their types (dyn when unknown): `self`, `oldSelf`, `object`, `request`, ... */
  variables: Record<string, CelType>;
  /** What the schema says of the sizes of the variables' values (CRD rules), for the cost estimate. */
  sizes?: SizeOracle;
}

export interface Program {
  source: string;
  /** The type the expression evaluates to. */
  outputType: CelType;
  /** Runs the planned expression on ACTIVATION. */
  run: (activation: Record<string, unknown>) => CelValue | Error;
}

export interface CompileResult {
  ok: boolean;
  program?: Program;
  /** Issues in cel-go's rendering (`ERROR: <input>:1:5: undefined field 'x'\n | self.x\n | ....^`). */
  errors: string[];
  /** Static cost estimate (kube's cost units), when the expression checked. */
  estimatedCost?: CostEstimate;
  outputType?: CelType;
}

export interface EvalOptions {
  /** Cost units the evaluation may spend (default PER_CALL_LIMIT). */
  costBudget?: number;
}

export type EvalResult =
  { value: CelValue; error?: undefined; cost: number; exceeded?: undefined } | { value?: undefined; error: string; cost: number; exceeded?: boolean };

let env: CelEnv | undefined;

function baseEnv(): CelEnv {
  if (env === undefined) {
    const funcs = [...strings, ...stringOverrides, ...equalityOverrides(), ...listConcatOverride, ...buildFuncs()];
    env = withCostTracking(celEnv({ funcs, re2: { compile: (p: string) => compileRegex(p) } }));
  }
  return env;
}

/** ENV with every function call charged to the current evaluation's cost tracker. */
function withCostTracking(base: CelEnv): CelEnv {
  const groups = new Map<string, unknown>();
  const funcs = {
    [Symbol.iterator]: () => base.funcs[Symbol.iterator](),
    find(name: string) {
      if (groups.has(name)) return groups.get(name);
      const group = base.funcs.find(name);
      const wrapped =
        group === undefined
          ? undefined
          : {
              name: group.name,
              [Symbol.iterator]: () => group[Symbol.iterator](),
              call(id: number, target: CelValue | undefined, args: CelValue[]) {
                // cel-go charges a call once it returned (some costs depend on the result), errors included.
                let result: CelValue | undefined;
                try {
                  result = group.call(id, target, args) as CelValue | undefined;
                  return result;
                } finally {
                  if (chargedCall(id)) RuntimeCost.charge(callCost(name, target, args, result, dynamicCall(id)));
                }
              },
            };
      groups.set(name, wrapped);
      return wrapped;
    },
  };
  return { namespace: base.namespace, registry: base.registry, variables: base.variables, funcs } as unknown as CelEnv;
}

const regexCache = new Map<string, { test: (s: string) => boolean }>();

function compileRegex(pattern: string): { test: (s: string) => boolean } {
  let m = regexCache.get(pattern);
  if (m === undefined) {
    const re = RE2JS.compile(pattern);
    m = { test: (s: string) => re.test(s) };
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, m);
  }
  return m;
}

const NAMESPACES = new Set(['optional', 'sets', 'lists', 'strings', 'format', 'ip']);

/**
 * Rewrites the parsed tree for the evaluator: namespaced functions (`optional.of(x)`) become calls
 * of their full name when the namespace is not a variable, and typed object construction
 * (`Object{spec: Object.spec{...}}`, used by mutating policies) becomes a map literal.
 */
function rewriteTree(e: Expr, variables: Record<string, CelType>, scope: Set<string>): void {
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr':
      if (k.value.operand !== undefined) rewriteTree(k.value.operand, variables, scope);
      return;
    case 'callExpr': {
      const expanded = expandTwoVarMacro(e) ?? expandSortBy(e);
      if (expanded !== undefined) {
        e.exprKind = expanded.exprKind;
        rewriteTree(e, variables, scope);
        return;
      }
      const t = k.value.target;
      if (
        t?.exprKind.case === 'identExpr' &&
        NAMESPACES.has(t.exprKind.value.name) &&
        !(t.exprKind.value.name in variables) &&
        !scope.has(t.exprKind.value.name)
      ) {
        k.value.function = `${t.exprKind.value.name}.${k.value.function}`;
        k.value.target = undefined;
      } else if (t !== undefined) rewriteTree(t, variables, scope);
      for (const a of k.value.args) rewriteTree(a, variables, scope);
      return;
    }
    case 'listExpr':
      for (const a of k.value.elements) rewriteTree(a, variables, scope);
      markOptionalElements(e);
      return;
    case 'structExpr':
      markOptionalEntries(e);
      if (k.value.messageName !== '') {
        k.value.messageName = '';
        TYPED_OBJECTS.add(e);
        for (const entry of k.value.entries) {
          if (entry.keyKind.case === 'fieldKey') {
            const key = create(ExprSchema, {
              id: entry.id,
              exprKind: { case: 'constExpr', value: { constantKind: { case: 'stringValue', value: entry.keyKind.value } } },
            });
            entry.keyKind = { case: 'mapKey', value: key };
          }
        }
      }
      for (const entry of k.value.entries) {
        if (entry.keyKind.case === 'mapKey') rewriteTree(entry.keyKind.value, variables, scope);
        if (entry.value !== undefined) rewriteTree(entry.value, variables, scope);
      }
      return;
    case 'comprehensionExpr': {
      const c = k.value;
      if (c.iterRange !== undefined) rewriteTree(c.iterRange, variables, scope);
      if (c.accuInit !== undefined) rewriteTree(c.accuInit, variables, scope);
      const inner = new Set([...scope, c.iterVar, c.iterVar2, c.accuVar]);
      for (const part of [c.loopCondition, c.loopStep, c.result]) if (part !== undefined) rewriteTree(part, variables, inner);
      return;
    }
    default:
      return;
  }
}

/** The argument of a `MARKER(x)` call the source rewrite made, or undefined. */
function markedArg(e: Expr | undefined, marker: string): Expr | undefined {
  const k = e?.exprKind;
  return k?.case === 'callExpr' && k.value.function === marker && k.value.target === undefined && k.value.args.length === 1 ? k.value.args[0] : undefined;
}

const intConst = (v: number): Expr =>
  create(ExprSchema, { id: nextSyntheticId++, exprKind: { case: 'constExpr', value: { constantKind: { case: 'int64Value', value: BigInt(v) } } } });
let nextSyntheticId = 1n << 41n;

/** `[?a, b]`: the list becomes `@optList([a, b], [0])`, which drops absent optionals and unwraps present ones. */
function markOptionalElements(e: Expr): void {
  const k = e.exprKind;
  if (k.case !== 'listExpr') return;
  const optional: number[] = [];
  k.value.elements = k.value.elements.map((el, i) => {
    const inner = markedArg(el, OPT_ELEM);
    if (inner === undefined) return el;
    optional.push(i);
    return inner;
  });
  if (optional.length === 0) return;
  const list = create(ExprSchema, { id: nextSyntheticId++, exprKind: { case: 'listExpr', value: { elements: k.value.elements } } });
  const indexes = create(ExprSchema, { id: nextSyntheticId++, exprKind: { case: 'listExpr', value: { elements: optional.map(intConst) } } });
  e.exprKind = { case: 'callExpr', value: create(CallSchema, { function: OPT_LIST, args: [list, indexes] }) };
}

/** `{?k: v}`: the map becomes `@optMap({k: v}, [0])`, which drops absent optional values and unwraps present ones. */
function markOptionalEntries(e: Expr): void {
  const k = e.exprKind;
  if (k.case !== 'structExpr') return;
  const optional: number[] = [];
  k.value.entries.forEach((entry, i) => {
    const inner = entry.keyKind.case === 'mapKey' ? markedArg(entry.keyKind.value, OPT_KEY) : undefined;
    if (inner === undefined) return;
    entry.keyKind = { case: 'mapKey', value: inner };
    optional.push(i);
  });
  if (optional.length === 0 || k.value.messageName !== '') return;
  const map = create(ExprSchema, { id: nextSyntheticId++, exprKind: { case: 'structExpr', value: k.value } });
  const indexes = create(ExprSchema, { id: nextSyntheticId++, exprKind: { case: 'listExpr', value: { elements: optional.map(intConst) } } });
  e.exprKind = { case: 'callExpr', value: create(CallSchema, { function: OPT_MAP, args: [map, indexes] }) };
}

/**
 * Prepares the checked tree for evaluation under cel-go's runtime cost tracking: every identifier
 * and field selection is wrapped in `@charge(...)` (1 unit each time it is evaluated), list and map
 * literals in `@charge(literal, 10 or 30)`; calls are charged by the evaluator's function wrapper.
 * Capstan's own helper shapes cost what cel-go's native ones do (`@kv[i]` is one variable read).
 * An index of an optional value (`a.?b[k]`, optional chaining) becomes an optional index.
 */
const CHARGE = '@charge';

/** An attribute in cel-go's planner: a variable, then field selections and indexes. */
function isAttribute(e: Expr | undefined): boolean {
  const k = e?.exprKind;
  if (k?.case === 'identExpr') return true;
  if (k?.case === 'selectExpr') return !k.value.testOnly && isAttribute(k.value.operand);
  return k?.case === 'callExpr' && k.value.function === '_[_]' && k.value.target === undefined && isAttribute(k.value.args[0]);
}

/** Whether cel-go's optimizer evaluates E when planning (constants, literals and calls of them): E then costs nothing. */
function isFoldable(e: Expr | undefined): boolean {
  const k = e?.exprKind;
  if (k?.case === 'constExpr') return true;
  if (k?.case === 'listExpr') return k.value.elements.every(isFoldable);
  if (k?.case === 'structExpr') return k.value.entries.every((en) => (en.keyKind.case !== 'mapKey' || isFoldable(en.keyKind.value)) && isFoldable(en.value));
  if (k?.case === 'callExpr') return FOLDED_CALLS.has(k.value.function) && k.value.target === undefined && k.value.args.every(isFoldable);
  return false;
}

/** The calls of constants cel-go's optimizer evaluates when planning. */
const FOLDED_CALLS = new Set(['timestamp', 'duration', 'optional.none']);

/** The variable an attribute starts from. */
function attributeRoot(e: Expr): Expr | undefined {
  const k = e.exprKind;
  if (k.case === 'identExpr') return e;
  if (k.case === 'selectExpr' && k.value.operand !== undefined) return attributeRoot(k.value.operand);
  if (k.case === 'callExpr' && k.value.args[0] !== undefined) return attributeRoot(k.value.args[0]);
  return undefined;
}

/** Variables read as the branch of a conditional: cel-go does not charge the read itself. */
const uncharged = new WeakSet<Expr>();

/** Calls with an id from here on are not charged (cel-go folds them or makes them part of an attribute). */
const FREE_CALL_IDS = 1n << 50n;
let nextFreeCallId = FREE_CALL_IDS;
/** Whether the call with expression id ID is charged by the cost tracker. */
export const chargedCall = (id: number): boolean => id < Number(FREE_CALL_IDS);
/** Calls with an id in [DYNAMIC_CALL_IDS, FREE_CALL_IDS) are dispatched by cel-go at runtime (see isDynamicCall). */
const DYNAMIC_CALL_IDS = 1n << 49n;
let nextDynamicCallId = DYNAMIC_CALL_IDS;
/** Whether the call with expression id ID is one cel-go dispatches at runtime, charging it without its overload's rule. */
export const dynamicCall = (id: number): boolean => id >= Number(DYNAMIC_CALL_IDS) && id < Number(FREE_CALL_IDS);

/** Functions with an overload per element type in cel-go (one declaration here). */
const PER_TYPE_OVERLOADS = new Set(['sort', SORT_BY_KEYS]);

/**
 * Whether cel-go leaves the overload of this call to runtime: an operand is dyn and the function
 * has several overloads of its shape. cel-go then charges it by kube's library rule or 1.
 */
function isDynamicCall(fn: string, target: Expr | undefined, args: Expr[], types: ReadonlyMap<bigint, CelType>): boolean {
  const dyn = (e: Expr | undefined): boolean => e !== undefined && types.get(e.id)?.kind === 'dyn';
  // The operands that pick the overload: a method's receiver, else every argument (a membership's container).
  const deciding = fn === '@in' ? [args[1]] : target !== undefined ? [target] : args;
  if (fn === '_==_' || fn === '_!=_' || deciding.length === 0 || !deciding.every(dyn)) return false;
  if (PER_TYPE_OVERLOADS.has(fn)) return true;
  const decls = DECLARATIONS.get(fn);
  if (decls === undefined) return fn.startsWith('_') || fn === '@in';
  return decls.filter((d) => (d.receiver !== undefined) === (target !== undefined) && d.args.length === args.length).length > 1;
}

/** `a.b.c` of an identifier followed by selections (a variable may be declared with such a name). */
function dottedName(e: Expr): string | undefined {
  const k = e.exprKind;
  if (k.case === 'identExpr') return k.value.name;
  if (k.case === 'selectExpr' && !k.value.testOnly && k.value.operand !== undefined) {
    const base = dottedName(k.value.operand);
    return base === undefined ? undefined : `${base}.${k.value.field}`;
  }
  return undefined;
}

function instrument(e: Expr | undefined, types: ReadonlyMap<bigint, CelType>, variables: ReadonlySet<string> = new Set()): void {
  if (e === undefined) return;
  const k = e.exprKind;
  const charge = (amount?: number): void => {
    const inner = create(ExprSchema, { id: nextSyntheticId++, exprKind: e.exprKind });
    const args =
      amount === undefined
        ? [inner]
        : [
            inner,
            create(ExprSchema, {
              id: nextSyntheticId++,
              exprKind: { case: 'constExpr', value: { constantKind: { case: 'int64Value', value: BigInt(amount) } } },
            }),
          ];
    e.exprKind = { case: 'callExpr', value: create(CallSchema, { function: CHARGE, args }) };
  };
  const free = (): void => {
    e.id = nextFreeCallId++;
  };
  if (isFoldable(e) && k.case !== 'constExpr') {
    if (k.case === 'callExpr') free();
    return;
  }
  switch (k.case) {
    case 'identExpr':
      if (k.value.name === '@kv' || types.get(e.id)?.kind === 'type' || uncharged.has(e)) return;
      charge();
      return;
    case 'selectExpr': {
      // A variable declared with a dotted name (`authorizer.requestResource`) is read as one.
      const dotted = dottedName(e);
      if (dotted !== undefined && variables.has(dotted)) {
        charge();
        return;
      }
      // A presence test of an attribute is one unit (kube's PresenceTestHasCost(false) takes back the test's own).
      if (k.value.testOnly && isAttribute(k.value.operand)) {
        charge();
        return;
      }
      instrument(k.value.operand, types, variables);
      if (!k.value.testOnly) charge();
      return;
    }
    case 'callExpr': {
      const c = k.value;
      if (c.function === '_[_]' && c.target === undefined && c.args.length === 2 && types.get(c.args[0].id)?.kind === 'optional_type') {
        c.function = OPT_INDEX;
        c.target = c.args[0];
        c.args = [c.args[1]];
      }
      const onAttribute = isAttribute(c.target ?? c.args[0]);
      if (c.function === '_?_:_')
        for (const branch of c.args.slice(1)) {
          const root = isAttribute(branch) ? attributeRoot(branch) : undefined;
          if (root !== undefined) uncharged.add(root);
        }
      instrument(c.target, types, variables);
      // An optional literal's second argument lists its optional positions: not part of the expression.
      (c.function === OPT_LIST || c.function === OPT_MAP ? c.args.slice(0, 1) : c.args).forEach((x) => instrument(x, types, variables));
      // Optional selections and indexes of an attribute are qualifiers of it; membership in a constant list a set lookup.
      if (((c.function === OPT_SELECT || c.function === OPT_INDEX) && onAttribute) || (c.function === '@in' && isFoldable(c.args[1]))) free();
      else if (c.function !== '_[_]' && isDynamicCall(c.function, c.target, c.args, types)) e.id = nextDynamicCallId++;
      // Calls the evaluator here makes natively: all/exists's loop condition; indexing (a qualifier in cel-go:
      // one unit with a constant key, none with a variable's, two on a value that is not an attribute).
      if (c.function === '@not_strictly_false') charge();
      if (c.function === '_[_]') {
        const constantKey = c.args[1]?.exprKind.case === 'constExpr';
        if (!onAttribute) charge(2);
        else if (constantKey) charge();
      }
      return;
    }
    case 'listExpr':
      k.value.elements.forEach((x) => instrument(x, types, variables));
      charge(10);
      return;
    case 'structExpr':
      for (const entry of k.value.entries) {
        if (entry.keyKind.case === 'mapKey') instrument(entry.keyKind.value, types, variables);
        instrument(entry.value, types, variables);
      }
      charge(30);
      return;
    case 'comprehensionExpr': {
      const c = k.value;
      [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].forEach((x) => instrument(x, types, variables));
      return;
    }
    default:
      return;
  }
}

const OPERAND_START = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/** A parse error in cel-go's (ANTLR's) words where they can be told: a missing operand, a missing `)`. */
function parseError(src: string, err: unknown): string {
  const e = err as { rawMessage?: string; found?: string | null; location?: { start?: { offset?: number } }; message?: string };
  const offset = e.location?.start?.offset ?? 0;
  const rest = src.slice(offset);
  const op = /^(==|!=|<=|>=|&&|\|\||[-+*/%<>])\s*/.exec(rest);
  if (op !== null) {
    const at = offset + op[0].length;
    const next = src[at];
    if (next === undefined || /[)\]},]/.test(next)) {
      return formatIssue(src, at, `Syntax error: mismatched input '${next === undefined ? '<EOF>' : next}' expecting ${OPERAND_START}`);
    }
  }
  const missing = /^found end of input but expecting '(.)'$/.exec(e.rawMessage ?? '');
  if (missing !== null) return formatIssue(src, src.length, `Syntax error: missing '${missing[1]}' at '<EOF>'`);
  return formatIssue(src, offset, `Syntax error: ${e.rawMessage ?? e.message ?? String(err)}`);
}

/** Compiles EXPR against ENV: parse, type check and estimate its cost. */
export function compileExpression(expr: string, compileEnv: CompileEnv): CompileResult {
  const rewritten = rewriteOptionalSyntax(expr);
  let parsed: ParsedExpr;
  try {
    parsed = parse(rewritten.text);
  } catch (err) {
    return { ok: false, errors: [parseError(expr, err)] };
  }
  const root = parsed.expr;
  if (root === undefined) return { ok: false, errors: [formatIssue(expr, 0, 'Syntax error: empty expression')] };
  const variables = compileEnv.variables;
  rewriteTree(root, variables, new Set());
  const checked = checkExpr(root, new Map(Object.entries(variables)));
  if (checked.issues.length > 0) {
    const positions = parsed.sourceInfo?.positions ?? {};
    // cel-go lists issues by position.
    const located = checked.issues.map((i: CheckIssue) => ({
      offset: celGoOffset(expr, rewritten.original(positions[String(i.exprId)] ?? 0)),
      message: i.message,
    }));
    const errors = located.sort((a, b) => a.offset - b.offset).map((i) => formatIssue(expr, i.offset, i.message));
    return { ok: false, errors };
  }
  const estimatedCost = estimateCost(root, checked.types, compileEnv.sizes);
  let run: (a: Record<string, unknown>) => CelValue | Error;
  try {
    instrument(root, checked.types, new Set(Object.keys(variables)));
    const planned = plan(baseEnv(), root);
    run = (activation) => planned(activation as never);
  } catch (err) {
    return { ok: false, errors: [formatIssue(expr, 0, String((err as Error).message))] };
  }
  const program: Program = { source: expr, outputType: checked.type, run };
  return { ok: true, program, errors: [], estimatedCost, outputType: checked.type };
}

/** cel-go's wording of the evaluator's errors. */
function kubeWording(message: string): string {
  const m = /^field not found: (.*)$/.exec(message) ?? /^key not found: (.*)$/.exec(message);
  if (m !== null) return `no such key: ${m[1]}`;
  if (message === 'int divide by zero' || message === 'divide by zero') return 'division by zero';
  if (message.startsWith('int modulus by zero') || message === 'modulus by zero') return 'modulus by zero';
  if (/^unbound function/.test(message)) return `no such overload`;
  if (/overflow/.test(message)) return 'integer overflow';
  return message;
}

/** Evaluates PROGRAM on ACTIVATION within the cost budget. */
export function evaluate(program: Program, activation: Record<string, unknown>, options: EvalOptions = {}): EvalResult {
  const budget = options.costBudget ?? PER_CALL_LIMIT;
  const tracker = new RuntimeCost(budget);
  let result: CelValue | Error;
  try {
    result = RuntimeCost.within(tracker, () => program.run(activation));
  } catch (err) {
    if (err instanceof RuntimeCost.Exceeded) return { error: 'operation cancelled: actual cost limit exceeded', cost: tracker.cost, exceeded: true };
    return { error: kubeWording(err instanceof CelEvalError ? err.message : String((err as Error).message ?? err)), cost: tracker.cost };
  }
  if (tracker.exceeded) return { error: 'operation cancelled: actual cost limit exceeded', cost: tracker.cost, exceeded: true };
  if (result instanceof Error) return { error: kubeWording(rootMessage(result)), cost: tracker.cost };
  return { value: result, cost: tracker.cost };
}

function rootMessage(err: Error): string {
  let e: unknown = err;
  for (let i = 0; i < 5; i++) {
    const cause = (e as { cause?: unknown }).cause;
    if (cause instanceof RuntimeCost.Exceeded) throw cause;
    if (!(cause instanceof Error)) break;
    e = cause;
  }
  return (e as Error).message;
}
