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
  assert.match(compileError('self +'), /^ERROR: <input>:1:7: Syntax error: mismatched input '<EOF>' expecting/);
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

test('Kubernetes libraries: lists, strings, regex, URLs, quantity, IP/CIDR, format, semver', () => {
  const cases: [string, unknown][] = [
    ['[1,2,3].isSorted() && [3,1].min() == 1 && [1,5].max() == 5 && [1,2].sum() == 3', true],
    ['[1,2,3].indexOf(2) + [1,2,2].lastIndexOf(2)', 3],
    ['sets.contains([1,2,3], [2]) && sets.intersects([1], [1,4]) && sets.equivalent([1,2], [2,1])', true],
    ["'abc'.charAt(1) + 'ABC'.lowerAscii() + ' x '.trim()", 'babcx'],
    ["'a b c'.split(' ', 2)", ['a', 'b c']],
    ["['a','b'].join('-')", 'a-b'],
    ["'%d items of %s'.format([3, 'x'])", '3 items of x'],
    ["'a1b22c333'.findAll('[0-9]+')", ['1', '22', '333']],
    ["'abc123def'.find('[0-9]+')", '123'],
    ["'x'.find('(?=a)')", { error: 'Illegal regex: error parsing regexp: invalid or unsupported Perl syntax: `(?=`' }],
    ["url('https://example.com:8080/a?x=1&x=2').getQuery()", { x: ['1', '2'] }],
    ["url('https://example.com:8080/a').getPort() + url('https://[::1]/').getHostname()", '8080::1'],
    ["quantity('1') == quantity('1000m') && quantity('1Gi').isGreaterThan(quantity('1G'))", true],
    ["quantity('1Ki').add(quantity('1')).compareTo(quantity('1025'))", 0],
    ["quantity('1.5').asInteger()", { error: 'cannot convert value to integer' }],
    ["cidr('10.0.0.0/8').containsIP('10.1.2.3') && ip('::1').isLoopback() && ip('10.0.0.1').family() == 4", true],
    ["string(cidr('10.1.2.3/8').masked())", '10.0.0.0/8'],
    ["ip('010.0.0.1')", { error: 'IP Address "010.0.0.1" parse error during conversion from string: ParseAddr("010.0.0.1"): unable to parse IP' }],
    ["format.dns1123Label().validate('abc').hasValue() || format.named('nope').hasValue()", false],
    ["semver('1.2.3').isLessThan(semver('1.10.0')) && semver('v1.2', true).minor() == 2 && !isSemver('1.2')", true],
  ];
  for (const [expr, want] of cases) assert.deepEqual(run(expr, {}, {}), want, expr);
});
