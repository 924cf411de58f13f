/**
 * Quantity texts as Go's resource.ParseQuantity (apimachinery v0.36.6) reads them: the expected
 * answers below were recorded from that function. A text Go refuses must be refused (client-go
 * cannot decode a list holding it), and an accepted one stored in the form Go prints, whatever its
 * exponent, without building numbers of that size.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalQuantity, compareQuantities, isWholeQuantity } from '../../src/api/quantity.js';
import { QUANTITY_FORMAT_ERROR, QUANTITY_NUMERIC_ERROR, QUANTITY_SUFFIX_ERROR, parseQuantityText } from '../../src/api/quantity-grammar.js';

/** [text, Go's error] */
const REFUSED: Array<[string, string]> = [
  ['abc', QUANTITY_FORMAT_ERROR],
  ['', QUANTITY_FORMAT_ERROR],
  ['1.5.5Gi', QUANTITY_FORMAT_ERROR],
  ['1.5e3Mi', QUANTITY_FORMAT_ERROR],
  ['1e', QUANTITY_SUFFIX_ERROR],
  ['1ee', QUANTITY_SUFFIX_ERROR],
  ['1i', QUANTITY_SUFFIX_ERROR],
  ['1Ki5', QUANTITY_SUFFIX_ERROR],
  ['1m5', QUANTITY_SUFFIX_ERROR],
  ['1e99999999999999999999', QUANTITY_SUFFIX_ERROR],
  ['Ei', QUANTITY_NUMERIC_ERROR],
  ['.e-20', QUANTITY_NUMERIC_ERROR],
];

/** [text, what Go's Quantity.String() gives] */
const ACCEPTED: Array<[string, string]> = [
  ['1e400', '10e399'],
  ['9999999999999999999999999Ei', '9223372036854775807'],
  ['-1', '-1'],
  ['0.1m', '100u'],
  ['1e-400', '1e-9'],
  ['.5', '500m'],
  ['0.0001', '100u'],
  ['1Ki', '1Ki'],
  ['1e1000000000', '10e999999999'],
  ['123456789012345678901234567890', '123456789012345678901234567890'],
  ['1n', '1n'],
  ['1e-10', '1e-9'],
  ['-0', '0'],
  ['+.5m', '500u'],
  ['.', '0'],
  ['+', '0'],
  ['Ki', '0'],
  ['1.5Ki', '1536'],
  ['100000000000000Ei', '9223372036854775807'],
  ['-100000000000000Ei', '-9223372036854775807'],
  ['-0.0000000001', '-1n'],
  ['-1e-20', '-1e-9'],
  ['1e+5', '100e3'],
  ['1e-5', '10e-6'],
  ['1E', '1E'],
  ['1.5E', '1500P'],
  ['0.5Ki', '512'],
  ['1023Ki', '1023Ki'],
  ['1e2147483647', '10e2147483646'],
  ['1e-1000000000', '1e-9'],
];

test('texts Go refuses are refused with its error', () => {
  for (const [text, error] of REFUSED) assert.equal(parseQuantityText(text), error, JSON.stringify(text));
});

test('texts Go accepts are accepted and canonicalised as Go prints them', () => {
  for (const [text, printed] of ACCEPTED) {
    assert.equal(typeof parseQuantityText(text), 'object', JSON.stringify(text));
    assert.equal(canonicalQuantity(text), printed, JSON.stringify(text));
  }
});

test('huge exponents compare and classify without building the number', () => {
  assert.equal(compareQuantities('1e1000000000', '1'), 1);
  assert.equal(compareQuantities('1e-1000000000', '1n'), 0);
  assert.equal(compareQuantities('-1e1000000000', '1'), -1);
  assert.equal(compareQuantities('2e1000000000', '1e1000000000'), 1);
  assert.equal(compareQuantities('1e2147483647', '1e2147483646'), 1);
  assert.equal(isWholeQuantity('1e1000000000'), true);
  assert.equal(isWholeQuantity('1e-1000000000'), false);
});
