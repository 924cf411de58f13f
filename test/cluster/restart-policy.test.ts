import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RestartPolicy } from '../../src/cluster/restart-policy.js';

test('restart delays double per slot, reset after a stable run, and a crash burst gives up', () => {
  const p = new RestartPolicy({ baseDelayMs: 100, maxDelayMs: 1000, maxCrashes: 5, windowMs: 60_000, stableAfterMs: 30_000 });
  assert.deepEqual(p.onCrash(0, 10, 0), { action: 'restart', delayMs: 100, consecutive: 1 });
  assert.deepEqual(p.onCrash(0, 10, 1000), { action: 'restart', delayMs: 200, consecutive: 2 });
  assert.deepEqual(p.onCrash(1, 10, 2000), { action: 'restart', delayMs: 100, consecutive: 1 }, 'slots back off independently');
  assert.deepEqual(
    p.onCrash(0, 60_000, 100_000),
    { action: 'restart', delayMs: 100, consecutive: 1 },
    'a stable run resets the backoff; old crashes leave the window',
  );
  const q = new RestartPolicy({ baseDelayMs: 100, maxDelayMs: 300, maxCrashes: 3, windowMs: 10_000 });
  assert.equal(q.onCrash(0, 0, 0).action, 'restart');
  assert.equal(q.onCrash(0, 0, 1).action, 'restart');
  const third = q.onCrash(0, 0, 2);
  assert.deepEqual(third, { action: 'restart', delayMs: 300, consecutive: 3 }, 'capped at maxDelayMs');
  assert.deepEqual(q.onCrash(0, 0, 3), { action: 'give-up', crashesInWindow: 4, windowMs: 10_000 });
});
