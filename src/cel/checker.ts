/**
 * A type checker for parsed CEL expressions, reporting the issues kube-apiserver's cel-go checker
 * reports at compile time, in cel-go's words: `undeclared reference to 'x' (in container '')`,
 * `undefined field 'x'`, `found no matching overload for 'f' applied to '(int, string)'`, and
 * ranges that are not lists or maps. Types it cannot know are dyn and never produce an issue.
 */
import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import { DECLARATIONS, isParam, type FnDecl } from './declarations.js';
import { BOOL, DOUBLE, DURATION, DYN, INT, NULL, STRING, TIMESTAMP, TYPE, UINT, assignable, listOf, mapOf, typeName, type CelType } from './types.js';
import { OPT_INDEX, OPT_LIST, OPT_MAP, OPT_SELECT } from './source.js';
import { SORT_BY_KEYS } from './macros.js';

export interface CheckIssue {
  /** Expression id the issue is about (its source position is in the parse's sourceInfo). */
  exprId: bigint;
  message: string;
}

export interface CheckResult {
  type: CelType;
  issues: CheckIssue[];
  /** The type of every expression id, for the cost estimator. */
  types: Map<bigint, CelType>;
}

/** Typed object constructions (`Object{...}`) the tree rewrite made map literals: not held to homogeneity. */
export const TYPED_OBJECTS = new WeakSet<Expr>();

