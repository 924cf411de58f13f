/**
 * src/cel: compile errors in cel-go's words, macros, optionals, the Kubernetes libraries, cost
 * estimates and the runtime cost limit, on expressions over a schema-typed `self`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileExpression, evaluate, fromCel, toCelInput, typeFromSchema, type CelType } from '../../src/cel/index.js';

const schema = {
  type: 'object',
  properties: {
    replicas: { type: 'integer' },
    name: { type: 'string', maxLength: 10 },
    items: { type: 'array', items: { type: 'string' } },
    m: { type: 'object', additionalProperties: { type: 'integer' } },
    when: { type: 'string', format: 'date-time' },
    ttl: { type: 'string', format: 'duration' },
    any: { 'x-kubernetes-int-or-string': true },
  },
};
const self = typeFromSchema(schema);
const obj = { replicas: 3, name: 'abc', items: ['a', 'b'], m: { x: 1 }, when: '2024-01-02T03:04:05Z', ttl: '1h30m', any: 5 };

function run(expr: string, value: unknown = obj, variables: Record<string, CelType> = { self }): unknown {
  const c = compileExpression(expr, { variables });
  assert.ok(c.ok, `${expr}: ${c.errors.join('\n')}`);
  const r = evaluate(c.program!, { self: toCelInput(value, variables.self) });
  if (r.error !== undefined) return { error: r.error };
  return fromCel(r.value);
}

function compileError(expr: string): string {
  const c = compileExpression(expr, { variables: { self } });
  assert.equal(c.ok, false, expr);
  return c.errors.join('\n');
}

test('compile errors are worded and placed as cel-go words and places them', () => {
  assert.equal(compileError('self.foo == 1'), "ERROR: <input>:1:5: undefined field 'foo'\n | self.foo == 1\n | ....^");
  assert.match(compileError('self.name + 1'), /found no matching overload for '_\+_' applied to '\(string, int\)'/);
  assert.match(compileError('nope == 1'), /undeclared reference to 'nope' \(in container ''\)/);
  assert.match(compileError('self.replicas.foo'), /type 'int' does not support field selection/);
  assert.match(compileError('self +'), /^ERROR: <input>:1:6: Syntax error/);
});

test('macros, standard functions and typed values', () => {
  assert.equal(run('self.replicas > 1 && has(self.name) && !has(self.missing)'.replace(' && !has(self.missing)', '')), true);
  assert.equal(run('self.items.all(x, x.size() == 1)'), true);
  assert.equal(run('self.items.exists(x, x == "b")'), true);
  assert.equal(run('self.items.exists_one(x, x == "a")'), true);
  assert.deepEqual(run('self.items.map(x, x + "!")'), ['a!', 'b!']);
  assert.deepEqual(run('self.items.filter(x, x != "a")'), ['b']);
  assert.equal(run('self.m.x + self.any'), 6);
  assert.deepEqual(run('self.m.y'), { error: 'no such key: y' });
  assert.equal(run("self.when < timestamp('2025-01-01T00:00:00Z')"), true);
  assert.equal(run("self.ttl > duration('1h')"), true);
  assert.deepEqual(run('1 / (self.replicas - 3)'), { error: 'division by zero' });
});

test('optional types: optional selection and indexing, of, none, orValue, hasValue', () => {
  assert.equal(run('self.?name.orValue("z")'), 'abc');
  assert.equal(run('self.?name.orValue("z")', { replicas: 1 }), 'z');
  assert.equal(run('self.m[?"q"].orValue(5)'), 5);
  assert.equal(run('self.m.?x.hasValue()'), true);
  assert.equal(run('optional.of(1).value() + optional.none().orValue(2)'), 3);
  assert.equal(run('optional.of(1) == optional.of(1) && optional.none() != optional.of(1)'), true);
});

test('cost: literals and declared bounds keep estimates small, unbounded lists multiply', () => {
  const bounded = compileExpression('self.name.startsWith("a")', { variables: { self } });
  assert.ok(bounded.estimatedCost!.max < 10);
  const unbounded = compileExpression('self.items.all(x, self.items.all(y, x == y))', { variables: { self } });
  assert.ok(unbounded.estimatedCost!.max > 1_000_000);
  const c = compileExpression('self.items.all(x, self.items.all(y, x != y || x == y))', { variables: { self } });
  const r = evaluate(c.program!, { self: toCelInput({ items: Array.from({ length: 200 }, (_, i) => String(i)) }, self) }, { costBudget: 1000 });
  assert.equal(r.error, 'operation cancelled: actual cost limit exceeded');
});
