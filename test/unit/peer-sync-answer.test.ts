/**
 * A worker answers the primary's "have your watches got this change?" only once the watch frames it
 * put off are written (WorkerPeerSync's afterWatchFrames), so a peer's write is not answered while
 * its event still waits in this worker; without the hook it answers as soon as the change is
 * dispatched.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkerPeerSync } from '../../src/cluster/peer-sync.js';

type Sent = { type: string; id?: number };

function worker(afterWatchFrames?: (answer: () => void) => void): { sync: WorkerPeerSync; sent: Sent[] } {
  const sent: Sent[] = [];
  const sync = new WorkerPeerSync({ self: 1, send: (m) => sent.push(m), safetyMs: 1000, afterWatchFrames });
  return { sync, sent };
}

const question = { type: 'capstan:sync-request', id: 7, stream: 'cm', version: '5' };

test('the answer waits for the put-off watch frames, then goes out', async () => {
  const held: (() => void)[] = [];
  const { sync, sent } = worker((answer) => held.push(answer));
  let dispatch = (): void => undefined;
  const dispatched = new Promise<void>((resolve) => (dispatch = resolve));
  sync.serve({ whenDispatched: () => dispatched });
  assert.equal(sync.onMessage(question), true);
  dispatch();
  await dispatched;
  await Promise.resolve();
  assert.deepEqual(sent, [], 'not answered before the frames are written');
  assert.equal(held.length, 1);
  held[0]();
  assert.deepEqual(sent, [{ type: 'capstan:sync-done', id: 7 }]);
});

test('a change dispatched before the question is answered through the hook too; without a hook at once', () => {
  const held: (() => void)[] = [];
  const hooked = worker((answer) => held.push(answer));
  hooked.sync.serve({ whenDispatched: () => undefined });
  hooked.sync.onMessage(question);
  assert.deepEqual(hooked.sent, []);
  held.splice(0).forEach((a) => a());
  assert.deepEqual(hooked.sent, [{ type: 'capstan:sync-done', id: 7 }]);

  const plain = worker();
  plain.sync.serve({ whenDispatched: () => undefined });
  plain.sync.onMessage(question);
  assert.deepEqual(plain.sent, [{ type: 'capstan:sync-done', id: 7 }]);
});
