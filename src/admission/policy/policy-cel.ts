import { celEnv, celList, celMap, isCelError, isCelList, isCelMap, isCelUint, parse, plan, type CelInput, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

/** The outcome of one evaluation: a JSON-shaped value, or kube's wording of the error. */
export type EvalOutcome = { ok: true; value: unknown } | { ok: false; error: string };

/** A compiled policy expression, evaluated against JSON-shaped variables. Safe to share across requests. */
export interface PolicyProgram {
  evaluate(variables: Record<string, unknown>): EvalOutcome;
}

/** A compiled expression, or why it did not compile. */
export type Compiled = { ok: true; program: PolicyProgram } | { ok: false; error: string };

const ENV = celEnv({ funcs: strings });

type ExprNode = ReturnType<typeof parse>['expr'];

/**
 * Object construction as policies write it (`Object{spec: Object.spec{replicas: 1}}`,
 * `JSONPatch{op: 'add', ...}`) names types the evaluator has no schema for; such a construction
 * becomes the map of its fields, which is what the mutation applies.
 */
function structsToMaps(e: ExprNode | undefined): void {
  if (e === undefined) return;
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr':
      structsToMaps(k.value.operand);
      return;
    case 'callExpr':
      structsToMaps(k.value.target);
      for (const a of k.value.args) structsToMaps(a);
      return;
    case 'listExpr':
      for (const a of k.value.elements) structsToMaps(a);
      return;
    case 'comprehensionExpr':
      for (const a of [k.value.iterRange, k.value.accuInit, k.value.loopCondition, k.value.loopStep, k.value.result]) structsToMaps(a);
      return;
    case 'structExpr': {
      const s = k.value;
      for (const entry of s.entries) {
        structsToMaps(entry.value);
        if (entry.keyKind.case === 'mapKey') structsToMaps(entry.keyKind.value);
        else if (entry.keyKind.case === 'fieldKey' && s.messageName !== '') {
          const key = parse(JSON.stringify(entry.keyKind.value)).expr;
          key.id = entry.id;
          entry.keyKind = { case: 'mapKey', value: key };
        }
      }
      s.messageName = '';
      return;
    }
    default:
      return;
  }
}

/** The text of an error, worded as cel-go words it where they differ (every object here is a map). */
function errorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/^field not found: /, 'no such key: ');
}

/** Compiles `expression` once; errors are worded as kube's compiler words them where it can. */
export function compilePolicyExpression(expression: string): Compiled {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(expression);
  } catch (err) {
    return { ok: false, error: `compilation failed: ${errorText(err)}` };
  }
  structsToMaps(parsed.expr);
  let run: (ctx?: Record<string, CelInput>) => unknown;
  try {
    run = plan(ENV, parsed);
  } catch (err) {
    return { ok: false, error: `compilation failed: ${errorText(err)}` };
  }
  return {
    ok: true,
    program: {
      evaluate(variables) {
        const bindings: Record<string, CelInput> = {};
        for (const [name, value] of Object.entries(variables)) bindings[name] = toCel(value);
        try {
          const out = run(bindings) as CelValue;
          if (isCelError(out)) return { ok: false, error: errorText(out) };
          return { ok: true, value: fromCel(out) };
        } catch (err) {
          return { ok: false, error: errorText(err) };
        }
      },
    },
  };
}

/** A JSON value as CEL sees it: integers are ints, other numbers doubles, objects maps. */
export function toCel(v: unknown): CelInput {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'bigint') return v;
  if (Array.isArray(v)) return celList(v.map(toCel));
  if (typeof v === 'object') {
    const m = new Map<string, CelInput>();
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) m.set(k, toCel(x));
    return celMap(m);
  }
  return null;
}

/** A CEL value as JSON: ints become numbers, maps objects, lists arrays. */
export function fromCel(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (isCelUint(v)) return Number(v.value);
  if (isCelList(v)) return [...v].map(fromCel);
  if (isCelMap(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v) out[String(isCelUint(k) ? k.value : k)] = fromCel(x);
    return out;
  }
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  return v;
}
