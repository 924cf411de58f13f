/**
 * Capstan's CEL cost estimates against kube-apiserver's own, rule by rule: the goldens
 * (test/golden/cel-cost/estimates.json, written by scripts/capture-cel-cost-goldens.sh with kube's
 * CEL compilation and CRD validation over test/fixtures/cel-cost/corpus.json) give every rule's
 * estimated min/max cost, messageExpression cost and cardinality, and the findings kube's CRD
 * validation reports; the estimator and src/crd/crd-validation-rules-check.ts must give the same.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compileExpression, evaluate, fromCel, schemaSizes, toCelInput, typeFromSchema, type CelType, type SchemaLike } from '../../src/cel/index.js';
import { validateCrdValidationRules } from '../../src/crd/crd-validation-rules-check.js';

interface Estimate {
  min: string;
  max: string;
}
interface Runtime {
  sample: number;
  value: number;
  cost: string;
  result?: string;
  error?: string;
}
interface GoldenRule {
  runtime?: Runtime[];
  path: string;
  index: number;
  rule: string;
  messageExpression?: string;
  error?: string;
  cost?: Estimate;
  cardinality: string;
  ruleCost: string;
  messageExpressionCost?: Estimate;
}
interface GoldenCase {
  name: string;
  rules: GoldenRule[];
  findings: { type: string; field: string; message: string }[];
}
interface CorpusCase {
  name: string;
  schema: SchemaLike;
  samples?: unknown[];
}

const root = new URL('../../../', import.meta.url);
const corpus = JSON.parse(readFileSync(new URL('test/fixtures/cel-cost/corpus.json', root), 'utf8')) as { cases: CorpusCase[] };
const golden = JSON.parse(readFileSync(new URL('test/golden/cel-cost/estimates.json', root), 'utf8')) as { cases: GoldenCase[] };

/** The schema nodes with rules, by the path the goldens name them with. */
function nodes(schema: SchemaLike, path = 'openAPIV3Schema', out = new Map<string, SchemaLike>()): Map<string, SchemaLike> {
  for (const [name, sub] of Object.entries(schema.properties ?? {})) nodes(sub, `${path}.properties[${name}]`, out);
  if (schema.items !== undefined) nodes(schema.items, `${path}.items`, out);
  if (typeof schema.additionalProperties === 'object') nodes(schema.additionalProperties, `${path}.additionalProperties`, out);
  out.set(path, schema);
  return out;
}

interface Rule {
  rule: string;
  messageExpression?: string;
  optionalOldSelf?: boolean;
}

function estimate(node: SchemaLike, isRoot: boolean, expr: string, optionalOldSelf: boolean): Estimate | string {
  const self = typeFromSchema(node, 'self', isRoot, true);
  const oldSelf: CelType = optionalOldSelf ? { kind: 'optional_type', elem: self } : self;
  const embedded = node['x-kubernetes-embedded-resource'] === true;
  const c = compileExpression(expr, { variables: { self, oldSelf }, sizes: schemaSizes(node, isRoot || embedded) });
  if (!c.ok || c.estimatedCost === undefined) return `compile error: ${c.errors.join('; ')}`;
  return { min: String(c.estimatedCost.exact.min), max: String(c.estimatedCost.exact.max) };
}

type Step = { prop: string } | 'items' | 'values';

/** The steps from a resource to the values of the node at each golden path. */
function steps(schema: SchemaLike, path = 'openAPIV3Schema', at: Step[] = [], out = new Map<string, Step[]>()): Map<string, Step[]> {
  for (const [name, sub] of Object.entries(schema.properties ?? {})) steps(sub, `${path}.properties[${name}]`, [...at, { prop: name }], out);
  if (schema.items !== undefined) steps(schema.items, `${path}.items`, [...at, 'items'], out);
  if (typeof schema.additionalProperties === 'object') steps(schema.additionalProperties, `${path}.additionalProperties`, [...at, 'values'], out);
  out.set(path, at);
  return out;
}

/** The values the node reached by STEPS has in OBJ, in document order (map values by key), as the generator lists them. */
function valuesAt(obj: unknown, path: Step[]): unknown[] {
  let values = [obj];
  for (const step of path) {
    const next: unknown[] = [];
    for (const v of values) {
      const isMap = typeof v === 'object' && v !== null && !Array.isArray(v);
      if (step === 'items' && Array.isArray(v)) next.push(...(v as unknown[]));
      else if (step === 'values' && isMap) for (const k of Object.keys(v).sort()) next.push((v as Record<string, unknown>)[k]);
      else if (typeof step === 'object' && isMap && step.prop in v) next.push((v as Record<string, unknown>)[step.prop]);
    }
    values = next;
  }
  return values;
}

let compared = 0;
for (const gc of golden.cases) {
  const cc = corpus.cases.find((c) => c.name === gc.name);
  test(`cost estimates equal kube's: ${gc.name}`, () => {
    assert.ok(cc !== undefined, `corpus case ${gc.name}`);
    const byPath = nodes(cc.schema);
    const diffs: string[] = [];
    for (const g of gc.rules) {
      if (g.error !== undefined) continue;
      const node = byPath.get(g.path)!;
      const r = (node['x-kubernetes-validations'] as Rule[])[g.index];
      const isRoot = g.path === 'openAPIV3Schema';
      const got = estimate(node, isRoot, r.rule, r.optionalOldSelf === true);
      compared++;
      if (JSON.stringify(got) !== JSON.stringify(g.cost)) diffs.push(`${r.rule}: got ${JSON.stringify(got)}, kube ${JSON.stringify(g.cost)}`);
      if (g.messageExpressionCost !== undefined) {
        const m = estimate(node, isRoot, r.messageExpression!, false);
        compared++;
        if (JSON.stringify(m) !== JSON.stringify(g.messageExpressionCost))
          diffs.push(`messageExpression ${r.messageExpression}: got ${JSON.stringify(m)}, kube ${JSON.stringify(g.messageExpressionCost)}`);
      }
    }
    assert.deepEqual(diffs, []);
  });
}

