/**
 * A custom resource's watch stops when its type is removed only once it has seen every change of the
 * type made until then (the CRD's cleanup deletes its objects first), and at once when it has.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { WatchProgress } from '../../src/watch/watch-progress.js';
import { stopWhenRemoved } from '../../src/watch/watch-removal.js';

const TYPE = 'widgets.example.com';

async function setup(): Promise<{ storage: MemoryStorage; progress: WatchProgress; deletedAt: string; removed: AbortController; stop: AbortController }> {
  const storage = new MemoryStorage({ historyMs: 60_000 });
  const created = await storage.create(TYPE, 'default/w1', { metadata: { name: 'w1', namespace: 'default' } });
  const progress = new WatchProgress(created.resourceVersion);
  const deleted = await storage.delete(TYPE, 'default/w1');
  const removed = new AbortController();
  const stop = new AbortController();
  stopWhenRemoved(removed.signal, stop, { storage, type: TYPE, progress, produced: async () => undefined, ended: new AbortController().signal });
  return { storage, progress, deletedAt: deleted.resourceVersion, removed, stop };
}

test('the watch stops once it has passed on the deletion made before the removal', async () => {
  const { progress, deletedAt, removed, stop } = await setup();
  const stopped = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve()));
  removed.abort();
  // The deletion's event has not reached this watch yet: it keeps going.
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(stop.signal.aborted, false);
  progress.advance(deletedAt);
  await stopped;
  assert.equal(stop.signal.aborted, true);
});

test('a watch that has seen every change stops as soon as its type is removed', async () => {
  const { progress, deletedAt, removed, stop } = await setup();
  progress.advance(deletedAt);
  const stopped = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve()));
  removed.abort();
  await stopped;
  assert.equal(stop.signal.aborted, true);
});
