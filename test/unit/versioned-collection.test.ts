import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
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

test("history keeps one copy of each object's text when a change carries the replaced object as a text of its own", () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const collection = new VersionedCollection('1', { historyMs: 3_600_000, historyMaxEvents: 1_000_000 });
  const filler = 'x'.repeat(100_000);
  // Texts read from a stream: flat strings of their own, each change's previous object a fresh
  // string equal to the stored one.
  const copy = (s: string): string => Buffer.from(s).toString();
  const text = (rv: number): string => copy(`{"metadata":{"name":"big","resourceVersion":"${rv}"},"data":"${filler}"}`);
  collection.apply({ type: 'ADDED', key: 'ns/big', resourceVersion: '2', json: text(2) }, 0);
  gc();
  const before = process.memoryUsage().heapUsed;
  const changes = 200;
  for (let rv = 3; rv < 3 + changes; rv++)
    collection.apply({ type: 'MODIFIED', key: 'ns/big', resourceVersion: String(rv), json: text(rv), prevJson: text(rv - 1) }, 0);
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  // One text per change is 20 MB; a second copy of each would double it.
  assert.ok(grown > changes * 100_000 * 0.9, `the history holds the changes' texts (${grown} bytes)`);
  assert.ok(grown < changes * 100_000 * 1.4, `${grown} bytes for ${changes} changes of 100 KB`);
  const last = collection.changesAfter(String(changes + 1));
  assert.equal(last.length, 1);
  assert.equal(last[0].prevJson, text(changes + 1), 'the change still carries the object it replaced');
});
