import { cel } from '../../cel/load.js';
import { DYN, type CelType } from '../../cel/types.js';
import { AUTHORIZER_VARIABLES } from '../../cel/authorizer-variables.js';

/** The outcome of one evaluation: a JSON-shaped value, or kube's wording of the error; and its runtime cost. */
export type EvalOutcome = ({ ok: true; value: unknown } | { ok: false; error: string }) & { cost: number };

/** A compiled policy expression, evaluated against JSON-shaped variables. Safe to share across requests. */
export interface PolicyProgram {
  evaluate(variables: Record<string, unknown>): EvalOutcome;
}

/** A compiled expression, or why it did not compile (cel-go's rendering of the issues). */
export type Compiled = { ok: true; program: PolicyProgram } | { ok: false; error: string };

/** The variables every admission policy expression may use, as kube declares them (schemaless here), besides the authorizer. */
export const POLICY_VARIABLES = ['object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables'] as const;

/** Declarations with `dyn` for every policy variable, overridden by `types` (the type checker's schema types). */
export function policyDeclarations(types: Partial<Record<(typeof POLICY_VARIABLES)[number], CelType>> = {}): Record<string, CelType> {
  const out: Record<string, CelType> = {};
  for (const name of POLICY_VARIABLES) out[name] = types[name] ?? DYN;
  return { ...out, ...AUTHORIZER_VARIABLES };
}

const DECLARED = policyDeclarations();

const FAILED = Symbol('failed');

/**
 * The `variables` map of one invocation, evaluated lazily as kube's composited variables are: a
 * variable is computed (and its cost charged, by RESOLVE) the first time an expression reads it, then
 * reused. RESOLVE answers the variable's JSON value, or undefined when it failed or is not declared
 * (the reading expression then reports `no such key`).
 */
export class LazyVariables extends Map<string, unknown> {
  private readonly computed = new Map<string, unknown>();

  constructor(private readonly resolve: (name: string) => unknown) {
    super();
  }

  override get(name: string): unknown {
    if (!this.computed.has(name)) {
      this.computed.set(name, FAILED); // a variable reading itself finds nothing
      const value = this.resolve(name);
      this.computed.set(name, value === undefined ? FAILED : cel().toCelInput(value, DYN));
    }
    const v = this.computed.get(name);
    return v === FAILED ? undefined : v;
  }

  override has(name: string): boolean {
    return this.get(name) !== undefined;
  }
}

/**
 * Compiles `expression` once with src/cel (kube's libraries, optional syntax, cost limits), the
 * policy variables declared dynamic; errors read as kube's compiler words them
 * (`compilation failed: ERROR: <input>:1:5: ...`).
 */
export function compilePolicyExpression(expression: string, declarations: Record<string, CelType> = DECLARED): Compiled {
  const { compileExpression, evaluate, fromCel, toCelInput } = cel();
  const compiled = compileExpression(expression, { variables: declarations });
  if (!compiled.ok || compiled.program === undefined) return { ok: false, error: `compilation failed: ${compiled.errors.join('\n')}` };
  const program = compiled.program;
  return {
    ok: true,
    program: {
      evaluate(variables) {
        const activation: Record<string, unknown> = {};
        for (const [name, value] of Object.entries(variables)) {
          activation[name] = name in AUTHORIZER_VARIABLES || value instanceof LazyVariables ? value : toCelInput(value ?? null, declarations[name] ?? DYN);
        }
        const out = evaluate(program, activation);
        if (out.error !== undefined) return { ok: false, error: out.error, cost: out.cost };
        return { ok: true, value: fromCel(out.value), cost: out.cost };
      },
    },
  };
}
