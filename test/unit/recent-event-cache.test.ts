import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecentEventCache } from '../../src/storage/recent-event-cache.js';
import type { ChangeEvent } from '../../src/storage/storage.js';

function change(rv: number): ChangeEvent {
  return { type: 'MODIFIED', key: `default/o${rv}`, resourceVersion: String(rv), json: '{}' };
}

test('keeps values for the most recent changes only', () => {
  const cache = new RecentEventCache<string>(2);
  const [a, b, c] = [change(1), change(2), change(3)];
  cache.set(a, 'a');
  cache.set(b, 'b');
  assert.equal(cache.get(a), 'a');
  cache.set(c, 'c');
  assert.equal(cache.get(a), undefined, 'the oldest change is forgotten');
  assert.equal(cache.get(b), 'b');
  assert.equal(cache.get(c), 'c');
});

test('setting a remembered change again replaces its value without forgetting another', () => {
  const cache = new RecentEventCache<number>(2);
  const [a, b] = [change(1), change(2)];
  cache.set(a, 1);
  cache.set(b, 2);
  cache.set(b, 3);
  assert.equal(cache.get(a), 1);
  assert.equal(cache.get(b), 3);
});
