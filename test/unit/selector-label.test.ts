import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/api/errors.js';
import { compileLabelSelector, labelSelectorString, parseLabelSelector } from '../../src/selectors/label-selector.js';

const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must " +
  "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is " +
  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

function badRequest(selector: string, message: string): void {
  assert.throws(
    () => parseLabelSelector(selector),
    (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.code, 400);
      assert.equal(err.reason, 'BadRequest');
      assert.equal(err.message, message);
      return true;
    },
  );
}

describe('label selector parsing', () => {
  test('operators and canonical form', () => {
    const reqs = parseLabelSelector('x in (foo,,baz),y,z notin (),  w != a , !v, u==b, t=c, s>3, r<1');
    assert.equal(labelSelectorString(reqs), 'r<1,s>3,t=c,u==b,!v,w!=a,x in (,baz,foo),y,z notin ()');
  });

  test('whitespace is a delimiter', () => {
    assert.deepEqual(parseLabelSelector(' a = b ,\tc\n'), [
      { key: 'a', operator: '=', values: ['b'] },
      { key: 'c', operator: 'exists', values: [] },
    ]);
  });

  test('empty values', () => {
    assert.deepEqual(parseLabelSelector('a='), [{ key: 'a', operator: '=', values: [''] }]);
    assert.deepEqual(parseLabelSelector('a=,b!='), [
      { key: 'a', operator: '=', values: [''] },
      { key: 'b', operator: '!=', values: [''] },
    ]);
  });

  test('in and notin are values inside parentheses', () => {
    assert.deepEqual(parseLabelSelector('a in (in,notin)'), [{ key: 'a', operator: 'in', values: ['in', 'notin'] }]);
  });

  test('empty selector has no requirements', () => {
    assert.deepEqual(parseLabelSelector(''), []);
    assert.deepEqual(parseLabelSelector('   '), []);
  });

  test("syntax errors are 400 BadRequest with kube's messages", () => {
    badRequest('a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
    badRequest('a,', "found '', expected: identifier after ','");
    badRequest(',a', "found ',', expected: !, identifier, or 'end of string'");
    badRequest('a=b c', "found 'c', expected: ',' or 'end of string'");
    badRequest('a in (x', "unable to parse requirement: found '', expected: ',' or ')'");
    badRequest('a in x', "unable to parse requirement: found 'x' expected: '('");
    badRequest('a=(', "unable to parse requirement: found '(', expected: identifier");
    badRequest('!a=b', "found '=', expected: ',' or 'end of string'");
    badRequest('k>x', "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer");
  });

  test('invalid keys and values', () => {
    badRequest(
      'a/b/c=d',
      'unable to parse requirement: <nil>: Invalid value: "a/b/c": a valid label key must consist of alphanumeric ' +
        "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or " +
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix " +
        "and '/' (e.g. 'example.com/MyName')",
    );
    badRequest(
      'a=b@c',
      'unable to parse requirement: values[0][a]: Invalid value: "b@c": a valid label must be an empty string or ' +
        "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. " +
        "'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    );
    const long = 'v'.repeat(64);
    badRequest(`a in (ok,${long})`, `unable to parse requirement: values[1][a]: Invalid value: "${long}": must be no more than 63 bytes`);
    badRequest(
      'a in (b@,c@)',
      `unable to parse requirement: [values[0][a]: Invalid value: "b@": ${VALUE_MSG}, values[1][a]: Invalid value: "c@": ${VALUE_MSG}]`,
    );
  });
});

describe('label selector matching', () => {
  const match = (selector: string, labels: Record<string, string> | undefined): boolean => compileLabelSelector(selector)(labels);

  test('equality', () => {
    assert.equal(match('app=web', { app: 'web' }), true);
    assert.equal(match('app==web', { app: 'db' }), false);
    assert.equal(match('app=web', undefined), false);
  });

  test('!= and notin match a missing label', () => {
    assert.equal(match('app!=web', {}), true);
    assert.equal(match('app!=web', undefined), true);
    assert.equal(match('app!=web', { app: 'web' }), false);
    assert.equal(match('app notin (a,b)', {}), true);
    assert.equal(match('app notin (a,b)', { app: 'b' }), false);
  });

  test('in, exists, does not exist', () => {
    assert.equal(match('env in (prod,staging)', { env: 'prod' }), true);
    assert.equal(match('env in (prod,staging)', { env: 'dev' }), false);
    assert.equal(match('env', { env: '' }), true);
    assert.equal(match('env', {}), false);
    assert.equal(match('!env', {}), true);
    assert.equal(match('!env', { env: 'x' }), false);
  });

  test('empty value matches an empty label, not a missing one', () => {
    assert.equal(match('a=', { a: '' }), true);
    assert.equal(match('a=', {}), false);
  });

  test('gt and lt compare integers', () => {
    assert.equal(match('n>3', { n: '4' }), true);
    assert.equal(match('n>3', { n: '3' }), false);
    assert.equal(match('n<3', { n: '-10' }), true);
    assert.equal(match('n<3', { n: '+2' }), true);
    assert.equal(match('n<3', { n: 'x' }), false);
  });

  test('requirements are ANDed', () => {
    assert.equal(match('a=1,b=2', { a: '1', b: '2' }), true);
    assert.equal(match('a=1,b=2', { a: '1' }), false);
  });

  test('empty or undefined selector matches everything', () => {
    assert.equal(compileLabelSelector(undefined)(undefined), true);
    assert.equal(compileLabelSelector('')({ a: 'b' }), true);
  });
});
