/**
 * The Redis backend's object serialisation: the JSON split around metadata.resourceVersion must
 * rejoin to exactly what MemoryStorage stores, also when the object's own data contains the fixed
 * placeholder the split tries first (it then falls back to a random one).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FIXED_MARKER, splitAroundResourceVersion } from '../../src/storage/redis/json.js';

/** What MemoryStorage stores for `object` at version `rv`. */
function memoryJson(object: Record<string, unknown>, rv: string): string {
  const metadata = object.metadata as Record<string, unknown>;
  return JSON.stringify({ ...object, metadata: { ...metadata, resourceVersion: rv } });
}

describe('splitAroundResourceVersion', () => {
  test('before + rv + after is byte-identical to the stored JSON, with and without a previous resourceVersion', () => {
    const fresh = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', namespace: 'n' }, data: { k: 'v', empty: '' }, list: [], obj: {} };
    const stored = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', resourceVersion: '7', uid: 'u' }, data: { n: 1.5e300 } };
    for (const object of [fresh, stored]) {
      const { before, after } = splitAroundResourceVersion(object);
      assert.equal(before + '42' + after, memoryJson(object, '42'));
      assert.ok(!before.includes(FIXED_MARKER) && !after.includes(FIXED_MARKER));
    }
  });

  test('data containing the fixed placeholder, even quoted as a whole value, is kept and split correctly', () => {
    const object = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a', labels: { x: FIXED_MARKER } }, data: { [FIXED_MARKER]: FIXED_MARKER } };
    const { before, after } = splitAroundResourceVersion(object);
    const joined = before + '9' + after;
    assert.equal(joined, memoryJson(object, '9'));
    const parsed = JSON.parse(joined) as { metadata: { resourceVersion: string; labels: { x: string } }; data: Record<string, string> };
    assert.equal(parsed.metadata.resourceVersion, '9');
    assert.equal(parsed.metadata.labels.x, FIXED_MARKER);
    assert.equal(parsed.data[FIXED_MARKER], FIXED_MARKER);
  });

  test('bigint values are written as JSON integers with every digit', () => {
    const object = { kind: 'X', metadata: { name: 'b' }, spec: { big: 123456789012345678901234567890n } };
    const { before, after } = splitAroundResourceVersion(object);
    assert.equal(before + '3' + after, '{"kind":"X","metadata":{"name":"b","resourceVersion":"3"},"spec":{"big":123456789012345678901234567890}}');
  });
});
