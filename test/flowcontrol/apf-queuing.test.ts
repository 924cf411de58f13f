/**
 * API Priority and Fairness dispatching, driven deterministically: an authorization webhook holds
 * chosen requests (authorization runs after flow control, so a held request keeps its seat) until the
 * test lets them go. A Reject level answers kube's 429 once its seats are taken; a queuing level
 * queues a flow on its hand of queues, answers 429 when they are full, and serves a quiet flow of
 * the same level before the noisy flow's backlog; exempt traffic never waits; a watch holds its seat
 * only while it initialises; the apiserver_flowcontrol_* metrics follow all of it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dealHand, flowHash } from '../../src/flowcontrol/shuffle-sharding.js';
import { createLevel, flowControlUids, HoldingAuthorizer, sampleValue, scrape, startApfServer, until, type Answer, type ApfServer } from './apf-helpers.js';

const QUEUES = 16;
const HAND = 2;
const QUEUE_LENGTH = 10;
const NS = '/api/v1/namespaces/default';

/** A user whose hand of the `fair` level's queues shares none with `noisy`'s (shuffle sharding isolates them). */
function quietUser(): string {
  const noisy = new Set(dealHand(flowHash('fair', 'noisy'), QUEUES, HAND));
  for (let i = 0; ; i++) {
    const name = `quiet-${i}`;
    if (dealHand(flowHash('fair', name), QUEUES, HAND).every((q) => !noisy.has(q))) return name;
  }
}

