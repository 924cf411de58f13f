/**
 * Fair queuing within one priority level, on a clock the test steps: a quiet flow that arrives while
 * a noisy flow's long requests run, or while its wide requests wait for seats, is served at the next
 * free seats rather than behind the noisy flow's backlog. kube-apiserver charges a request's real
 * duration to its queue only when it finishes, and lets its virtual clock run ahead of queues that
 * wait for seats; both let a flood of LISTs go ahead of a quiet user of the same level for seconds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlowStats, LevelStats } from '../../src/flowcontrol/flowcontrol-metrics.js';
import { QueueSet, type FairRequest, type FlowIdentity, type WorkEstimate } from '../../src/flowcontrol/queue-set.js';
import { SeatDemandIntegrator } from '../../src/flowcontrol/seat-demand.js';
import { dealHand, flowHash } from '../../src/flowcontrol/shuffle-sharding.js';

const SCHEMA = 'fair';
const QUEUES = 16;
const HAND = 2;

function flow(user: string): FlowIdentity {
  return { flowSchema: SCHEMA, key: user, hash: () => flowHash(SCHEMA, user) };
}

/** A user whose hand of queues shares none with `noisy`'s. */
function quietUser(): string {
  const noisy = new Set(dealHand(flowHash(SCHEMA, 'noisy'), QUEUES, HAND));
  for (let i = 0; ; i++) {
    const name = `quiet-${i}`;
    if (dealHand(flowHash(SCHEMA, name), QUEUES, HAND).every((q) => !noisy.has(q))) return name;
  }
}

/** A level of `seats` seats on a clock advanced by `advance`, recording the order of dispatches. */
function level(seats: number) {
  let time = 100;
  const set = new QueueSet(
    SCHEMA,
    { desiredNumQueues: QUEUES, queueLengthLimit: 50, handSize: HAND },
    new LevelStats(),
    new SeatDemandIntegrator(),
    () => time,
  );
  set.configure({ desiredNumQueues: QUEUES, queueLengthLimit: 50, handSize: HAND }, { concurrencyLimit: seats, concurrencyDenominator: seats });
  const dispatched: string[] = [];
  const running = new Map<string, FairRequest>();
  const queued: FairRequest[] = [];
  let closing = false;
  const start = (user: string, name: string, initialSeats = 1): void => {
    const estimate: WorkEstimate = { initialSeats, finalSeats: 0, additionalLatencyMs: 0 };
    const outcome = set.startRequest(
      flow(user),
      new FlowStats(),
      estimate,
      {
        dispatched: (r) => {
          dispatched.push(name);
          running.set(name, r);
        },
        rejected: () => assert.ok(closing, `${name} rejected`),
      },
      () => 60_000,
    );
    assert.notEqual(outcome.kind, 'rejected');
    if (outcome.kind === 'queued') queued.push(outcome.request);
    if (outcome.kind === 'executing') {
      dispatched.push(name);
      running.set(name, outcome.request);
    }
  };
  const finish = async (name: string): Promise<void> => {
    const r = running.get(name);
    assert.ok(r, `${name} is running`);
    running.delete(name);
    set.finish(r);
    // Queued requests hear of their dispatch from a microtask.
    await new Promise((resolve) => setImmediate(resolve));
  };
  /** Takes the requests still waiting out of their queues (their wait-limit timers with them). */
  const close = (): void => {
    closing = true;
    for (const r of queued) set.cancel(r, 'time-out');
  };
  return { set, dispatched, running, start, finish, close, advance: (seconds: number) => (time += seconds) };
}

test('a quiet flow is served before the backlog of a flow whose long requests still run', async () => {
  const l = level(8);
  const quiet = quietUser();
  for (let i = 0; i < 8; i++) l.start('noisy', `long-${i}`);
  for (let i = 0; i < 10; i++) l.start('noisy', `backlog-${i}`);
  assert.equal(l.dispatched.length, 8, 'the long requests take every seat');
  l.advance(10);
  l.start(quiet, 'quiet');
  await new Promise((resolve) => setImmediate(resolve));
  assert.ok(!l.dispatched.includes('quiet'), 'no seat is free yet');
  // The long requests finish one at a time; each frees one seat.
  for (let i = 0; i < 8 && !l.dispatched.includes('quiet'); i++) await l.finish(`long-${i}`);
  const after = l.dispatched.slice(8);
  // The noisy flow has held its fair share (all the seats, between its two queues) for 10 s: the
  // quiet flow ties with its queues and goes within one round of them. kube serves about eight of
  // the backlog first, until the finished requests' durations catch its queues up.
  assert.ok(after.indexOf('quiet') >= 0 && after.indexOf('quiet') <= HAND, `dispatched after the first seat freed: ${after.join(', ')}`);
  l.close();
});

test('a quiet flow goes before a wide request that waited for seats', async () => {
  const l = level(8);
  const quiet = quietUser();
  l.start('noisy', 'wide-0', 8);
  for (let i = 1; i <= 4; i++) l.start('noisy', `wide-${i}`, 8);
  assert.deepEqual(l.dispatched, ['wide-0']);
  l.advance(1);
  l.start(quiet, 'quiet');
  await l.finish('wide-0');
  // The queue of the waiting wide requests lagged the level's virtual clock, which advances as if
  // every seat were used; the quiet flow starts where that queue is, and its one seat goes first.
  assert.deepEqual(l.dispatched, ['wide-0', 'quiet']);
  await l.finish('quiet');
  assert.deepEqual(l.dispatched, ['wide-0', 'quiet', 'wide-1']);
  l.close();
});

test('a flow that was idle gets no credit for it: it takes turns with a backlogged flow', async () => {
  const l = level(1);
  const quiet = quietUser();
  l.start('noisy', 'n-0');
  for (let i = 1; i <= 6; i++) l.start('noisy', `n-${i}`);
  l.advance(0.001);
  await l.finish('n-0');
  l.advance(0.001);
  for (let i = 0; i < 3; i++) l.start(quiet, `q-${i}`);
  for (let i = 0; i < 6; i++) {
    const name = l.dispatched.at(-1) ?? '';
    l.advance(0.001);
    await l.finish(name);
  }
  // One seat, requests of equal work: the quiet flow takes its turn among the noisy flow's queues
  // from its arrival on, neither waiting behind their backlog nor running all its requests first.
  const firstRound = l.dispatched.slice(2, 2 + HAND + 1).filter((n) => n.startsWith('q-')).length;
  assert.ok(firstRound >= 1 && firstRound < 3, `order ${l.dispatched.join(', ')}`);
  l.close();
});
