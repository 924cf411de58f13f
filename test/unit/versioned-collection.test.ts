import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VersionedCollection } from '../../src/storage/versioned-collection.js';
import type { ChangeEvent } from '../../src/storage/storage.js';

function change(rv: number): ChangeEvent {
  return { type: 'ADDED', key: `ns/o-${rv}`, resourceVersion: String(rv), json: `{"metadata":{"name":"o-${rv}","resourceVersion":"${rv}"}}` };
}

test('changesAfter returns exactly the kept changes newer than the version, oldest first', () => {
  // Versions 5, 7, ..., 203 (gaps, as a type's versions have when other writes share a counter),
  // with only the newest 60 kept.
  const collection = new VersionedCollection('3', { historyMs: 3_600_000, historyMaxEvents: 60 });
  const applied: ChangeEvent[] = [];
  for (let rv = 5; rv <= 203; rv += 2) {
    const e = change(rv);
    collection.apply(e, 0);
    applied.push(e);
  }
  const kept = applied.slice(-60);
  assert.equal(collection.changesAfter('0').length, 60, 'before the oldest kept change: all kept changes');
  for (const after of ['0', '4', '84', '85', '86', '100', '101', '202', '203', '204', '1000']) {
    const expected = kept.filter((e) => Number(e.resourceVersion) > Number(after));
    assert.deepEqual(collection.changesAfter(after), expected, `after ${after}`);
  }
});
