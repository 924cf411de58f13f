/**
 * The pure parts of API Priority and Fairness: flows are dealt the queues kube-apiserver 1.36 deals
 * them (golden from k8s.io/apiserver's shufflesharding.Dealer: `npm run gen:goldens`), the seat
 * allocation keeps kube's invariants, and Retry-After grows and shrinks as kube's tracker does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { computeConcurrencyAllocation } from '../../src/flowcontrol/concurrency-allocation.js';
import { RetryAfterTracker } from '../../src/flowcontrol/retry-after.js';
import { dealHand, flowHash } from '../../src/flowcontrol/shuffle-sharding.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

interface DealCase {
  flowSchema: string;
  distinguisher: string;
  hash: string;
  deckSize: number;
  handSize: number;
  hand: number[];
}

test("flows hash and are dealt their queues as kube's Dealer deals them", () => {
  const cases = JSON.parse(readFileSync(join(ROOT, 'test', 'golden', 'flowcontrol', 'shuffle-sharding.json'), 'utf8')) as DealCase[];
  assert.ok(cases.length >= 50);
  for (const c of cases) {
    const hash = flowHash(c.flowSchema, c.distinguisher);
    assert.equal(hash.toString(), c.hash, `${c.flowSchema}/${c.distinguisher}`);
    assert.deepEqual(dealHand(hash, c.deckSize, c.handSize), c.hand, `${c.flowSchema}/${c.distinguisher} ${c.deckSize}/${c.handSize}`);
  }
});

test('the seat allocation meets the required sum within every bound, in proportion to the targets', () => {
  // No bound binds: proportional to the targets.
  const free = computeConcurrencyAllocation(100, [
    { target: 10, lowerBound: 0, upperBound: 100 },
    { target: 30, lowerBound: 0, upperBound: 100 },
  ]);
  assert.deepEqual(
    free.allocs.map((a) => Math.round(a * 1000) / 1000),
    [25, 75],
  );
  assert.equal(free.fairFrac, 2.5);
  // An upper bound binds: the rest goes to the others.
  const capped = computeConcurrencyAllocation(100, [
    { target: 10, lowerBound: 0, upperBound: 10 },
    { target: 10, lowerBound: 0, upperBound: 100 },
    { target: 30, lowerBound: 0, upperBound: 100 },
  ]);
  assert.equal(capped.allocs[0], 10);
  assert.ok(Math.abs(capped.allocs[1] * 3 - capped.allocs[2]) < 1e-9);
  assert.ok(Math.abs(capped.allocs.reduce((a, b) => a + b, 0) - 100) < 1e-9);
  // Lower bounds bind.
  const floored = computeConcurrencyAllocation(30, [
    { target: 20, lowerBound: 20, upperBound: 40 },
    { target: 100, lowerBound: 0, upperBound: 40 },
  ]);
  assert.deepEqual(
    floored.allocs.map((a) => Math.round(a)),
    [20, 10],
  );
  // Random problems: the sum and the bounds always hold.
  let seed = 7;
  const rand = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647;
  for (let i = 0; i < 500; i++) {
    const items = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => {
      const lowerBound = Math.floor(rand() * 20);
      return { lowerBound, target: lowerBound + rand() * 50, upperBound: lowerBound + Math.floor(rand() * 100) };
    });
    const low = items.reduce((a, b) => a + b.lowerBound, 0);
    const high = items.reduce((a, b) => a + b.upperBound, 0);
    const required = Math.floor(low + rand() * (high - low));
    const { allocs } = computeConcurrencyAllocation(required, items);
    assert.ok(Math.abs(allocs.reduce((a, b) => a + b, 0) - required) < 1e-6, `sum ${required}`);
    items.forEach((item, j) => assert.ok(allocs[j] >= item.lowerBound - 1e-9 && allocs[j] <= item.upperBound + 1e-9));
  }
  assert.throws(() => computeConcurrencyAllocation(5, [{ target: 10, lowerBound: 10, upperBound: 20 }]), /lower bounds sum to 10/);
});

test('Retry-After doubles while a level keeps shedding, up to 32 s, and comes back down', () => {
  let now = 1000;
  const tracker = new RetryAfterTracker(() => now);
  assert.equal(tracker.retryAfter('l'), 1);
  const seen: number[] = [];
  for (let second = 0; second < 40; second++) {
    for (let i = 0; i < 100; i++) tracker.recordDropped('l');
    now++;
    seen.push(tracker.retryAfter('l'));
  }
  assert.equal(seen[0], 1);
  assert.ok(seen.includes(2) && seen.includes(4) && seen.includes(8));
  assert.equal(Math.max(...seen), 32);
  // Quiet seconds: one rejection now and then lets it fall a second at a time.
  const before = tracker.retryAfter('l');
  for (let k = 0; k < 5; k++) {
    now += 40;
    tracker.recordDropped('l');
  }
  assert.ok(tracker.retryAfter('l') < before);
  assert.equal(tracker.retryAfter('other'), 1);
});
