/**
 * The YAML reader: go-yaml v2's alias budget and its messages, self-containing anchors, YAML 1.1 key
 * resolution in duplicate reports, forbidden keys, nesting after expansion, first document only.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ForbiddenKeyError } from '../../src/codec/json-text.js';
import { readYaml, yamlBodyText, YamlDecodeError } from '../../src/codec/yaml-text.js';

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

test("plain scalars, as values and as keys, read as kube's YAML-to-JSON step reads them (golden from sigs.k8s.io/yaml)", () => {
  // Written by tools/goldens (`yamlscalars`) from test/fixtures/yaml-scalars/scalars.json.
  const golden = JSON.parse(
    readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'golden', 'yaml-scalars', 'scalars.json'), 'utf8'),
  ) as { cases: { document: string; json?: unknown; error?: string }[] };
  assert.ok(golden.cases.length > 300);
  for (const c of golden.cases) {
    const want = c.error !== undefined ? { error: c.error } : { value: c.json };
    let got: unknown;
    try {
      got = { value: read(c.document).value };
    } catch (err) {
      got = { error: err instanceof YamlDecodeError ? err.message : String(err) };
    }
    assert.deepEqual(got, want, JSON.stringify(c.document));
  }
  // Numbers go-yaml reads that YAML 1.1 alone would leave as text, and the reverse.
  assert.deepEqual(read('a: 1e5\nb: 15e-1\nc: 08\nd: 0o17\ne: 1:30\nf: 2001-12-14\n').value, { a: 100000, b: 1.5, c: 8, d: 15, e: '1:30', f: '2001-12-14' });
});

test('keys of different Go types never repeat one another; the same key in two notations does', () => {
  const r = read('1e5: a\n100000: b\n0x10: c\n16: d\n');
  assert.deepEqual(r.duplicates, ['line 4: key 16 already set in map']);
});

/** What reading `text` gives, value or error, with or without the one-line JSON shortcut. */
function outcome(text: string, maxDepth: number, jsonShortcut: boolean): unknown {
  try {
    const parsed = readYaml(text, { maxDepth, jsonShortcut });
    return { value: parsed.value, keys: JSON.stringify(parsed.value), duplicates: parsed.duplicates };
  } catch (err) {
    return { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}

test('one-line JSON, as clients send it, reads the same with the JSON shortcut as through the YAML reader', () => {
  const cases = [
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"on":"yes"}},"data":{"k":"v: #x &y *z"}}\n',
    ' {"a": 1.5, "b": [true, false, null], "c": {}, "d": [], "e": -0, "f": 0.001} ',
    '{"e1":1e5,"e2":1E+2,"e3":15e-1,"e4":0.1e-2,"e5":-2.5E-3}',
    '{"big":12345678901234567890,"unsafe":9007199254740993,"float":1.0,"over":1e400}',
    '{"a":1,"b":{"c":1},"a":2}', // repeated keys: reported with YAML's line numbers
    '{"__proto__":{"x":1}}',
    '{"\\u005f_proto__":1}',
    '{"a":\t1}',
    '{"a":"x\u0085y"}', // a YAML 1.1 line break inside a string
    '{"a":"x\u2028y","b":"\\u2028\\ud83d\\ude00\\/\\b"}',
    '{"a":1} # comment',
    '{"a":1}\n---\n{"b":2}\n',
    '{"a":[1,2,}',
    '{"' + 'k'.repeat(2000) + '":1}',
    '{"1":1,"0":2,"b":3,"a":4}',
  ];
  for (const text of cases) assert.deepEqual(outcome(text, 100, true), outcome(text, 100, false), JSON.stringify(text));
  // Nesting at and around the limit, with scalar and empty leaves.
  for (const leaf of ['1', '{}', '[]'])
    for (let depth = 1; depth <= 12; depth++) {
      const text = '{"x":' + '{"a":'.repeat(depth) + leaf + '}'.repeat(depth) + '}';
      assert.deepEqual(outcome(text, 10, true), outcome(text, 10, false), `depth ${depth}, leaf ${leaf}`);
    }
});

