/**
 * The YAML reader: go-yaml v2's alias budget and its messages, self-containing anchors, YAML 1.1 key
 * resolution in duplicate reports, forbidden keys, nesting after expansion, first document only.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ForbiddenKeyError } from '../../src/codec/json-text.js';
import { readYaml, YamlDecodeError } from '../../src/codec/yaml-text.js';

const read = (text: string, maxDepth = 100): ReturnType<typeof readYaml> => readYaml(text, { maxDepth });

function laughs(levels: number): string {
  const lines = ['x0: &x0 "lol"'];
  for (let i = 1; i <= levels; i++)
    lines.push(
      `x${i}: &x${i} [${Array(9)
        .fill(`*x${i - 1}`)
        .join(',')}]`,
    );
  return lines.join('\n');
}

test("alias expansion within go-yaml's budget is expanded; beyond it is refused without expanding", () => {
  const three = read(laughs(3)).value as Record<string, unknown[][][]>;
  assert.equal(three.x3?.flat(2).length, 729);
  const started = Date.now();
  for (const levels of [4, 9, 20]) assert.throws(() => read(laughs(levels)), new YamlDecodeError('document contains excessive aliasing'));
  assert.ok(Date.now() - started < 1000);
});

test('expanded aliases are separate copies: changing one occurrence never shows in another', () => {
  const v = read('a: &a {k: 1}\nb: *a\n').value as Record<string, Record<string, number>>;
  v.a.k = 2;
  assert.equal(v.b?.k, 1);
});

test('an anchor whose value refers to itself is refused as go-yaml words it', () => {
  assert.throws(() => read('metadata: &m {name: x, self: *m}\n'), new YamlDecodeError("anchor 'm' value contains itself"));
  assert.throws(() => read('a: *nope\n'), new YamlDecodeError("unknown anchor 'nope' referenced"));
});

test('repeated keys: the last wins; reported as go-yaml resolves YAML 1.1 keys', () => {
  const r = read('n: 1\ny: 2\non: 3\nyes: 4\na: 5\na: 6\n');
  assert.deepEqual(r.value, { false: 1, true: 4, a: 6 });
  assert.deepEqual(r.duplicates, ['line 3: key true already set in map', 'line 4: key true already set in map', 'line 6: key "a" already set in map']);
});

test('forbidden keys and non-scalar keys are refused', () => {
  assert.throws(() => read('a: {__proto__: 1}\n'), ForbiddenKeyError);
  assert.throws(() => read('? [a]\n: 1\n'), YamlDecodeError);
});

test('nesting counts after alias expansion', () => {
  const deepish = `a: &a ${'['.repeat(60)}${']'.repeat(60)}\nb: [*a]\n`;
  assert.doesNotThrow(() => read(deepish));
  assert.throws(() => read(`a: &a ${'['.repeat(60)}${']'.repeat(60)}\nb: &b [*a]\nc: [[*b]]\n`, 62), /exceeded max depth of 62/);
  assert.throws(() => read(`a: ${'['.repeat(150)}${']'.repeat(150)}\n`), /exceeded max depth of 100/);
});

test('only the first document is read; YAML 1.1 scalars resolve as go-yaml resolves them', () => {
  assert.deepEqual(read('a: 1\n---\nb: 2\n').value, { a: 1 });
  assert.deepEqual(read('a: yes\nb: 0777\nc: ~\nd: "0777"\n').value, { a: true, b: 511, c: null, d: '0777' });
  assert.throws(() => read('a: .nan\n'), /json: unsupported value: NaN/);
});
