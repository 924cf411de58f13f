import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ListenerSet } from '../../src/storage/listener-set.js';
import type { ChangeEvent, WatchTrigger } from '../../src/storage/storage.js';

/** A change whose index values are written in its key: "before>after", or "?" when unreadable. */
function change(rv: number, key: string): ChangeEvent {
  return { type: 'MODIFIED', key, resourceVersion: String(rv), json: '{}' };
}
const valuesOf = (event: ChangeEvent): readonly string[] | undefined => (event.key === '?' ? undefined : event.key.split('>'));
const on = (value: string): WatchTrigger => ({ index: 'node', value, valuesOf });

function handedOut(set: ListenerSet<string>, event: ChangeEvent): string[] {
  const got: string[] = [];
  set.dispatch(event, (entry) => got.push(entry));
  return got.sort();
}

test('plain entries get every change; triggered ones only changes with their value, before or after, once each', () => {
  const set = new ListenerSet<string>('1');
  set.add('all');
  set.add('a1', on('a'));
  set.add('a2', on('a'));
  set.add('b', on('b'));
  set.add('empty', on(''));
  assert.equal(set.size, 5);
  assert.deepEqual(handedOut(set, change(2, 'a>a')), ['a1', 'a2', 'all']);
  assert.deepEqual(handedOut(set, change(3, '>b')), ['all', 'b', 'empty']);
  assert.deepEqual(handedOut(set, change(4, 'c')), ['all']);
  assert.deepEqual(handedOut(set, change(5, '?')), ['a1', 'a2', 'all', 'b', 'empty'], 'unreadable values reach every triggered entry');
  assert.equal(set.clock.resourceVersion, '5');
});

test('deleted entries get nothing more; an emptied index is dropped; entries() lists both kinds', () => {
  const set = new ListenerSet<string>('7');
  assert.equal(set.clock.resourceVersion, '7');
  set.add('all');
  set.add('a', on('a'));
  set.add('b', on('b'));
  assert.deepEqual(set.entries().sort(), ['a', 'all', 'b']);
  set.delete('a');
  set.delete('all');
  assert.deepEqual(handedOut(set, change(8, 'a>b')), ['b']);
  set.delete('b');
  assert.equal(set.size, 0);
  assert.deepEqual(handedOut(set, change(9, '?')), []);
  set.passed('12');
  assert.equal(set.clock.resourceVersion, '12');
});
