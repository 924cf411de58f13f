/**
 * `connectionToMove` (src/server/secure-server.ts): which HTTP/2 connection a busy worker asks to
 * reconnect elsewhere, from the requests each carried lately, the watches each has open and the
 * share that would even the worker out with the least busy one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectionToMove } from '../../src/server/secure-server.js';

/** connectionToMove over connections that carried these requests, each with a watch open. */
function move(requests: number[], share: number): number | undefined {
  return connectionToMove(
    requests.map((r) => ({ requests: r, watches: 1 })),
    share,
  );
}

test('no connection, or none that carried a request: nothing to move', () => {
  assert.equal(move([], 0.4), undefined);
  assert.equal(move([0, 0], 0.4), undefined);
});

test('the connection closest to the share is moved', () => {
  assert.equal(move([60, 40], 0.45), 1);
  assert.equal(move([10, 50, 40], 0.5), 1);
  assert.equal(move([0, 30, 70], 0.3), 1);
});

test('a connection carrying more than one and a half times the share is never moved: it would flip the hot spot to the other worker', () => {
  assert.equal(move([100], 0.47), undefined);
  assert.equal(move([70, 30], 0.3), 1);
  assert.equal(move([95, 5], 0.05), 1);
  assert.equal(move([80, 20], 0.05), undefined);
  // 40% of the requests against a share of 25%: the other worker would end up the busier one, by
  // more than half of today's gap, and could send the client back.
  assert.equal(move([60, 40], 0.25), undefined);
  assert.equal(move([63, 37], 0.25), 1);
});

test('nor one carrying less than half the share: moving it would not be worth a reconnection', () => {
  assert.equal(move([90, 10], 0.45), undefined);
  assert.equal(move([997, 3], 0.3), undefined);
  assert.equal(move([60, 25, 15], 0.2), 1);
});

test('only a connection with a watch open: one without is one of several of its client, and moving it would part its writes from its watches', () => {
  // kube-controller-manager: its controllers' writes on one connection, its informers' watches on another.
  const writesOnly = { requests: 45, watches: 0 };
  const informers = { requests: 5, watches: 40 };
  const scheduler = { requests: 30, watches: 12 };
  assert.equal(connectionToMove([writesOnly, informers, scheduler], 0.45), 2);
  assert.equal(connectionToMove([writesOnly, informers], 0.45), undefined);
  // The connection closest to the share has no watch, and the other carries too much: none.
  const closest = { requests: 25, watches: 0 };
  const heavy = { requests: 75, watches: 3 };
  assert.equal(connectionToMove([closest, heavy], 0.2), undefined);
  assert.equal(connectionToMove([{ ...closest, watches: 1 }, heavy], 0.2), 0);
});

test('never a connection of a client moved lately (settling): the next closest, or none', () => {
  const kwok = { requests: 45, watches: 3, settling: true };
  const scheduler = { requests: 30, watches: 12 };
  assert.equal(connectionToMove([{ ...kwok, settling: false }, scheduler], 0.6), 0, 'kwok carried the share');
  assert.equal(connectionToMove([kwok, scheduler], 0.6), 1);
  assert.equal(connectionToMove([kwok, { ...scheduler, settling: true }], 0.6), undefined);
});
