/**
 * A change's objects are parsed once per process and shared by its readers (watch selectors and
 * frames, the node authorizer's graph): the same object for the same change, undefined for an
 * object that does not decode, and a fresh parse once the change is no longer recent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventDecodes, parsedIfRecent, parsedObject, parsedObjects } from '../../src/storage/parsed-changes.js';
import type { ChangeEvent } from '../../src/storage/storage.js';

function change(rv: number, json: string, prevJson?: string): ChangeEvent {
  return prevJson === undefined
    ? { type: 'MODIFIED', key: `default/p${rv}`, resourceVersion: String(rv), json }
    : { type: 'MODIFIED', key: `default/p${rv}`, resourceVersion: String(rv), json, prevJson };
}

test('every reader of a change gets the one parse of its object', () => {
  const e = change(1, '{"metadata":{"name":"a","resourceVersion":"1"},"spec":{"nodeName":"n1"}}', '{"metadata":{"name":"a"},"spec":{}}');
  assert.equal(parsedIfRecent(e), undefined, 'nothing parsed before a reader asks');
  const first = parsedObject(e);
  assert.deepEqual(first, { metadata: { name: 'a', resourceVersion: '1' }, spec: { nodeName: 'n1' } });
  assert.equal(parsedObject(e), first);
  assert.equal(parsedIfRecent(e), first);
  const both = parsedObjects(e);
  assert.equal(both.current, first);
  assert.deepEqual(both.previous, { metadata: { name: 'a' }, spec: {} });
  assert.equal(parsedObjects(e).previous, both.previous);
  assert.equal(eventDecodes(e), true);
});

test('an object that is not JSON, or has no metadata, does not decode', () => {
  for (const json of ['{"metadata":', '[1,2]', '{"kind":"Pod"}']) {
    const e = change(2, json);
    assert.equal(parsedObject(e), undefined, json);
    assert.equal(eventDecodes(e), false, json);
  }
});

test('a change read again after thousands of others is parsed again, to an equal object', () => {
  const e = change(3, '{"metadata":{"name":"old"}}');
  const first = parsedObject(e);
  for (let i = 0; i < 5000; i++) parsedObject(change(10 + i, `{"metadata":{"name":"x${i}"}}`));
  assert.equal(parsedIfRecent(e), undefined);
  const again = parsedObject(e);
  assert.notEqual(again, first);
  assert.deepEqual(again, first);
});
