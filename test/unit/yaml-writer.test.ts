/**
 * The YAML writer against kube-apiserver's own output: each fixture pair was read from the reference
 * as JSON and as YAML, and the writer must turn the JSON into the same bytes.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { toYaml } from '../../src/codec/yaml-writer.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures', 'yaml');

for (const file of readdirSync(FIXTURES).filter((f) => f.endsWith('.json'))) {
  const name = file.replace(/\.json$/, '');
  test(`${name}: the same bytes as kube-apiserver's YAML`, () => {
    const json: unknown = JSON.parse(readFileSync(join(FIXTURES, file), 'utf8'));
    const yaml = readFileSync(join(FIXTURES, `${name}.yaml`), 'utf8');
    assert.equal(toYaml(json), yaml);
  });
}

test('scalars and empty collections', () => {
  assert.equal(toYaml({ a: [], b: {}, c: null, d: true, e: 1.5, f: 1e21, g: 12 }), 'a: []\nb: {}\nc: null\nd: true\ne: 1.5\nf: 1e+21\ng: 12\n');
  assert.equal(toYaml([['a', 'b'], { k: 'v' }]), '- - a\n  - b\n- k: v\n');
});

test('a multi-megabyte single-line string is written whole, in linear time', () => {
  const big = 'x'.repeat(4 * 1024 * 1024);
  const started = Date.now();
  const out = toYaml({ data: { blob: big, spaced: 'a b '.repeat(100_000).trim() } });
  assert.ok(out.startsWith(`data:\n  blob: ${big}\n`));
  assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
});

test('literal blocks: chomping indicators and indentation hints (as go-yaml v2.4.3 writes them)', () => {
  assert.equal(toYaml({ a: 'x\ny' }), 'a: |-\n  x\n  y\n');
  assert.equal(toYaml({ a: 'x\ny\n' }), 'a: |\n  x\n  y\n');
  assert.equal(toYaml({ a: 'x\n\n' }), 'a: |+\n  x\n\n');
  assert.equal(toYaml({ a: 'x\n\n', b: 1 }), 'a: |+\n  x\n\nb: 1\n');
  assert.equal(toYaml({ a: ' x\ny' }), 'a: |2-\n   x\n  y\n');
});
