import type { Expr } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';
import type { Program } from '../../cel/index.js';
import { cel } from '../../cel/load.js';
import { BOOL, DYN, escapeFieldName, listOf, mapOf, objectOf, STRING, type CelType } from '../../cel/types.js';
import { OPT_SELECT, rewriteOptionalSyntax } from '../../cel/source.js';

/**
 * CEL over a token's claims and over the user it makes, as kube's structured authentication
 * compiles and evaluates it: `claims` is a map of string to dyn (JSON numbers are doubles, as
 * encoding/json decodes them into `any`), `user` a `kubernetes.UserInfo` (username, uid, groups,
 * extra). Evaluation has kube's per-expression runtime cost limit; errors read as kube's
 * (`expression 'X' resulted in error: no such key: foo`).
 */

const USER_TYPE: CelType = objectOf(
  'kubernetes.UserInfo',
  new Map([
    ['username', STRING],
    ['uid', STRING],
    ['groups', listOf(STRING)],
    ['extra', mapOf(STRING, listOf(STRING))],
  ]),
);
const CLAIMS_TYPE: CelType = mapOf(STRING, DYN);

/** A compiled expression and its source. */
export interface CompiledClaimExpression {
  expression: string;
  program: Program;
  /** Whether the expression reads `claims.email` / `claims.email_verified` (kube's email rule). */
  usesEmail: boolean;
  usesEmailVerified: boolean;
}

/** A compilation failure, worded as kube's field error detail (`compilation failed: ERROR: ...`, `must evaluate to bool`). */
export type CompileOutcome = { ok: true; compiled: CompiledClaimExpression } | { ok: false; detail: string };

/**
 * Compiles `expression` over `claims` (variable 'claims') or the user ('user'); with `mustBeBool`
 * its type must be bool (validation rules), otherwise any type is accepted (mappings).
 */
export function compileAuthExpression(expression: string, variable: 'claims' | 'user', mustBeBool: boolean): CompileOutcome {
  const result = cel().compileExpression(expression, { variables: { [variable]: variable === 'claims' ? CLAIMS_TYPE : USER_TYPE } });
  if (!result.ok || result.program === undefined) return { ok: false, detail: `compilation failed: ${result.errors.join('\n')}` };
  if (mustBeBool && result.program.outputType.kind !== BOOL.kind) return { ok: false, detail: 'must evaluate to bool' };
  const root = parsedTree(expression);
  return {
    ok: true,
    compiled: {
      expression,
      program: result.program,
      usesEmail: variable === 'claims' && root !== undefined && selects(root, 'email'),
      usesEmailVerified: variable === 'claims' && root !== undefined && selects(root, 'email_verified'),
    },
  };
}

function parsedTree(expression: string): Expr | undefined {
  try {
    return cel().parseSource(rewriteOptionalSyntax(expression).text).expr;
  } catch {
    return undefined;
  }
}

function isIdent(e: Expr | undefined, name: string): boolean {
  return e?.exprKind.case === 'identExpr' && e.exprKind.value.name === name;
}

/** kube's hasSelectExp: whether the tree selects `claims.FIELD` (plain or optional selection) anywhere. */
function selects(e: Expr | undefined, field: string): boolean {
  if (e === undefined) return false;
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr':
      return (isIdent(k.value.operand, 'claims') && k.value.field === field) || selects(k.value.operand, field);
    case 'callExpr': {
      const c = k.value;
      const arg = c.args[0]?.exprKind;
      if (c.function === OPT_SELECT && isIdent(c.target, 'claims') && arg?.case === 'constExpr' && arg.value.constantKind.value === field) return true;
      return c.args.some((a) => selects(a, field)) || selects(c.target, field);
    }
    case 'listExpr':
      return k.value.elements.some((el) => selects(el, field));
    case 'structExpr':
      return k.value.entries.some((en) => (en.keyKind.case === 'mapKey' && selects(en.keyKind.value, field)) || selects(en.value, field));
    case 'comprehensionExpr': {
      const c = k.value;
      return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].some((part) => selects(part, field));
    }
    default:
      return false;
  }
}

/**
 * A claim value as kube hands it to CEL: numbers are doubles, objects are maps whose keys are also
 * reachable by their CEL-escaped names (`claims.foo__dot__bar` reads `foo.bar`, as kube's unescaping
 * mapper does).
 */
export function claimToCel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(claimToCel);
  if (typeof value === 'object' && value !== null) {
    const out = new Map<string, unknown>();
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out.set(k, claimToCel(v));
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const escaped = escapeFieldName(k);
      if (escaped !== undefined && escaped !== k && !out.has(escaped)) out.set(escaped, out.get(k) ?? claimToCel(v));
    }
    return out;
  }
  return value ?? null;
}

/** The `user` variable of userValidationRules. */
export function userToCel(user: { name: string; uid: string; groups: string[]; extra: Record<string, string[]> }): unknown {
  return new Map<string, unknown>([
    ['username', user.name],
    ['uid', user.uid],
    ['groups', [...user.groups]],
    ['extra', new Map(Object.entries(user.extra).map(([k, v]) => [k, [...v]]))],
  ]);
}

/** The result of one evaluation as JSON, or kube's error (`expression 'X' resulted in error: ...`). */
export type EvalOutcome = { ok: true; value: unknown } | { ok: false; error: string };

/** Evaluates a compiled expression with `variable` bound to `value`, within kube's per-call cost limit. */
export function evaluateAuthExpression(compiled: CompiledClaimExpression, variable: 'claims' | 'user', value: unknown): EvalOutcome {
  const { evaluate, fromCel } = cel();
  const r = evaluate(compiled.program, { [variable]: value });
  if (r.error !== undefined) return { ok: false, error: `expression '${compiled.expression}' resulted in error: ${r.error}` };
  return { ok: true, value: fromCel(r.value) };
}

/**
 * kube's convertCELValueToStringList: a string (empty: none) or a list of strings (empty strings
 * dropped; empty: none), or null (none); anything else is an error.
 */
export function stringListOf(value: unknown): string[] | undefined | Error {
  const wrong = new Error('expression must return a string or a list of strings');
  if (value === null) return undefined;
  if (typeof value === 'string') return value === '' ? undefined : [value];
  if (!Array.isArray(value)) return wrong;
  const out: string[] = [];
  for (const v of value) {
    if (typeof v !== 'string') return wrong;
    if (v !== '') out.push(v);
  }
  return out.length === 0 ? undefined : out;
}
