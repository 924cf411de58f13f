import { isObject, type Obj } from '../../api/object-util.js';
import { RUNTIME_CEL_COST_BUDGET } from '../../cel/limits.js';
import { compilePolicyExpression, LazyVariables, type Compiled } from './policy-cel.js';

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

/** kube's words when the runtime cost budget of one invocation runs out. */
export const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** kube's runtime CEL cost budget shared by the expressions of one invocation (RuntimeCELCostBudget). */
export class CostBudget {
  remaining = RUNTIME_CEL_COST_BUDGET;
  exhausted = false;
}

/**
 * Evaluates `e` with kube's error wording (`compilation error: ...`, `expression '...' resulted in
 * error: ...`), charging its runtime cost to `budget`; once the budget is spent every evaluation
 * answers OUT_OF_BUDGET.
 */
export function evaluate(e: CompiledExpression, vars: Obj, budget?: CostBudget): Evaluated {
  if (budget?.exhausted === true) return { ok: false, error: OUT_OF_BUDGET };
  if (!e.compiled.ok) return { ok: false, error: `compilation error: ${e.compiled.error}` };
  const out = e.compiled.program.evaluate(vars);
  if (budget !== undefined) {
    // Variables read by the expression were charged as they were computed, and may have spent the budget.
    if (budget.exhausted || out.cost > budget.remaining) {
      budget.exhausted = true;
      return { ok: false, error: OUT_OF_BUDGET };
    }
    budget.remaining -= out.cost;
  }
  if (out.ok) return { ok: true, value: out.value };
  return { ok: false, error: `expression '${e.expression}' resulted in error: ${out.error}` };
}

/**
 * The CEL inputs of one invocation. `variables` are computed when an expression first reads them
 * (each may use the ones before it), their cost charged to BUDGET, as kube's composited variables
 * are; unread variables cost nothing. A variable that fails reads as missing, and `explain` turns the
 * reading expression's `no such key` into the variable's failure, in kube's words.
 */
export function withVariables(base: Obj, variables: NamedExpression[], budget?: CostBudget): { vars: Obj; explain: (error: string) => string } {
  const byName = new Map(variables.map((v) => [v.name, v]));
  const failed = new Map<string, string>();
  const vars: Obj = { ...base };
  vars.variables = new LazyVariables((name) => {
    const v = byName.get(name);
    if (v === undefined) return undefined;
    const out = evaluate(v, vars, budget);
    if (out.ok) return out.value ?? null;
    failed.set(
      name,
      v.compiled.ok ? `composited variable "${name}" fails to evaluate: ${out.error}` : `composited variable "${name}" fails to compile: ${v.compiled.error}`,
    );
    return undefined;
  });
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
