/**
 * kube's APF debug endpoints over HTTPS: `/debug/api_priority_and_fairness/dump_priority_levels`,
 * `dump_queues` and `dump_requests[?includeRequestDetails=1]` as kube-apiserver 1.36 writes them
 * (plain text, kube's headers, cells ending in `,` aligned by Go's tabwriter), showing a request
 * that executes and one that waits; only users allowed the non-resource URL read them (403
 * otherwise), and without APF they are not served.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  sampleValue,
  scrape,
  startApfServer,
  startHeldOneSeatServer,
  until,
  type ApfServer,
  type HeldOneSeatServer,
  type HoldingAuthorizer,
} from './apf-helpers.js';
import { startTestServer } from '../helpers/capstan.js';
import { goDuration } from '../../src/flowcontrol/apf-debug-dumps.js';

const DEBUG = '/debug/api_priority_and_fairness';
const NS = '/api/v1/namespaces/default';

/** The cells of each line (split at kube's `,` + padding), checking every column is aligned across its block. */
function table(text: string): string[][] {
  assert.ok(text.endsWith('\n'), 'ends with a newline');
  const lines = text.slice(0, -1).split('\n');
  const rows = lines.map((l) => l.split(/,\s+|,$/).map((c) => c.trim()));
  // Where each cell starts: equal in every line for the columns all lines share (one block).
  const starts = lines.map((l) => [0, ...[...l.matchAll(/, +(?=\S|$)/g)].map((m) => (m.index ?? 0) + m[0].length)]);
  const shared = Math.min(...starts.map((s) => s.length)) - 1;
  for (let c = 1; c <= shared; c++) assert.equal(new Set(starts.map((s) => s[c])).size, 1, `column ${c} aligned:\n${text}`);
  return rows;
}