const TYPE_NAMES = new Set(['int', 'uint', 'double', 'string', 'bool', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn']);
const NUMERIC = new Set(['int', 'uint', 'double']);

/** Checks EXPR against the declared VARIABLES. */
export function checkExpr(expr: Expr, variables: ReadonlyMap<string, CelType>): CheckResult {
  const issues: CheckIssue[] = [];
  const types = new Map<bigint, CelType>();
  const scopes: Map<string, CelType>[] = [];

  const issue = (e: Expr, message: string): CelType => {
    issues.push({ exprId: e.id, message });
    return DYN;
  };
  const lookup = (name: string): CelType | undefined => {
    for (let i = scopes.length - 1; i >= 0; i--) {
      const t = scopes[i].get(name);
      if (t !== undefined) return t;
    }
    return variables.get(name);
  };

  const visit = (e: Expr): CelType => {
    const t = visitKind(e);
    types.set(e.id, t);
    return t;
  };

  const visitKind = (e: Expr): CelType => {
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr': {
        switch (k.value.constantKind.case) {
          case 'boolValue':
            return BOOL;
          case 'int64Value':
            return INT;
          case 'uint64Value':
            return UINT;
          case 'doubleValue':
            return DOUBLE;
          case 'stringValue':
            return { kind: 'string', maxSize: k.value.constantKind.value.length };
          case 'bytesValue':
            return { kind: 'bytes', maxSize: k.value.constantKind.value.length };
          case 'nullValue':
            return NULL;
          default:
            return DYN;
        }
      }
      case 'identExpr': {
        const t = lookup(k.value.name);
        if (t !== undefined) return t;
        if (TYPE_NAMES.has(k.value.name)) return TYPE;
        return issue(e, `undeclared reference to '${k.value.name}' (in container '')`);
      }
      case 'selectExpr': {
        const operand = k.value.operand;
        if (operand === undefined) return DYN;
        const qualified = qualifiedName(e);
        if (qualified !== undefined && !k.value.testOnly && variables.has(qualified)) return variables.get(qualified)!;
        const ot = visit(operand);
        const ft = selectType(e, ot, k.value.field);
        return k.value.testOnly ? BOOL : ft;
      }
      case 'callExpr':
        return visitCall(e, k.value.function, k.value.target, k.value.args);
      case 'listExpr': {
        const elems = k.value.elements.map(visit);
        if (!exempt.has(e.id)) homogeneous(k.value.elements, elems);
        return listOf(join(elems), elems.length);
      }
      case 'structExpr': {
        const entries = k.value.entries;
        const keys: CelType[] = [];
        const values: CelType[] = [];
        for (const entry of entries) {
          if (entry.keyKind.case === 'mapKey') keys.push(visit(entry.keyKind.value));
          if (entry.value !== undefined) values.push(visit(entry.value));
        }
        if (k.value.messageName !== '') return DYN;
        if (!exempt.has(e.id) && !TYPED_OBJECTS.has(e)) {
          const keyExprs = entries.flatMap((en) => (en.keyKind.case === 'mapKey' ? [en.keyKind.value] : []));
          if (homogeneous(keyExprs, keys))
            homogeneous(
              entries.flatMap((en) => (en.value !== undefined ? [en.value] : [])),
              values,
            );
        }
        return mapOf(join(keys), join(values), keys.length);
      }
      case 'comprehensionExpr': {
        const c = k.value;
        const range = c.iterRange === undefined ? DYN : visit(c.iterRange);
        let iterType = DYN;
        let iter2Type: CelType | undefined;
        if (range.kind === 'list') {
          iterType = c.iterVar2 !== '' ? INT : (range.elem ?? DYN);
          if (c.iterVar2 !== '') iter2Type = range.elem ?? DYN;
        } else if (range.kind === 'map' || range.kind === 'object') {
          iterType = range.kind === 'map' ? (range.key ?? DYN) : STRING;
          if (c.iterVar2 !== '') iter2Type = range.elem ?? DYN;
        } else if (range.kind !== 'dyn' && c.iterRange !== undefined) {
          issue(c.iterRange, `expression of type '${typeName(range)}' cannot be range of a comprehension (must be list, map, or dynamic)`);
        }
        let accuType = c.accuInit === undefined ? DYN : visit(c.accuInit);
        const scope = new Map<string, CelType>([
          [c.accuVar, accuType],
          [c.iterVar, iterType],
        ]);
        if (c.iterVar2 !== '') scope.set(c.iterVar2, iter2Type ?? DYN);
        scopes.push(scope);
        if (c.loopCondition !== undefined) visit(c.loopCondition);
        if (c.loopStep !== undefined) {
          const step = visit(c.loopStep);
          if (accuType.kind === 'list' && (accuType.elem ?? DYN).kind === 'dyn' && step.kind === 'list') accuType = step;
          scope.set(c.accuVar, accuType);
        }
        const result = c.result === undefined ? DYN : visit(c.result);
        scopes.pop();
        return result;
      }
      default:
        return DYN;
    }
  };

  const selectType = (e: Expr, ot: CelType, field: string): CelType => {
    switch (ot.kind) {
      case 'dyn':
        return DYN;
      case 'map':
        return ot.elem ?? DYN;
      case 'object': {
        const ft = ot.fields?.get(field);
        if (ft === undefined) return issue(e, `undefined field '${field}'`);
        return ft;
      }
      default:
        return issue(e, `type '${typeName(ot)}' does not support field selection`);
    }
  };

  /** Literals whose elements may differ in type: the argument of a string's `format`. */
  const exempt = new Set<bigint>();
  /** kube's homogeneous aggregate literals: every element of the type of the first; false after an issue. */
  const homogeneous = (exprs: Expr[], ts: CelType[]): boolean => {
    // dyn stands for a type parameter cel-go would have bound (`optional.none()`) unless it is declared or asked for.
    const wildcard = (i: number): boolean => ts[i].kind === 'dyn' && !explicitDyn(exprs[i]);
    for (let i = 1; i < ts.length; i++) {
      if (wildcard(0) || wildcard(i)) continue;
      if (typeName(ts[i]) !== typeName(ts[0])) {
        issue(exprs[i], `expected type '${typeName(ts[0])}' but found '${typeName(ts[i])}'`);
        return false;
      }
    }
    return true;
  };

  const visitCall = (e: Expr, fn: string, target: Expr | undefined, args: Expr[]): CelType => {
    if (fn === 'format' && target !== undefined) for (const a of args) exempt.add(a.id);
    // An optional literal is checked with its optional elements unwrapped (optionalLiteral).
    if ((fn === OPT_LIST || fn === OPT_MAP) && args[0] !== undefined) exempt.add(args[0].id);
    const recv = target === undefined ? undefined : visit(target);
    const at = args.map(visit);
    switch (fn) {
      case '_&&_':
      case '_||_':
      case '!_':
      case '@not_strictly_false':
        for (let i = 0; i < at.length; i++) if (!assignable(at[i], BOOL)) return noOverload(e, fn, undefined, at);
        return BOOL;
      case '_?_:_':
        if (!assignable(at[0], BOOL)) return noOverload(e, fn, undefined, at);
        return join([at[1], at[2]]);
      case '_==_':
      case '_!=_':
        if (!comparableEq(at[0], at[1])) return noOverload(e, fn, undefined, at);
        return BOOL;
      case '_<_':
      case '_<=_':
      case '_>_':
      case '_>=_':
        if (!ordered(at[0], at[1])) return noOverload(e, fn, undefined, at);
        return BOOL;
      case '_+_':
      case '_-_':
      case '_*_':
      case '_/_':
      case '_%_':
        return arith(e, fn, at[0], at[1]);
      case '-_':
        if (at[0].kind === 'dyn' || at[0].kind === 'int' || at[0].kind === 'double' || at[0].kind === 'duration') return at[0];
        return noOverload(e, fn, undefined, at);
      case '_[_]':
        return index(e, at[0], at[1]);
      case '@in':
        if (at[1].kind === 'list' && !assignable(at[0], at[1].elem ?? DYN)) return noOverload(e, fn, undefined, at);
        if (at[1].kind === 'map' && !assignable(at[0], at[1].key ?? DYN)) return noOverload(e, fn, undefined, at);
        if (at[1].kind !== 'list' && at[1].kind !== 'map' && at[1].kind !== 'dyn' && at[1].kind !== 'object') return noOverload(e, fn, undefined, at);
        return BOOL;
      case OPT_SELECT: {
        const base = recv?.kind === 'optional_type' ? (recv.elem ?? DYN) : (recv ?? DYN);
        const ck = args[0]?.exprKind.case === 'constExpr' ? args[0].exprKind.value.constantKind : undefined;
        const field = ck?.case === 'stringValue' ? ck.value : '';
        return { kind: 'optional_type', elem: selectType(e, base, field) };
      }
      case '@pairs':
        if (at[0].kind !== 'list' && at[0].kind !== 'map' && at[0].kind !== 'object' && at[0].kind !== 'dyn') return noOverload(e, fn, undefined, at);
        return listOf(listOf(DYN));
      case '@emptyMap':
      case '@mapInsert':
      case '@mapInsertEntry':
        return mapOf(DYN, DYN);
      case SORT_BY_KEYS:
        if (at[0].kind !== 'list' && at[0].kind !== 'dyn') return noOverload(e, 'sortBy', undefined, at);
        return at[0];
      case OPT_LIST:
      case OPT_MAP:
        return optionalLiteral(fn, args);
      case OPT_INDEX: {
        const base = recv?.kind === 'optional_type' ? (recv.elem ?? DYN) : (recv ?? DYN);
        return { kind: 'optional_type', elem: index(e, base, at[0]) };
      }
    }
    const decls = DECLARATIONS.get(fn);
    if (decls === undefined) {
      if (target !== undefined && fn === 'all') return BOOL;
      return issue(e, `undeclared reference to '${fn}' (in container '')`);
    }
    const candidates = decls.filter((d) => (d.receiver !== undefined) === (recv !== undefined) && d.args.length === at.length);
    const results: CelType[] = [];
    for (const d of candidates) {
      const r = matchDecl(d, recv, at);
      if (r !== undefined) results.push(r);
    }
    if (results.length === 0) return noOverload(e, fn, recv, at);
    return results.length === 1 ? results[0] : join(results);
  };

  /** `[?e]` and `{?k: v}` (an `@optList` / `@optMap` call of the literal): each marked value must be optional; its element type counts. */
  const optionalLiteral = (fn: string, args: Expr[]): CelType => {
    const literal = args[0]?.exprKind;
    const marks = args[1]?.exprKind;
    const optional = new Set(
      marks?.case === 'listExpr' ? marks.value.elements.map((m) => (m.exprKind.case === 'constExpr' ? Number(m.exprKind.value.constantKind.value) : -1)) : [],
    );
    const unwrap = (value: Expr | undefined, i: number): CelType => {
      const t = value === undefined ? DYN : (types.get(value.id) ?? DYN);
      if (!optional.has(i) || t.kind === 'dyn') return t;
      if (t.kind === 'optional_type') return t.elem ?? DYN;
      return issue(value!, `expected type 'optional_type(${typeName(t)})' but found '${typeName(t)}'`);
    };
    if (fn === OPT_LIST && literal?.case === 'listExpr') {
      const elems = literal.value.elements.map(unwrap);
      homogeneous(literal.value.elements, elems);
      return listOf(join(elems), elems.length);
    }
    if (literal?.case === 'structExpr') {
      const keys = literal.value.entries.map((en) => (en.keyKind.case === 'mapKey' ? (types.get(en.keyKind.value.id) ?? DYN) : STRING));
      const values = literal.value.entries.map((en, i) => unwrap(en.value, i));
      const keyExprs = literal.value.entries.map((en) => (en.keyKind.case === 'mapKey' ? en.keyKind.value : en.value!));
      if (homogeneous(keyExprs, keys))
        homogeneous(
          literal.value.entries.map((en) => en.value!),
          values,
        );
      return mapOf(join(keys), join(values), keys.length);
    }
    return DYN;
  };

  const noOverload = (e: Expr, fn: string, recv: CelType | undefined, at: CelType[]): CelType => {
    const args = `(${at.map(typeName).join(', ')})`;
    return issue(e, `found no matching overload for '${fn}' applied to '${recv === undefined ? '' : `${typeName(recv)}.`}${args}'`);
  };

  const arith = (e: Expr, fn: string, a: CelType, b: CelType): CelType => {
    if (a.kind === 'dyn' && b.kind === 'dyn') return DYN;
    if (a.kind === 'dyn' || b.kind === 'dyn') {
      const known = a.kind === 'dyn' ? b : a;
      if (fn === '_+_' && known.kind === 'timestamp') return TIMESTAMP;
      return known.kind === 'timestamp' && fn === '_-_' ? DYN : known;
    }
    const pair = `${a.kind},${b.kind}`;
    if (a.kind === b.kind && NUMERIC.has(a.kind)) return a;
    if (fn === '_+_') {
      if (pair === 'string,string' || pair === 'bytes,bytes') return a;
      if (pair === 'list,list') {
        // An empty literal's dyn elements take the other list's type (cel-go unifies them): `[] + [1]` is list(int).
        const ae = a.elem ?? DYN;
        const be = b.elem ?? DYN;
        return listOf(ae.kind === 'dyn' ? be : be.kind === 'dyn' ? ae : join([ae, be]));
      }
      if (pair === 'timestamp,duration' || pair === 'duration,timestamp') return TIMESTAMP;
      if (pair === 'duration,duration') return DURATION;
    }
    if (fn === '_-_') {
      if (pair === 'timestamp,timestamp') return DURATION;
      if (pair === 'timestamp,duration') return TIMESTAMP;
      if (pair === 'duration,duration') return DURATION;
    }
    return noOverload(e, fn, undefined, [a, b]);
  };

  const index = (e: Expr, a: CelType, i: CelType): CelType => {
    switch (a.kind) {
      case 'optional_type':
        // Optional chaining: indexing an optional list or map gives an optional element.
        if (a.elem?.kind === 'list' || a.elem?.kind === 'map' || a.elem?.kind === 'object' || a.elem?.kind === 'dyn')
          return { kind: 'optional_type', elem: index(e, a.elem, i) };
        return noOverload(e, '_[_]', undefined, [a, i]);
      case 'dyn':
        return DYN;
      case 'list':
        if (!assignable(i, INT) && i.kind !== 'uint' && i.kind !== 'double') return noOverload(e, '_[_]', undefined, [a, i]);
        return a.elem ?? DYN;
      case 'map':
        return a.elem ?? DYN;
      case 'object':
        return DYN;
      default:
        return noOverload(e, '_[_]', undefined, [a, i]);
    }
  };

  const result = visit(expr);
  return { type: result, issues, types };
}

