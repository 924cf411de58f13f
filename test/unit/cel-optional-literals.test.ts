/**
 * cel-go syntax and checks kube-apiserver 1.36 enables that the parser does not read itself:
 * optional list elements and map entries (`[?e]`, `{?k: v}`), the lists extension's `sortBy`
 * macro, issues listed by position; and the estimated rule costs of CRD validation rules against
 * the factors kube-apiserver 1.36 reported for the same rules (recorded on the reference).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileExpression, DYN, evaluate, fromCel, toCelInput } from '../../src/cel/index.js';
import { validateCrdValidationRules } from '../../src/crd/crd-validation-rules-check.js';
import { causeText } from '../../src/validation/field-errors.js';

const self = { a: 1, l: [1, 2] };

function run(expression: string): unknown {
  const c = compileExpression(expression, { variables: { self: DYN } });
  assert.ok(c.ok && c.program !== undefined, c.errors.join('\n'));
  const r = evaluate(c.program, { self: toCelInput(self, DYN) });
  assert.equal(r.error, undefined, r.error);
  return fromCel(r.value);
}

test('optional list elements are left out when absent and unwrapped when present', () => {
  assert.deepEqual(run('[?optional.of(1), 2, ?optional.none()]'), [1, 2]);
  assert.deepEqual(run('[?self.?a, ?self.?missing, self.l[?0].orValue(9)]'), [1, 1]);
  assert.deepEqual(run("{'a': [?optional.of(1)]}"), { a: [1] });
  assert.equal(run('[?optional.of(1), 2] == [1, 2]'), true);
  // A ternary inside a list literal is not an optional element.
  assert.deepEqual(run('[self.a > 0 ? 1 : 2]'), [1]);
});

test('optional map entries are left out when absent and unwrapped when present', () => {
  assert.deepEqual(run("{?'k': optional.of(1), 'j': 2}"), { k: 1, j: 2 });
  assert.deepEqual(run("{?'x': self.?b, 'y': 1}"), { y: 1 });
  assert.equal(run("{?'k': optional.none(), 'j': 2} == {'j': 2}"), true);
  assert.deepEqual(run("{'a': self.a > 0 ? 1 : 2}"), { a: 1 });
});

test("an optional element that is not optional is refused in cel-go's words (text from the reference)", () => {
  const c = compileExpression('[?1] == [1]', { variables: {} });
  assert.deepEqual(c.errors, ["ERROR: <input>:1:3: expected type 'optional_type(int)' but found 'int'\n | [?1] == [1]\n | ..^"]);
});

test('sortBy orders a list by the key computed for each element', () => {
  assert.equal(run("[{'a':2},{'a':1}].sortBy(e, e.a)[0].a == 1"), true);
  assert.deepEqual(run('[3,1,2].sortBy(x, -x)'), [3, 2, 1]);
  assert.deepEqual(run("['bb','a','ccc'].sortBy(s, s.size())"), ['a', 'bb', 'ccc']);
});

test('issues are listed by position, as cel-go lists them (text from the reference)', () => {
  const c = compileExpression('cel.bind(x, 1, x + 1) == 2', { variables: {} });
  assert.deepEqual(
    c.errors.map((e) => e.split('\n')[0]),
    [
      "ERROR: <input>:1:1: undeclared reference to 'cel' (in container '')",
      "ERROR: <input>:1:9: undeclared reference to 'bind' (in container '')",
      "ERROR: <input>:1:10: undeclared reference to 'x' (in container '')",
      "ERROR: <input>:1:16: undeclared reference to 'x' (in container '')",
    ],
  );
});

/** One field of `spec` with one rule; kube-apiserver 1.36's factor for it ('' when within budget). */
const COSTS: [Record<string, unknown>, string, string][] = [
  [{ type: 'string' }, "self.matches('^[a-z]+$')", ''],
  [{ type: 'string', maxLength: 1000000 }, "self.matches('^[a-z]+$') && self.contains('x')", ''],
  [{ type: 'array', items: { type: 'string' } }, "self.all(x, x.startsWith('a'))", ''],
  [{ type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 1000 }, 'self.all(x, self.exists(y, y == x))', '3.2x'],
  [{ type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 2000 }, 'self.all(x, self.exists(y, y == x))', '12.8x'],
  [{ type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: 5000 }, 'self.all(x, self.filter(y, y.contains(x)).size() < 3)', 'more than 100x'],
  [{ type: 'object', additionalProperties: { type: 'string' } }, 'self.all(k, self[k].size() < 10)', ''],
  [{ type: 'array', items: { type: 'string', maxLength: 10 }, maxItems: 3500 }, 'self.all(x, self.all(y, x == y || x != y))', '18.4x'],
  [{ type: 'array', items: { type: 'string', maxLength: 100 }, maxItems: 3000 }, 'self.all(x, self.exists(y, x.matches(y)))', 'more than 100x'],
  [
    { type: 'array', items: { type: 'string', maxLength: 30 }, maxItems: 4000 },
    '[?optional.of(1)].size() == 1 && self.all(x, self.exists(y, y == x))',
    '28.8x',
  ],
];

test('estimated rule costs: the factors kube-apiserver 1.36 reports for the same rules', () => {
  for (const [schema, rule, factor] of COSTS) {
    const crd = {
      spec: {
        versions: [
          {
            name: 'v1',
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { f: { ...schema, 'x-kubernetes-validations': [{ rule }] } } } },
              },
            },
          },
        ],
      },
    };
    // The per-rule finding (rules above 10x also exceed the CRD's total, reported after it).
    const texts = validateCrdValidationRules(crd)
      .map(causeText)
      .filter((t) => t.includes('estimated rule cost exceeds budget'));
    const want =
      factor === ''
        ? []
        : [
            `spec.validation.openAPIV3Schema.properties[spec].properties[f].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
          ];
    assert.deepEqual(texts, want, rule);
  }
});
