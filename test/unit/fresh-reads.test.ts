/**
 * FreshReads: concurrent callers share reads, yet each gets a value read after it asked; one read
 * per key at a time; a failed read fails only the callers that shared it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FreshReads } from '../../src/storage/fresh-reads.js';

/** A value source whose reads finish only when the test says so, recording when each started. */
class ManualSource {
  value = 0;
  readonly started: { key: string; resolve: () => void; reject: (err: Error) => void }[] = [];
  running = 0;
  maxRunning = 0;

  readonly read = (key: string): Promise<number> => {
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    const seen = this.value; // what the store holds when the read starts
    return new Promise<number>((resolve, reject) => {
      this.started.push({
        key,
        resolve: () => {
          this.running--;
          resolve(seen);
        },
        reject: (err) => {
          this.running--;
          reject(err);
        },
      });
    });
  };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('callers arriving during a read share the next read, which sees newer values', async () => {
  const source = new ManualSource();
  const reads = new FreshReads(source.read);
  source.value = 1;
  const first = reads.get('a');
  source.value = 2; // changed after the first read started
  const second = reads.get('a');
  const third = reads.get('a');
  assert.equal(source.started.length, 1, 'one read at a time');
  source.started[0]?.resolve();
  assert.equal(await first, 1);
  await tick();
  assert.equal(source.started.length, 2, 'the waiting callers started one more read');
  source.started[1]?.resolve();
  assert.equal(await second, 2, 'a read that started after the caller asked');
  assert.equal(await third, 2);
  assert.equal(source.maxRunning, 1);
  // Idle again: the next caller starts its own read at once.
  source.value = 3;
  const fourth = reads.get('a');
  assert.equal(source.started.length, 3);
  source.started[2]?.resolve();
  assert.equal(await fourth, 3);
});

test('keys are independent; a failed read fails the callers waiting for the next one too', async () => {
  const source = new ManualSource();
  const reads = new FreshReads(source.read);
  const a1 = reads.get('a');
  const b1 = reads.get('b');
  assert.deepEqual(
    source.started.map((s) => s.key),
    ['a', 'b'],
  );
  const a2 = reads.get('a');
  source.started[0]?.reject(new Error('connection lost'));
  await assert.rejects(a1, /connection lost/);
  await assert.rejects(a2, /connection lost/, 'no second wait for an unreachable store');
  assert.equal(source.started.length, 2, 'no read started for the failed waiters');
  source.started[1]?.resolve();
  assert.equal(await b1, 0, 'b is not affected');
  // After the failure the key is idle: the next caller reads afresh.
  source.value = 7;
  const a3 = reads.get('a');
  assert.equal(source.started.length, 3);
  source.started[2]?.resolve();
  assert.equal(await a3, 7);
});