/** Whether E is dyn by declaration or by `dyn(...)`: a variable, a field, an element, a dyn() call. */
function explicitDyn(e: Expr | undefined): boolean {
  const k = e?.exprKind;
  if (k?.case === 'identExpr' || k?.case === 'selectExpr') return true;
  return k?.case === 'callExpr' && (k.value.function === 'dyn' || k.value.function === '_[_]');
}

/** `a.b.c` of an ident followed by selections, for variables declared with dotted names. */
function qualifiedName(e: Expr): string | undefined {
  const k = e.exprKind;
  if (k.case === 'identExpr') return k.value.name;
  if (k.case === 'selectExpr' && k.value.operand !== undefined) {
    const base = qualifiedName(k.value.operand);
    return base === undefined ? undefined : `${base}.${k.value.field}`;
  }
  return undefined;
}

/** Matches a declaration, binding its type parameter; the result type, or undefined. */
function matchDecl(d: FnDecl, recv: CelType | undefined, args: CelType[]): CelType | undefined {
  let bound: CelType | undefined;
  const match = (want: CelType, got: CelType): boolean => {
    if (isParam(want)) {
      if (got.kind === 'dyn') return true;
      if (bound === undefined || bound.kind === 'dyn') {
        bound = got;
        return true;
      }
      return assignable(got, bound) || (NUMERIC.has(got.kind) && NUMERIC.has(bound.kind));
    }
    if (got.kind === 'dyn' || want.kind === 'dyn') return true;
    if (want.kind !== got.kind) return want.kind === 'map' && got.kind === 'object';
    if (want.kind === 'list' || want.kind === 'optional_type') return match(want.elem ?? DYN, got.elem ?? DYN);
    if (want.kind === 'map') return match(want.key ?? DYN, got.key ?? DYN) && match(want.elem ?? DYN, got.elem ?? DYN);
    if (want.kind === 'opaque') return want.name === got.name;
    return true;
  };
  if (d.receiver !== undefined && recv !== undefined && !match(d.receiver, recv)) return undefined;
  for (let i = 0; i < args.length; i++) if (!match(d.args[i], args[i])) return undefined;
  return substitute(d.result, bound ?? DYN);
}

