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
        resolve: () => { this.running--; resolve(seen); },
        reject: (err) => { this.running--; reject(err); },
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

test('keys are independent, and a failure reaches only the callers of that read', async () => {
  const source = new ManualSource();
  const reads = new FreshReads(source.read);
  const a1 = reads.get('a');
  const b1 = reads.get('b');
  assert.deepEqual(source.started.map((s) => s.key), ['a', 'b']);
  const a2 = reads.get('a');
  source.value = 7;
  source.started[0]?.reject(new Error('connection lost'));
  await assert.rejects(a1, /connection lost/);
  await tick();
  assert.equal(source.started.length, 3);
  source.started[2]?.resolve();
  source.started[1]?.resolve();
  assert.equal(await a2, 7, 'the queued caller got the next, successful read');
  assert.equal(await b1, 0, 'b read before the change');
});