describe('APF debug dumps', () => {
  let s: ApfServer;
  let hook: HoldingAuthorizer;
  let held: HeldOneSeatServer | undefined;

  before(async () => {
    held = await startHeldOneSeatServer(['tok-noisy,noisy,noisy-uid'], ['noisy'], 4);
    s = held.server;
    hook = held.hook;
  });
  after(async () => {
    await held?.stop();
  });

  test('an idle server: every level, its queues, and the dump request itself', async () => {
    const res = await fetch(`${s.adminUrl}${DEBUG}/dump_priority_levels`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    const text = await res.text();
    assert.ok(
      text.startsWith(
        'PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, CancelledRequests\n',
      ),
      text,
    );
    const levels = table(text);
    const names = levels.slice(1).map((r) => r[0]);
    assert.deepEqual(names, [...names].sort());
    for (const name of ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'one-seat', 'system', 'workload-high', 'workload-low'])
      assert.ok(names.includes(name), name);
    const exempt = levels.find((r) => r[0] === 'exempt');
    // The dump itself executes at the exempt level (the plain port is system:masters).
    assert.deepEqual(exempt?.slice(1, 6), ['0', 'false', 'false', '0', '1']);
    assert.deepEqual(
      levels.find((r) => r[0] === 'global-default'),
      ['global-default', '0', 'true', 'false', '0', '0', '0', '0', '0', '0'],
    );

    const queues = table(await (await fetch(`${s.adminUrl}${DEBUG}/dump_queues`)).text());
    assert.deepEqual(queues[0], [
      'PriorityLevelName',
      'Index',
      'PendingRequests',
      'ExecutingRequests',
      'SeatsInUse',
      'NextDispatchR',
      'InitialSeatsSum',
      'MaxSeatsSum',
      'TotalWorkSum',
    ]);
    // A level's queues are numbered from 0; levels without queues (exempt, Reject) have no rows.
    assert.deepEqual(
      queues.filter((r) => r[0] === 'one-seat').map((r) => r[1]),
      ['0', '1', '2', '3'],
    );
    assert.ok(!queues.some((r) => r[0] === 'exempt'));
    assert.deepEqual(queues.find((r) => r[0] === 'one-seat')?.slice(2), ['0', '0', '0', '0.00000000ss', '0', '0', '0.00000000ss']);

    const requests = table(await (await fetch(`${s.adminUrl}${DEBUG}/dump_requests?includeRequestDetails=1`)).text());
    assert.deepEqual(requests[0], [
      'PriorityLevelName',
      'FlowSchemaName',
      'QueueIndex',
      'RequestIndexInQueue',
      'FlowDistingsher',
      'ArriveTime',
      'InitialSeats',
      'FinalSeats',
      'AdditionalLatency',
      'StartTime',
      'UserName',
      'Verb',
      'APIPath',
      'Namespace',
      'Name',
      'APIVersion',
      'Resource',
      'SubResource',
    ]);
    assert.equal(requests.length, 2);
    const self = requests[1];
    assert.deepEqual(self.slice(0, 5), ['exempt', 'exempt', '-1', '-1', '']);
    assert.match(self[5], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.deepEqual(self.slice(6, 9), ['1', '0', '0s']);
    assert.deepEqual(self.slice(10, 13), ['system:admin', 'get', `${DEBUG}/dump_requests`]);
  });

  test('an executing and a waiting request of one flow', async () => {
    const executing = s.client.send('tok-noisy', `${NS}/configmaps/hold-1`);
    await hook.reached('hold-1');
    const waiting = s.client.send('tok-noisy', `${NS}/configmaps/hold-2`);
    await until('the second request to queue', async () => {
      const m = await scrape(s.adminUrl);
      return sampleValue(m, 'apiserver_flowcontrol_current_inqueue_requests', { priority_level: 'one-seat', flow_schema: 'one-seat' }) === 1 ? true : undefined;
    });
    const levels = table(await (await fetch(`${s.adminUrl}${DEBUG}/dump_priority_levels`)).text());
    assert.deepEqual(
      levels.find((r) => r[0] === 'one-seat'),
      ['one-seat', '1', 'false', 'false', '1', '1', '1', '0', '0', '0'],
    );
    const queues = table(await (await fetch(`${s.adminUrl}${DEBUG}/dump_queues`)).text()).filter((r) => r[0] === 'one-seat');
    // handSize 1: both requests of the flow are in its one queue.
    const mine = queues.filter((r) => r[2] !== '0' || r[3] !== '0');
    assert.equal(mine.length, 1);
    assert.deepEqual(mine[0].slice(2, 5), ['1', '1', '1']);
    assert.deepEqual(mine[0].slice(6, 8), ['1', '1']);

    const plain = table(await (await fetch(`${s.adminUrl}${DEBUG}/dump_requests`)).text());
    assert.equal(plain[0].length, 10);
    const rows = table(await (await fetch(`${s.adminUrl}${DEBUG}/dump_requests?includeRequestDetails=1`)).text()).filter((r) => r[0] === 'one-seat');
    assert.equal(rows.length, 2);
    const queue = mine[0][1];
    const waitingRow = rows.find((r) => r[3] === '0');
    const executingRow = rows.find((r) => r[3] === '-1');
    assert.deepEqual(waitingRow?.slice(0, 5), ['one-seat', 'one-seat', queue, '0', 'noisy']);
    // A waiting request has not started: Go's zero time.
    assert.equal(waitingRow?.[9], '0001-01-01T00:00:00Z');
    assert.deepEqual(waitingRow?.slice(10), ['noisy', 'get', `${NS}/configmaps/hold-2`, 'default', 'hold-2', 'v1', 'configmaps', '']);
    assert.deepEqual(executingRow?.slice(2, 5), [queue, '-1', 'noisy']);
    assert.notEqual(executingRow?.[9], '0001-01-01T00:00:00Z');
    assert.equal(executingRow?.[14], 'hold-1');

    hook.release('hold-1');
    assert.equal((await executing).status, 404);
    await hook.reached('hold-2');
    hook.release('hold-2');
    assert.equal((await waiting).status, 404);
  });

  test("Go's duration text", () => {
    assert.deepEqual([0, 5, 1.5, 0.25, 1500, 60_000, 3_725_000].map(goDuration), ['0s', '5ms', '1.5ms', '250µs', '1.5s', '1m0s', '1h2m5s']);
  });
});

describe('APF debug dumps: who may read them', () => {
  test('a user without the non-resource URL gets 403; without APF nothing is served', async () => {
    const s = await startApfServer(['tok-alice,alice,alice-uid'], { authorizationMode: 'RBAC' });
    try {
      const denied = await s.client.send('tok-alice', `${DEBUG}/dump_queues`);
      assert.equal(denied.status, 403);
      assert.equal(denied.body.reason, 'Forbidden');
      assert.equal(denied.body.message, `forbidden: User "alice" cannot get path "${DEBUG}/dump_queues"`);
    } finally {
      await s.stop();
    }
    const off = await startTestServer({ enablePriorityAndFairness: false });
    try {
      assert.equal((await fetch(`${off.url}${DEBUG}/dump_priority_levels`)).status, 404);
    } finally {
      await off.stop();
    }
  });
});
