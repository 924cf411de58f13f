import { celEnv, isCelError, parse, plan, type CelInput } from '@bufbuild/cel';
import type { Obj } from '../api/object-util.js';

/**
 * Webhook `matchConditions`: CEL expressions over `object`, `oldObject` and `request` that must all
 * hold for a webhook to be called, with kube's evaluation rules (matcher.go): any condition false
 * skips the webhook; otherwise any evaluation error fails the request (failurePolicy Fail) or skips
 * the webhook (Ignore).
 *
 * The evaluator is a seam: `setMatchConditionCompiler` installs a fuller one (Kubernetes CEL
 * libraries, cost limits, `authorizer`) when src/cel provides it. Until then the default compiles
 * with the CEL standard library of @bufbuild/cel, JSON integers as CEL ints.
 */

/** What the expressions see. */
export interface MatchConditionInput {
  object: Obj | undefined;
  oldObject: Obj | undefined;
  /** The AdmissionRequest (admission.k8s.io/v1) of the call. */
  request: Obj;
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
  /** undefined when the expression compiles, else kube's text after "compilation failed: ". */
  check(expression: string): string | undefined;
}

/** JSON as CEL values: objects are maps, integral numbers ints. */
function toCel(v: unknown): CelInput {
  if (Array.isArray(v)) return v.map(toCel);
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === 'object' && v !== null) return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  return v as CelInput;
}

const env = celEnv();

class StandardMatchConditions implements MatchConditionCompiler {
  check(expression: string): string | undefined {
    try {
      parse(expression);
      return undefined;
    } catch (err) {
      return `ERROR: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  compile(conditions: { name: string; expression: string }[]): CompiledMatchConditions {
    const programs = conditions.map((c) => {
      try {
        return { name: c.name, expression: c.expression, run: plan(env, parse(c.expression)), compileError: undefined };
      } catch (err) {
        return { name: c.name, expression: c.expression, run: undefined, compileError: err instanceof Error ? err.message : String(err) };
      }
    });
    return {
      evaluate: (input, failurePolicy) => {
        const bindings = { object: toCel(input.object ?? null), oldObject: toCel(input.oldObject ?? null), request: toCel(input.request) };
        const errors: string[] = [];
        for (const p of programs) {
          if (p.run === undefined) {
            errors.push(`compilation failed: ${p.compileError ?? ''}`);
            continue;
          }
          const result = p.run(bindings);
          if (result === false) return { matches: false };
          if (isCelError(result)) errors.push(`expression '${p.expression}' resulted in error: ${result.message}`);
          else if (result !== true) errors.push(`expression '${p.expression}' resulted in error: no such overload`);
        }
        if (errors.length === 0) return { matches: true };
        if (failurePolicy === 'Ignore') return { matches: false };
        return { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
      },
    };
  }
}

let compiler: MatchConditionCompiler = new StandardMatchConditions();

/** The compiler in use. */
export function matchConditionCompiler(): MatchConditionCompiler {
  return compiler;
}

/** Installs another compiler (webhooks compiled afterwards use it). */
export function setMatchConditionCompiler(next: MatchConditionCompiler): void {
  compiler = next;
}
