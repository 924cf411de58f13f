/**
 * `connectionToMove` (src/server/secure-server.ts): which HTTP/2 connection a busy worker asks to
 * reconnect elsewhere, from the requests each carried lately and the share that would even the
 * worker out with the least busy one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectionToMove } from '../../src/server/secure-server.js';

test('no connection, or none that carried a request: nothing to move', () => {
  assert.equal(connectionToMove([], 0.4), undefined);
  assert.equal(connectionToMove([0, 0], 0.4), undefined);
});

test('the connection closest to the share is moved', () => {
  assert.equal(connectionToMove([60, 40], 0.45), 1);
  assert.equal(connectionToMove([10, 50, 40], 0.5), 1);
  assert.equal(connectionToMove([0, 30, 70], 0.3), 1);
});

test('a connection carrying twice the share or more is never moved: it would only move the hot spot', () => {
  assert.equal(connectionToMove([100], 0.47), undefined);
  assert.equal(connectionToMove([70, 30], 0.3), 1);
  assert.equal(connectionToMove([95, 5], 0.05), 1);
  assert.equal(connectionToMove([80, 20], 0.05), undefined);
});

test('nor one carrying less than half the share: moving it would not be worth a reconnection', () => {
  assert.equal(connectionToMove([90, 10], 0.45), undefined);
  assert.equal(connectionToMove([997, 3], 0.3), undefined);
  assert.equal(connectionToMove([60, 25, 15], 0.2), 1);
});
