/**
 * List concatenation in src/cel: long `map`/`filter` chains evaluate (they overflowed the stack with
 * @bufbuild/cel's nested concatenation), and appending to a list never changes it or another list
 * built from it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileExpression, DYN, evaluate, fromCel } from '../../src/cel/index.js';

function run(expression: string, self?: unknown): unknown {
  const compiled = compileExpression(expression, { variables: self === undefined ? {} : { self: DYN } });
  assert.ok(compiled.ok && compiled.program !== undefined, String(compiled.errors));
  const out = evaluate(compiled.program, self === undefined ? {} : { self }, { costBudget: 1e9 });
  assert.equal(out.error, undefined, out.error);
  return fromCel(out.value);
}

test('a map and filter chain over 25,000 elements evaluates', () => {
  const strs = Array.from({ length: 25_000 }, (_, i) => (i % 2 === 0 ? 'a' : 'b'));
  assert.equal(run("self.map(s, s + 'x').filter(t, t != 'ax').size()", strs), 12_500);
  assert.deepEqual(run("self.map(s, s + 'x').filter(t, t != 'ax')", strs.slice(0, 4)), ['bx', 'bx']);
});

test('appending to a list leaves it, and the lists built from it, as they were', () => {
  assert.deepEqual(run('[[1] + [2]].map(x, [x + [3], x + [4], x])'), [
    [
      [1, 2, 3],
      [1, 2, 4],
      [1, 2],
    ],
  ]);
  assert.equal(run('[[1] + [2]].all(x, (x + [3]) + [5] == [1, 2, 3, 5] && x + [4] == [1, 2, 4] && x == [1, 2])'), true);
  assert.deepEqual(run('[] + [] + [1] + []'), [1]);
});
