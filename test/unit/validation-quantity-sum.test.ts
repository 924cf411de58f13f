/**
 * Quantity sums as Go's resource.Quantity.Add leaves its receiver and Quantity.String() prints it
 * (apimachinery v0.36.4): the expected answers below were recorded from those functions. Pod-level
 * resource defaults and validation messages print such sums.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addQuantities } from '../../src/validation/quantity-sum.js';

/** [a, b, a.Add(b) printed] */
const SUMS: Array<[string, string, string]> = [
  ['250m', '500m', '750m'],
  ['1Gi', '512Mi', '1536Mi'],
  ['1Gi', '1Gi', '2Gi'],
  ['100Mi', '0.5', '104857600500m'],
  ['1', '500m', '1500m'],
  ['1k', '24', '1024'],
  ['1Ki', '1000', '2024'],
  ['0', '1Gi', '1Gi'],
  ['3000', '0', '3k'],
  ['1e3', '1', '1001'],
  ['1.5Gi', '1m', '1610612736001m'],
  ['2Ki', '952', '3000'],
  ['128Mi', '64Mi', '192Mi'],
  ['4Mi', '2Mi', '6Mi'],
  ['1200m', '300m', '1500m'],
  ['1e3', '1Ki', '2024'],
  ['500m', '1Gi', '1073741824500m'],
  ['0.5', '0.5', '1'],
];

test('quantities add up as Go adds and prints them', () => {
  for (const [a, b, sum] of SUMS) assert.equal(addQuantities(a, b), sum, `${a} + ${b}`);
});

test('a quantity that does not parse has no sum', () => {
  assert.equal(addQuantities('1x', '1'), undefined);
});