for (const gc of golden.cases) {
  const cc = corpus.cases.find((c) => c.name === gc.name);
  test(`CRD cost findings equal kube's: ${gc.name}`, () => {
    assert.ok(cc !== undefined);
    const crd = {
      spec: { versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: cc.schema } }] },
    };
    // kube visits sibling properties in Go's map order: compare the findings as sorted lists.
    const got = validateCrdValidationRules(crd)
      .map((c) => `${c.field}: ${c.message}`)
      .sort();
    const want = gc.findings.map((f) => f.message).sort();
    assert.deepEqual(got, want);
  });
}

/**
 * Rules whose runtime cost still differs from kube's where kube's evaluation succeeds: optional
 * literals, list last(), an optional index that finds nothing, qualifiedName's validate compared
 * with optional.none().
 */
const KNOWN_RUNTIME_COST_GAPS = new Set([
  '[?self.?sB].size() == 1',
  '{?"a": self.?sB}.size() == 1',
  'self.intsB.last().orValue(0) > 0',
  'self.intsB[?0].orValue(1) > 0',
  'self.mB[?"k"].orValue("") == "v"',
  'format.qualifiedName().validate(self.sT) == optional.none()',
]);

let evaluated = 0;
let costsCompared = 0;
test("rules evaluate on the sample resources as kube's do (result or error, and the runtime cost of successful ones)", () => {
  const diffs: string[] = [];
  for (const gc of golden.cases) {
    const cc = corpus.cases.find((c) => c.name === gc.name)!;
    const schemas = nodes(cc.schema);
    const paths = steps(cc.schema);
    for (const g of gc.rules) {
      if (g.runtime === undefined) continue;
      const node = schemas.get(g.path)!;
      const self = typeFromSchema(node, 'self', g.path === 'openAPIV3Schema', true);
      const c = compileExpression(g.rule, { variables: { self, oldSelf: self } });
      assert.ok(c.ok, g.rule);
      for (const rt of g.runtime) {
        const value = valuesAt(cc.samples![rt.sample], paths.get(g.path)!)[rt.value];
        const r = evaluate(c.program!, { self: toCelInput(value, self) });
        evaluated++;
        const got = r.error !== undefined ? 'error' : String(fromCel(r.value));
        const want = rt.error !== undefined ? 'error' : rt.result;
        if (got !== want) diffs.push(`${g.rule} on sample ${rt.sample}: ${got} ${r.error ?? ''}, kube ${want} ${rt.error ?? ''}`);
        // cel-go goes on charging the calls an error passes through; costs are compared where kube's evaluation succeeds.
        if (rt.error === undefined && !KNOWN_RUNTIME_COST_GAPS.has(g.rule)) {
          costsCompared++;
          if (String(r.cost) !== rt.cost) diffs.push(`${g.rule} on sample ${rt.sample}: runtime cost ${r.cost}, kube ${rt.cost}`);
        }
      }
    }
  }
  assert.deepEqual(diffs, []);
  assert.ok(evaluated >= 400, `${evaluated} evaluations`);
  assert.ok(costsCompared >= 400, `${costsCompared} runtime costs compared`);
});

test('the corpus covers enough rules', () => {
  assert.ok(compared >= 150, `${compared} estimates compared`);
});

test('sortBy (a bind of the list, as cel-go expands it), first/last and optional indexes evaluate', () => {
  const schema = {
    type: 'object',
    properties: {
      ints: { type: 'array', items: { type: 'integer' } },
      strs: { type: 'array', items: { type: 'string' } },
      m: { type: 'object', additionalProperties: { type: 'string' } },
    },
  };
  const self = typeFromSchema(schema);
  const value = toCelInput({ ints: [3, 1, 2], strs: ['bb', 'a', 'ccc'], m: { a: 'x' } }, self);
  const run = (expr: string): unknown => {
    const c = compileExpression(expr, { variables: { self } });
    assert.ok(c.ok, `${expr}: ${c.errors.join('\n')}`);
    const r = evaluate(c.program!, { self: value });
    assert.equal(r.error, undefined, expr);
    return fromCel(r.value);
  };
  assert.deepEqual(run('self.ints.sortBy(x, -x)'), [3, 2, 1]);
  assert.deepEqual(run('self.strs.sortBy(s, s.size())'), ['a', 'bb', 'ccc']);
  assert.equal(run('self.ints.map(x, x * 2).sortBy(y, y)[0]'), 2);
  assert.equal(run('self.ints.first().value()'), 3);
  assert.equal(run('self.ints.last().orValue(0)'), 2);
  assert.equal(run('[].first().hasValue()'), false);
  assert.equal(run('self.?m["a"].value()'), 'x');
  assert.equal(run('self.?m["b"].hasValue()'), false);
});
