/**
 * connection-moves.ts: the watches open on each HTTP/2 connection are counted while they last, all
 * of them end when their connection's client is moved, and a connection carrying many watches (some
 * forty for kube-controller-manager) raises no listener-leak warning. HTTP/1.1 requests have no
 * connection to count on.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectionMoved, connectionMovedSignal, countWatch, openWatches } from '../../src/watch/connection-moves.js';

test('watches are counted per connection while they last, and all of them end when the client moves', async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    warnings.push(w);
  };
  process.on('warning', onWarning);
  try {
    const session = {};
    const other = {};
    const req = { stream: { session } };
    const watches = Array.from({ length: 40 }, () => {
      const moved = connectionMovedSignal(req);
      assert.ok(moved);
      const over = new AbortController();
      moved.addEventListener('abort', () => over.abort(), { once: true });
      countWatch(req, over.signal);
      return over;
    });
    countWatch({ stream: { session: other } }, new AbortController().signal);
    assert.equal(openWatches(session), 40);
    watches[0]?.abort();
    assert.equal(openWatches(session), 39);
    connectionMoved(session);
    assert.ok(watches.every((w) => w.signal.aborted));
    assert.equal(openWatches(session), 0);
    assert.equal(openWatches(other), 1, "another connection's watches stay");
    assert.equal(connectionMovedSignal({}), undefined, 'an HTTP/1.1 request has no connection to follow');
    // Warnings are emitted on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      warnings.map((w) => w.name),
      [],
    );
  } finally {
    process.off('warning', onWarning);
  }
});