describe('APF dispatching', () => {
  let s: ApfServer;
  const hook = new HoldingAuthorizer();
  const quiet = quietUser();
  let uids: Awaited<ReturnType<typeof flowControlUids>>;

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-apf-q-'));
    await hook.start(dir);
    // 50 seats in all, so that a level of one share gets exactly one seat.
    s = await startApfServer(
      ['tok-bob,bob,bob-uid', 'tok-noisy,noisy,noisy-uid', `tok-quiet,${quiet},quiet-uid`, 'tok-alice,alice,alice-uid'],
      {
        maxRequestsInflight: 50,
        maxMutatingRequestsInflight: 0,
        authorizationMode: 'Webhook',
        authorizationWebhook: { configFile: hook.configFile, version: 'v1', authorizedTtlMs: 0, unauthorizedTtlMs: 0 },
      },
      dir,
    );
    await createLevel(
      s.adminUrl,
      'tiny',
      { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } },
      ['bob'],
      50,
    );
    await createLevel(
      s.adminUrl,
      'fair',
      {
        nominalConcurrencyShares: 1,
        lendablePercent: 0,
        borrowingLimitPercent: 0,
        limitResponse: { type: 'Queue', queuing: { queues: QUEUES, handSize: HAND, queueLengthLimit: QUEUE_LENGTH } },
      },
      ['noisy', quiet],
      60,
    );
    uids = await flowControlUids(s.adminUrl);
    await until('the new levels in force', async () => {
      const [a, b] = await Promise.all([s.client.send('tok-bob', '/version'), s.client.send('tok-noisy', '/version')]);
      return a.headers['x-kubernetes-pf-prioritylevel-uid'] === uids.levels.get('tiny') &&
        b.headers['x-kubernetes-pf-prioritylevel-uid'] === uids.levels.get('fair')
        ? true
        : undefined;
    });
    const metrics = await scrape(s.adminUrl);
    assert.equal(sampleValue(metrics, 'apiserver_flowcontrol_current_limit_seats', { priority_level: 'tiny' }), 1);
    assert.equal(sampleValue(metrics, 'apiserver_flowcontrol_current_limit_seats', { priority_level: 'fair' }), 1);
  });
  after(async () => {
    await hook.stop();
    await s?.stop();
  });

  test("a Reject level answers kube's 429 once its seats are taken", async () => {
    const held = s.client.send('tok-bob', `${NS}/configmaps/hold-bob`);
    await hook.reached('hold-bob');
    const r = await s.client.send('tok-bob', `${NS}/configmaps/other`);
    assert.equal(r.status, 429);
    assert.equal(r.text, 'Too many requests, please try again later.\n');
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.equal(r.headers['retry-after'], '1');
    assert.equal(r.headers['x-kubernetes-pf-flowschema-uid'], uids.schemas.get('tiny'));
    assert.equal(r.headers['x-kubernetes-pf-prioritylevel-uid'], uids.levels.get('tiny'));
    const m = await scrape(s.adminUrl);
    assert.equal(
      sampleValue(m, 'apiserver_flowcontrol_rejected_requests_total', { flow_schema: 'tiny', priority_level: 'tiny', reason: 'concurrency-limit' }),
      1,
    );
    assert.equal(sampleValue(m, 'apiserver_flowcontrol_current_executing_requests', { flow_schema: 'tiny', priority_level: 'tiny' }), 1);
    assert.equal(sampleValue(m, 'apiserver_request_terminations_total', { code: '429', verb: 'GET', resource: 'configmaps', scope: 'resource' }), 1);
    assert.equal(sampleValue(m, 'apiserver_request_total', { code: '429', verb: 'GET', resource: 'configmaps' }), 1);
    hook.release('hold-bob');
    assert.equal((await held).status, 404);
    // The seat is free again.
    assert.equal((await s.client.send('tok-bob', `${NS}/configmaps/other`)).status, 404);
  });

  test('a noisy flow fills only its own queues and does not starve a quiet flow of the same level', async () => {
    const completions: string[] = [];
    const track = (name: string, p: Promise<Answer>): Promise<Answer> =>
      p.then((a) => {
        completions.push(name);
        return a;
      });
    const pending: Array<Promise<Answer>> = [];
    try {
      // The noisy flow takes the level's only seat and fills both queues of its hand.
      const first = track('noisy-held', s.client.send('tok-noisy', `${NS}/configmaps/hold-noisy`));
      pending.push(first);
      await hook.reached('hold-noisy');
      const backlog = Array.from({ length: HAND * QUEUE_LENGTH }, (_, i) => track(`noisy-${i}`, s.client.send('tok-noisy', `${NS}/configmaps/backlog-${i}`)));
      pending.push(...backlog);
      await until('the noisy backlog to be queued', async () => {
        const m = await scrape(s.adminUrl);
        return sampleValue(m, 'apiserver_flowcontrol_current_inqueue_requests', { flow_schema: 'fair', priority_level: 'fair' }) === HAND * QUEUE_LENGTH
          ? m
          : undefined;
      });
      // One more of the noisy flow: its queues are full and every seat is taken.
      const full = await s.client.send('tok-noisy', `${NS}/configmaps/one-too-many`);
      assert.equal(full.status, 429);
      assert.equal(full.text, 'Too many requests, please try again later.\n');
      assert.equal(full.headers['x-kubernetes-pf-prioritylevel-uid'], uids.levels.get('fair'));
      // The quiet flow's queues are others: it is queued, not refused.
      const quietAnswer = track('quiet', s.client.send('tok-quiet', `${NS}/configmaps/quiet`));
      pending.push(quietAnswer);
      let m = await until('the quiet request to be queued', async () => {
        const got = await scrape(s.adminUrl);
        return sampleValue(got, 'apiserver_flowcontrol_current_inqueue_requests', { flow_schema: 'fair', priority_level: 'fair' }) === HAND * QUEUE_LENGTH + 1
          ? got
          : undefined;
      });
      assert.equal(sampleValue(m, 'apiserver_flowcontrol_current_inqueue_seats', { flow_schema: 'fair', priority_level: 'fair' }), HAND * QUEUE_LENGTH + 1);
      assert.equal(sampleValue(m, 'apiserver_flowcontrol_current_executing_requests', { flow_schema: 'fair', priority_level: 'fair' }), 1);
      assert.equal(sampleValue(m, 'apiserver_flowcontrol_current_executing_seats', { flow_schema: 'fair', priority_level: 'fair' }), 1);
      assert.equal(sampleValue(m, 'apiserver_flowcontrol_rejected_requests_total', { flow_schema: 'fair', priority_level: 'fair', reason: 'queue-full' }), 1);
      assert.ok(
        (sampleValue(m, 'apiserver_flowcontrol_request_queue_length_after_enqueue_count', { flow_schema: 'fair', priority_level: 'fair' }) ?? 0) >=
          HAND * QUEUE_LENGTH + 2,
      );
      // kube's watermark gauge: the most requests waiting during the last full second.
      await until('the in-queue watermark', async () =>
        sampleValue(await scrape(s.adminUrl), 'apiserver_current_inqueue_requests', { request_kind: 'readOnly' }) === HAND * QUEUE_LENGTH + 1
          ? true
          : undefined,
      );

      // Exempt traffic is never queued, whatever the other levels do.
      const started = Date.now();
      assert.equal((await fetch(`${s.adminUrl}${NS}/configmaps`)).status, 200);
      assert.equal((await s.client.send('tok-alice', '/readyz')).status, 200);
      assert.ok(Date.now() - started < 30_000);
      assert.equal(completions.length, 0, 'nothing of the fair level completed yet');

      // The seat frees once: the queues are served by virtual finish time, so the quiet request goes
      // before the queue of the flow that held the seat all along, i.e. within the first half of the
      // backlog (first in, first out would serve it last).
      hook.release('hold-noisy');
      await Promise.all([first, quietAnswer, ...backlog]);
      const quietAt = completions.indexOf('quiet');
      assert.ok(quietAt >= 1 && quietAt <= 1 + QUEUE_LENGTH, `quiet served at position ${quietAt} of ${completions.join(', ')}`);
      assert.equal((await quietAnswer).status, 404);
      m = await scrape(s.adminUrl);
      assert.equal(sampleValue(m, 'apiserver_flowcontrol_current_inqueue_requests', { flow_schema: 'fair', priority_level: 'fair' }), 0);
      assert.equal(sampleValue(m, 'apiserver_flowcontrol_current_executing_requests', { flow_schema: 'fair', priority_level: 'fair' }), 0);
      assert.ok(
        (sampleValue(m, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: 'fair', priority_level: 'fair' }) ?? 0) >= HAND * QUEUE_LENGTH + 2,
      );
      assert.ok(
        (sampleValue(m, 'apiserver_flowcontrol_request_wait_duration_seconds_count', { flow_schema: 'fair', priority_level: 'fair', execute: 'true' }) ?? 0) >=
          HAND * QUEUE_LENGTH + 2,
      );
      assert.ok(
        (sampleValue(m, 'apiserver_flowcontrol_request_execution_seconds_count', { flow_schema: 'fair', priority_level: 'fair', type: 'regular' }) ?? 0) >=
          HAND * QUEUE_LENGTH + 2,
      );
      assert.ok((sampleValue(m, 'apiserver_flowcontrol_priority_level_seat_utilization_count', { phase: 'executing', priority_level: 'fair' }) ?? 0) > 0);
      assert.ok(
        (sampleValue(m, 'apiserver_flowcontrol_priority_level_seat_utilization_bucket', { phase: 'executing', priority_level: 'fair', le: '1' }) ?? 0) > 0,
      );
      assert.ok(
        (sampleValue(m, 'apiserver_flowcontrol_work_estimated_seats_count', { flow_schema: 'fair', priority_level: 'fair' }) ?? 0) >= HAND * QUEUE_LENGTH + 3,
      );
      // Exempt requests run at once, are counted, and never observe a wait.
      assert.ok((sampleValue(m, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: 'exempt', priority_level: 'exempt' }) ?? 0) > 0);
      assert.equal(sampleValue(m, 'apiserver_flowcontrol_request_wait_duration_seconds_count', { flow_schema: 'exempt', priority_level: 'exempt' }), undefined);
      assert.equal(sampleValue(m, 'apiserver_flowcontrol_current_inqueue_requests', { flow_schema: 'exempt', priority_level: 'exempt' }) ?? 0, 0);
    } finally {
      hook.releaseAll();
      await Promise.allSettled(pending);
    }
  });

  test('a watch holds its seat while it sends its initial state, then none', async () => {
    // Two objects for the initial state (the administrator is exempt).
    for (const name of ['w1', 'w2'])
      await fetch(`${s.adminUrl}${NS}/configmaps`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name } }),
      });
    const events: string[] = [];
    const watch = await s.client.open('tok-noisy', `${NS}/configmaps?watch=true`);
    assert.equal(watch.statusCode, 200);
    assert.equal(watch.headers['x-kubernetes-pf-prioritylevel-uid'], uids.levels.get('fair'));
    watch.setEncoding('utf8');
    let buffered = '';
    watch.on('data', (d: string) => {
      buffered += d;
      for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
        events.push(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
      }
    });
    await until('the initial events', async () => (events.length >= 2 ? true : undefined));
    // The watch stays open, yet the level's only seat is free: another request of the level runs.
    const m = await until('the watch to leave its seat', async () => {
      const got = await scrape(s.adminUrl);
      return sampleValue(got, 'apiserver_flowcontrol_current_executing_requests', { flow_schema: 'fair', priority_level: 'fair' }) === 0 ? got : undefined;
    });
    assert.ok(
      (sampleValue(m, 'apiserver_flowcontrol_request_execution_seconds_count', { flow_schema: 'fair', priority_level: 'fair', type: 'watch' }) ?? 0) >= 1,
    );
    assert.equal((await s.client.send('tok-quiet', `${NS}/configmaps/w1`)).status, 200);
    assert.ok(!watch.destroyed);
    watch.destroy();
  });
});
