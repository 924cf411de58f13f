import { isObject, type Obj } from '../../api/object-util.js';
import { compilePolicyExpression, type Compiled } from './policy-cel.js';

/** One expression of a policy, compiled once per policy generation. */
export interface CompiledExpression {
  expression: string;
  compiled: Compiled;
}

/** A named expression (matchConditions, variables). */
export interface NamedExpression extends CompiledExpression {
  name: string;
}

/** An evaluation as kube reports it: the value, or the error text its dispatchers put in a denial. */
export type Evaluated = { ok: true; value: unknown } | { ok: false; error: string };

export function compileExpression(expression: unknown): CompiledExpression {
  const text = typeof expression === 'string' ? expression : '';
  return { expression: text, compiled: compilePolicyExpression(text) };
}

export function compileNamed(list: unknown): NamedExpression[] {
  if (!Array.isArray(list)) return [];
  return list.filter(isObject).map((item) => ({ name: typeof item.name === 'string' ? item.name : '', ...compileExpression(item.expression) }));
}

/** Evaluates `e` with kube's error wording (`compilation error: ...`, `expression '...' resulted in error: ...`). */
export function evaluate(e: CompiledExpression, vars: Obj): Evaluated {
  if (!e.compiled.ok) return { ok: false, error: `compilation error: ${e.compiled.error}` };
  const out = e.compiled.program.evaluate(vars);
  if (out.ok) return out;
  return { ok: false, error: `expression '${e.expression}' resulted in error: ${out.error}` };
}

/**
 * The CEL inputs of one evaluation, with `variables` computed in order (each may use the ones
 * before it). A variable that fails is left out, and an expression that then reads it reports the
 * variable's failure, as kube's composited variables do.
 */
export function withVariables(base: Obj, variables: NamedExpression[]): { vars: Obj; explain: (error: string) => string } {
  const values: Obj = {};
  const failed = new Map<string, string>();
  const vars: Obj = { ...base, variables: values };
  for (const v of variables) {
    const out = evaluate(v, vars);
    if (out.ok) values[v.name] = out.value;
    else if (!v.compiled.ok) failed.set(v.name, `composited variable "${v.name}" fails to compile: ${v.compiled.error}`);
    else failed.set(v.name, `composited variable "${v.name}" fails to evaluate: ${out.error}`);
  }
  const explain = (error: string): string => {
    for (const [name, why] of failed) if (error.endsWith(`no such key: ${name}`)) return error.replace(`no such key: ${name}`, why);
    return error;
  };
  return { vars, explain };
}

/** kube's match-condition result: all true (matches), one false (skip), or errors under the failure policy. */
export type ConditionsOutcome = { matches: boolean } | { error: string };

export function evaluateMatchConditions(conditions: NamedExpression[], vars: Obj, failurePolicy: string): ConditionsOutcome {
  const errors: string[] = [];
  for (const c of conditions) {
    const out = evaluate(c, vars);
    if (!out.ok) errors.push(out.error);
    else if (out.value === false) return { matches: false };
    else if (out.value !== true) errors.push(`expression '${c.expression}' resulted in error: no such overload`);
  }
  if (errors.length === 0) return { matches: true };
  if (failurePolicy === 'Ignore') return { matches: false };
  return { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
}