function substitute(t: CelType, bound: CelType): CelType {
  if (isParam(t)) return bound;
  if (t.kind === 'list') return listOf(substitute(t.elem ?? DYN, bound));
  if (t.kind === 'optional_type') return { kind: 'optional_type', elem: substitute(t.elem ?? DYN, bound) };
  return t;
}

/** The common type of TS (dyn when they differ). */
function join(ts: CelType[]): CelType {
  if (ts.length === 0) return DYN;
  let out = ts[0];
  for (const t of ts.slice(1)) {
    if (out.kind === 'dyn') return DYN;
    if (t.kind === 'null_type' || out.kind === 'null_type') {
      out = t.kind === 'null_type' ? out : t;
      continue;
    }
    if (!assignable(t, out) || t.kind === 'dyn') return DYN;
    if (out.maxSize !== undefined) out = { ...out, maxSize: t.maxSize === undefined ? undefined : Math.max(out.maxSize, t.maxSize) };
  }
  return out;
}

function comparableEq(a: CelType, b: CelType): boolean {
  if (a.kind === 'dyn' || b.kind === 'dyn' || a.kind === 'null_type' || b.kind === 'null_type') return true;
  if (NUMERIC.has(a.kind) && NUMERIC.has(b.kind)) return true;
  if ((a.kind === 'optional_type') !== (b.kind === 'optional_type')) return false;
  return assignable(a, b);
}

function ordered(a: CelType, b: CelType): boolean {
  if (a.kind === 'dyn' || b.kind === 'dyn') return true;
  if (NUMERIC.has(a.kind) && NUMERIC.has(b.kind)) return true;
  return a.kind === b.kind && ['string', 'bytes', 'bool', 'timestamp', 'duration'].includes(a.kind);
}