test('random one-line JSON documents read the same with and without the JSON shortcut', () => {
  let seed = 7;
  const random = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const pieces = [
    'a',
    'Z',
    ' ',
    ':',
    '#',
    '-',
    '&',
    '*',
    '|',
    "'",
    '"',
    '\\',
    '/',
    '\t',
    '\u0085',
    '\u2028',
    'é',
    '😀',
    '\u0000',
    '{',
    ']',
    ',',
    'yes',
    'on',
    '~',
    '1e5',
    '<<',
  ];
  const numbers = ['0', '-0', '1', '-1', '1.5', '1.0', '1e5', '15e-1', '12345678901234567890', '3.25', '1e400'];
  const value = (depth: number): string => {
    const r = random();
    if (depth > 4 || r < 0.3)
      return pick([
        () => JSON.stringify(Array.from({ length: Math.floor(random() * 5) }, () => pick(pieces)).join('')),
        () => pick(numbers),
        () => pick(['true', 'false', 'null']),
      ])();
    if (r < 0.65) {
      const keys = Array.from({ length: Math.floor(random() * 4) }, () => (random() < 0.2 ? pick(['a', 'b']) : pick(pieces) + pick(pieces)));
      return '{' + keys.map((k) => JSON.stringify(k) + pick([':', ': ']) + value(depth + 1)).join(pick([',', ', '])) + '}';
    }
    return '[' + Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1)).join(',') + ']';
  };
  for (let i = 0; i < 5000; i++) {
    const text = `{"k":${value(0)}}${pick(['', '\n', ' '])}`;
    const maxDepth = pick([10, 6, 4]);
    assert.deepEqual(outcome(text, maxDepth, true), outcome(text, maxDepth, false), JSON.stringify(text));
  }
});

test('the objects of the validation, defaulting and managedFields fixtures read the same with and without the JSON shortcut', () => {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'fixtures');
  const files = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : f.endsWith('.json') ? [join(dir, f)] : []));
  let objects = 0;
  /** Every Kubernetes object (a map with apiVersion and kind) anywhere in `value`. */
  const visit = (value: unknown, file: string): void => {
    if (typeof value !== 'object' || value === null) return;
    if (Array.isArray(value)) return value.forEach((v) => visit(v, file));
    const item = value as Record<string, unknown>;
    if (typeof item.apiVersion === 'string' && typeof item.kind === 'string') {
      const text = JSON.stringify(item);
      assert.deepEqual(outcome(text, 10000, true), outcome(text, 10000, false), file);
      objects++;
    }
    for (const v of Object.values(item)) visit(v, file);
  };
  for (const file of ['validation', 'defaulting', 'managedfields'].flatMap((d) => files(join(root, d)))) visit(JSON.parse(readFileSync(file, 'utf8')), file);
  assert.ok(objects > 1000, `${objects} objects read`);
});

test("a body that is not UTF-8 is refused in go-yaml's words, whichever check finds it", () => {
  const cases: Array<[number[], string]> = [
    [[0x7b, 0xff, 0x7d], 'invalid leading UTF-8 octet'],
    [[0x61, 0xc3], 'incomplete UTF-8 octet sequence'],
    [[0x61, 0xc3, 0x41], 'invalid trailing UTF-8 octet'],
    [[0xc0, 0xaf], 'invalid length of a UTF-8 sequence'],
    [[0xed, 0xa0, 0x80], 'invalid Unicode character'],
    [[0xf4, 0x90, 0x80, 0x80], 'invalid Unicode character'],
  ];
  for (const [bytes, message] of cases) assert.throws(() => yamlBodyText(Buffer.from(bytes)), new YamlDecodeError(message), message);
  assert.equal(yamlBodyText(Buffer.from('\ufeffa: "é😀"\n')), 'a: "é😀"\n');
});
