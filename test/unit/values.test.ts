/**
 * The shared accessors of src/api/values.ts: every kind of JSON value (and the non-JSON values a
 * decoder or a caller can hand them) against every accessor, so the rules the former local copies
 * followed (arrays are not objects, null is absent, numbers pass as they are) stay pinned.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  arrayField,
  asArray,
  asBoolean,
  asNumber,
  asObject,
  asString,
  booleanField,
  booleanFieldOrUndefined,
  booleanOrUndefined,
  isObject,
  numberField,
  numberOrUndefined,
  objectElements,
  objectField,
  objectFieldOrUndefined,
  objectOrUndefined,
  stringElements,
  stringField,
  stringFieldOrUndefined,
  stringOrUndefined,
} from '../../src/api/values.js';
import { isObject as objectUtilIsObject, jsonEqual, jsonKey, stringField as objectUtilStringField } from '../../src/api/object-util.js';

const obj = { a: 1 };
const arr = [1, 'x'];
const bytes = new Uint8Array([1]);
/** One value of each kind, in a fixed order the expectations below follow. */
const SAMPLES: ReadonlyArray<[string, unknown]> = [
  ['undefined', undefined],
  ['null', null],
  ['empty string', ''],
  ['string', 'text'],
  ['zero', 0],
  ['number', 42],
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['false', false],
  ['true', true],
  ['object', obj],
  ['array', arr],
  ['bytes', bytes],
  ['bigint', 7n],
];

function each(expected: unknown[], read: (v: unknown) => unknown): void {
  assert.equal(expected.length, SAMPLES.length);
  SAMPLES.forEach(([name, v], i) => assert.deepEqual(read(v), expected[i], `${name}`));
}

test('isObject accepts objects (typed arrays included) and refuses null, arrays and scalars', () => {
  each([false, false, false, false, false, false, false, false, false, false, true, false, true, false], isObject);
  assert.equal(isObject(Object.create(null)), true);
  assert.equal(objectUtilIsObject, isObject, 'object-util re-exports the same function');
  assert.equal(objectUtilStringField, stringField, 'object-util re-exports the same function');
});

test('the coercions return the value of their type and the empty value for everything else', () => {
  each(['', '', '', 'text', '', '', '', '', '', '', '', '', '', ''], asString);
  each([0, 0, 0, 0, 0, 42, Number.NaN, Number.POSITIVE_INFINITY, 0, 0, 0, 0, 0, 0], asNumber);
  each([false, false, false, false, false, false, false, false, false, true, false, false, false, false], asBoolean);
  each([{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, obj, {}, bytes, {}], asObject);
  each([[], [], [], [], [], [], [], [], [], [], [], arr, [], []], asArray);
});

test('the coercions return a present value itself and a new empty value each time', () => {
  assert.equal(asObject(obj), obj);
  assert.equal(asArray(arr), arr);
  const a = asObject(undefined);
  a.x = 1;
  assert.deepEqual(asObject(undefined), {});
  asArray(null).push(1);
  assert.deepEqual(asArray(null), []);
});

test('the ...OrUndefined coercions return undefined where the coercions return the empty value', () => {
  const u = undefined;
  each([u, u, '', 'text', u, u, u, u, u, u, u, u, u, u], stringOrUndefined);
  each([u, u, u, u, 0, 42, Number.NaN, Number.POSITIVE_INFINITY, u, u, u, u, u, u], numberOrUndefined);
  each([u, u, u, u, u, u, u, u, false, true, u, u, u, u], booleanOrUndefined);
  each([u, u, u, u, u, u, u, u, u, u, obj, u, bytes, u], objectOrUndefined);
});

test('the field readers coerce o[key] and read a non-object o as an object without fields', () => {
  SAMPLES.forEach(([name, v]) => {
    const o = { f: v };
    assert.deepEqual(stringField(o, 'f'), asString(v), name);
    assert.deepEqual(numberField(o, 'f'), asNumber(v), name);
    assert.deepEqual(booleanField(o, 'f'), asBoolean(v), name);
    assert.deepEqual(objectField(o, 'f'), asObject(v), name);
    assert.deepEqual(arrayField(o, 'f'), asArray(v), name);
    assert.deepEqual(stringFieldOrUndefined(o, 'f'), stringOrUndefined(v), name);
    assert.deepEqual(booleanFieldOrUndefined(o, 'f'), booleanOrUndefined(v), name);
    assert.deepEqual(objectFieldOrUndefined(o, 'f'), objectOrUndefined(v), name);
  });
  assert.equal(objectField({ f: obj }, 'f'), obj);
  for (const holder of [undefined, null, 'f', 3, ['text'], Object.assign(['text'], { f: 'text' })]) {
    assert.equal(stringField(holder, 'f'), '');
    assert.equal(numberField(holder, 'f'), 0);
    assert.equal(booleanField(holder, 'f'), false);
    assert.deepEqual(objectField(holder, 'f'), {});
    assert.deepEqual(arrayField(holder, 'f'), []);
    assert.equal(stringFieldOrUndefined(holder, 'f'), undefined);
    assert.equal(booleanFieldOrUndefined(holder, 'f'), undefined);
    assert.equal(objectFieldOrUndefined(holder, 'f'), undefined);
  }
  assert.equal(stringField({}, 'missing'), '');
  assert.equal(stringField({ f: 'x' }, 'toString'), '', 'inherited members are not string fields');
});

test('the element readers keep the elements of their type in order', () => {
  const mixed = ['a', 1, null, { b: 2 }, ['c'], 'd', undefined, bytes];
  assert.deepEqual(stringElements(mixed), ['a', 'd']);
  assert.deepEqual(objectElements(mixed), [{ b: 2 }, bytes]);
  for (const notList of [undefined, null, 'ab', { 0: 'a', length: 1 }]) {
    assert.deepEqual(stringElements(notList), []);
    assert.deepEqual(objectElements(notList), []);
  }
});

test('jsonKey is the same text for two values exactly when jsonEqual holds', () => {
  const values: unknown[] = [
    { verbs: ['get', 'list'], resources: ['pods'], apiGroups: [''] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['list', 'get'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'], resourceNames: undefined },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'], resourceNames: [] },
    { a: { y: 1, x: [{ q: 2, p: 1 }] } },
    { a: { x: [{ p: 1, q: 2 }], y: 1 } },
    { a: { x: [{ p: 1, q: '2' }], y: 1 } },
    ['a', 'b'],
    ['b', 'a'],
    'a',
    1,
    null,
  ];
  let equalPairs = 0;
  for (const a of values) {
    for (const b of values) {
      assert.equal(jsonKey(a) === jsonKey(b), jsonEqual(a, b), `${JSON.stringify(a)} and ${JSON.stringify(b)}`);
      if (a !== b && jsonEqual(a, b)) equalPairs++;
    }
  }
  // Members in another order, an undefined member and nested objects in another order are equal.
  assert.equal(equalPairs, 8);
});
