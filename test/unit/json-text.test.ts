/**
 * The JSON reader: Go's syntax error wording (as kube-apiserver quotes it), the nesting limit,
 * duplicate keys with Go's merge semantics, forbidden keys however spelled, and number literals.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ForbiddenKeyError, JsonSyntaxError, numberLiteral, readJson } from '../../src/codec/json-text.js';

const read = (text: string, maxDepth = 100): ReturnType<typeof readJson> => readJson(text, { maxDepth });

function syntaxError(text: string): string {
  try {
    read(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) return err.message;
    throw err;
  }
  throw new Error(`${text} parsed`);
}

test("syntax errors are worded as Go's encoding/json words them", () => {
  const cases: Array<[string, string]> = [
    ['', 'unexpected end of JSON input'],
    ['{"a":1', 'unexpected end of JSON input'],
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a":1 "b":2}', "invalid character '\"' after object key:value pair"],
    ['[1 2]', "invalid character '2' after array element"],
    ['[1,]', "invalid character ']' looking for beginning of value"],
    ['{"a":"b"} x', "invalid character 'x' after top-level value"],
    ['-a', "invalid character 'a' in numeric literal"],
    ['1.e5', "invalid character 'e' after decimal point in numeric literal"],
    ['"\\x"', "invalid character 'x' in string escape code"],
    ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
    ['"a\u0001"', "invalid character '\\x01' in string literal"],
    ['tru ', "invalid character ' ' in literal true (expecting 'e')"],
  ];
  for (const [text, message] of cases) assert.equal(syntaxError(text), message, JSON.stringify(text));
});

test("nesting beyond the limit is refused while reading, as Go's scanner words it", () => {
  assert.equal(syntaxError(`${'['.repeat(101)}${']'.repeat(101)}`), "invalid character '[' exceeded max depth");
  assert.deepEqual(read(`${'['.repeat(100)}${']'.repeat(100)}`).duplicates, []);
  // A million levels cost a linear scan and no stack.
  const deep = `${'{"a":'.repeat(1_000_000)}1${'}'.repeat(1_000_000)}`;
  assert.throws(() => read(deep, 1000), /exceeded max depth/);
});

test('repeated keys are reported with their paths; objects merge into the first, others replace', () => {
  const r = read('{"a":{"b":1},"a":{"c":2},"d":[1],"d":[2],"e":1,"e":"x","l":[{"n":1,"n":2}]}');
  assert.deepEqual(r.value, { a: { b: 1, c: 2 }, d: [2], e: 'x', l: [{ n: 2 }] });
  assert.deepEqual(
    r.duplicates.map((d) => d.path),
    ['a', 'd', 'e', 'l[0].n'],
  );
});

test('forbidden keys are refused after escapes are decoded; as values they are plain strings', () => {
  for (const text of ['{"__proto__":1}', '{"\\u005f_proto__":1}', '{"a":{"constructor":1}}', '[{"prototype":1}]']) {
    assert.throws(() => read(text), ForbiddenKeyError, text);
  }
  assert.equal(read('{"a":"\\u005f_proto__"}').value instanceof Object, true);
});

test("number literals JavaScript cannot hold as written are kept for Go's messages", () => {
  const r = read('{"big":1e400,"float":1.0,"exp":1e3,"huge":9007199254740993,"plain":12,"frac":1.5}');
  const obj = r.value as Record<string, number>;
  assert.equal(numberLiteral(r, obj, 'big'), '1e400');
  assert.equal(numberLiteral(r, obj, 'float'), '1.0');
  assert.equal(numberLiteral(r, obj, 'exp'), '1e3');
  assert.equal(numberLiteral(r, obj, 'huge'), '9007199254740993');
  assert.equal(numberLiteral(r, obj, 'plain'), undefined);
  assert.equal(numberLiteral(r, obj, 'frac'), undefined);
});
