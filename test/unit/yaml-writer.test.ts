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

/** CPU milliseconds this process spends writing `size` bytes of one long line (other processes do not count). */
function cpuMsToWrite(size: number): { ms: number; out: string; big: string } {
  const big = 'x'.repeat(size);
  const before = process.cpuUsage();
  const out = toYaml({ data: { blob: big, spaced: 'a b '.repeat(size / 40).trim() } });
  const used = process.cpuUsage(before);
  return { ms: (used.user + used.system) / 1000, out, big };
}

test('a multi-megabyte single-line string is written whole, in linear time', () => {
  const small = cpuMsToWrite(1024 * 1024);
  const large = cpuMsToWrite(4 * 1024 * 1024);
  assert.ok(large.out.startsWith(`data:\n  blob: ${large.big}\n`));
  // Four times the input costs about four times the CPU; a quadratic writer would cost sixteen.
  assert.ok(large.ms < Math.max(small.ms, 5) * 10, `1 MiB: ${small.ms} ms, 4 MiB: ${large.ms} ms of CPU`);
});

test('literal blocks: chomping indicators and indentation hints (as go-yaml v2.4.3 writes them)', () => {
  assert.equal(toYaml({ a: 'x\ny' }), 'a: |-\n  x\n  y\n');
  assert.equal(toYaml({ a: 'x\ny\n' }), 'a: |\n  x\n  y\n');
  assert.equal(toYaml({ a: 'x\n\n' }), 'a: |+\n  x\n\n');
  assert.equal(toYaml({ a: 'x\n\n', b: 1 }), 'a: |+\n  x\n\nb: 1\n');
  assert.equal(toYaml({ a: ' x\ny' }), 'a: |2-\n   x\n  y\n');
});
