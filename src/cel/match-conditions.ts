import type { Program } from './index.js';
import { cel } from './load.js';
import { DYN, typeName } from './types.js';
import type { Obj } from '../api/object-util.js';
import { AUTHORIZER_VARIABLES } from './authorizer-variables.js';

/**
 * Webhook `matchConditions`: CEL expressions over `object`, `oldObject`, `request`, `authorizer` and
 * `authorizer.requestResource` that must all hold for a webhook to be called, with kube's evaluation
 * rules (matcher.go): any condition false skips the webhook; otherwise any evaluation error fails the
 * request (failurePolicy Fail) or skips the webhook (Ignore).
 *
 * Expressions compile with src/cel (type checking, the Kubernetes CEL libraries, kube's cost limit).
 * `setMatchConditionCompiler` replaces the compiler (tests, a fuller environment).
 */

/** What the expressions see. */
export interface MatchConditionInput {
  object: Obj | undefined;
  oldObject: Obj | undefined;
  /** The AdmissionRequest (admission.k8s.io/v1) of the call. */
  request: Obj;
  /** `authorizer` and `authorizer.requestResource` as src/cel made them (PolicyAuthorizer.variables); absent: not declared at run time. */
  authorizer?: Record<string, unknown>;
}

/** The verdict of a webhook's conditions. */
export type MatchVerdict = { matches: true } | { matches: false } | { error: string };

/** One webhook's conditions, compiled once per configuration change. */
export interface CompiledMatchConditions {
  evaluate(input: MatchConditionInput, failurePolicy: string): MatchVerdict;
}

/** Compiles matchConditions; `check` gives the compile error of one expression (for validation). */
export interface MatchConditionCompiler {
  compile(conditions: { name: string; expression: string }[]): CompiledMatchConditions;
  /** undefined when the expression compiles to a bool, else kube's reason (`compilation failed: ...`, `must evaluate to bool but got T`). */
  check(expression: string): string | undefined;
}

const VARIABLES = { object: DYN, oldObject: DYN, request: DYN, ...AUTHORIZER_VARIABLES };

/**
 * The program, or why it is refused in kube's words (compile.go): cel-go's rendering of each issue
 * after "compilation failed: ", or an output type other than exactly bool (dyn included).
 */
function compileError(expression: string): { error: string } | { program: Program } {
  const compiled = cel().compileExpression(expression, { variables: VARIABLES });
  if (!compiled.ok || compiled.program === undefined) return { error: `compilation failed: ${compiled.errors.join('\n')}` };
  const out = compiled.program.outputType;
  if (out.kind !== 'bool') return { error: `must evaluate to bool but got ${typeName(out)}` };
  return { program: compiled.program };
}

/** matchConditions compiled and evaluated with src/cel (type checking, Kubernetes libraries, cost limit). */
class CelMatchConditions implements MatchConditionCompiler {
  check(expression: string): string | undefined {
    const c = compileError(expression);
    return 'error' in c ? c.error : undefined;
  }

  compile(conditions: { name: string; expression: string }[]): CompiledMatchConditions {
    const programs = conditions.map((c) => ({ name: c.name, expression: c.expression, ...compileError(c.expression) }));
    return {
      evaluate: (input, failurePolicy) => {
        const { evaluate, toCelInput } = cel();
        const activation = {
          object: toCelInput(input.object ?? null, DYN),
          oldObject: toCelInput(input.oldObject ?? null, DYN),
          request: toCelInput(input.request, DYN),
          ...input.authorizer,
        };
        const errors: string[] = [];
        for (const p of programs) {
          if ('error' in p) {
            errors.push(p.error);
            continue;
          }
          const result = evaluate(p.program, activation);
          if (result.error !== undefined) errors.push(`expression '${p.expression}' resulted in error: ${result.error}`);
          else if (result.value === false) return { matches: false };
          else if (result.value !== true) errors.push(`expression '${p.expression}' resulted in error: no such overload`);
        }
        if (errors.length === 0) return { matches: true };
        if (failurePolicy === 'Ignore') return { matches: false };
        return { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
      },
    };
  }
}

let compiler: MatchConditionCompiler = new CelMatchConditions();

/** The compiler in use. */
export function matchConditionCompiler(): MatchConditionCompiler {
  return compiler;
}

/** Installs another compiler (webhooks compiled afterwards use it). */
export function setMatchConditionCompiler(next: MatchConditionCompiler): void {
  compiler = next;
}
