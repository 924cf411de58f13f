/**
 * `pattern` in custom resource schemas runs with Go's regexp semantics (RE2), as kube-apiserver's:
 * Go syntax JavaScript lacks works, JavaScript-only syntax is refused with Go's message, and a
 * pattern that backtracks exponentially in JavaScript answers in linear time.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { patternError } from '../../src/crd/cr-pattern.js';
import { validateBySchema } from '../../src/crd/cr-schema-validation.js';

const schemaWith = (pattern: string) => ({ type: 'object', properties: { spec: { type: 'object', properties: { s: { type: 'string', pattern } } } } });
const check = (key: string, pattern: string, s: string) => validateBySchema({ spec: { s } }, key, schemaWith(pattern));

test('Go syntax JavaScript lacks: inline flags, POSIX classes, \\z', () => {
  assert.deepEqual(check('re2-flags', '(?i)^abc$', 'ABC'), []);
  assert.equal(check('re2-flags', '(?i)^abc$', 'abd').length, 1);
  assert.deepEqual(check('re2-posix', '^[[:alpha:]]+$', 'Hello'), []);
  assert.equal(check('re2-posix', '^[[:alpha:]]+$', 'Hello1').length, 1);
  assert.deepEqual(check('re2-z', '^a+\\z', 'aaa'), []);
});

test('a failing pattern is reported with kube-openapi words', () => {
  assert.deepEqual(check('re2-msg', '^[a-z]+$', 'A'), [
    { reason: 'FieldValueInvalid', field: 'spec.s', message: `Invalid value: "A": spec.s in body should match '^[a-z]+$'` },
  ]);
});

test('patterns Go refuses get Go parser messages', () => {
  assert.equal(patternError('(a)\\1'), 'error parsing regexp: invalid escape sequence: `\\1`');
  assert.equal(patternError('a(?=b)'), 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`');
  assert.equal(patternError('(abc'), 'error parsing regexp: missing closing ): `(abc`');
  assert.equal(patternError('^(a+)+$'), undefined);
});

test('a hostile pattern answers in linear time (no ReDoS)', () => {
  const hostile = '^(a+)+$';
  const input = `${'a'.repeat(50_000)}!`;
  // JavaScript's backtracking engine would not finish this in any useful time for even 40 characters.
  const start = process.hrtime.bigint();
  const causes = check('re2-redos', hostile, input);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  assert.equal(causes.length, 1);
  assert.ok(ms < 2000, `took ${ms} ms`);
  const nested = '^((a|aa)+|(a|a?)+)*b$';
  const t2 = process.hrtime.bigint();
  assert.equal(check('re2-redos2', nested, 'a'.repeat(5_000)).length, 1);
  assert.ok(Number(process.hrtime.bigint() - t2) / 1e6 < 2000);
});
