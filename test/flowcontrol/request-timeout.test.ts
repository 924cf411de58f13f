/**
 * `--request-timeout` as kube-apiserver 1.36 applies it: a request that is not long-running and not
 * answered by its deadline (the flag, or a shorter `timeout` parameter) is answered 504 as kube's
 * timeout filter writes it, and counted as a termination; a watch has no deadline; an APF queue
 * holds a request a quarter of its deadline. Requests are held by an authorization webhook (it runs
 * after flow control, inside the deadline).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from '../../src/cli/flags.js';
import { parseGoDuration } from '../../src/api/request-deadline.js';
import { sampleValue, scrape, startHeldOneSeatServer, until, type ApfServer, type HeldOneSeatServer, type HoldingAuthorizer } from './apf-helpers.js';

const NS = '/api/v1/namespaces/default';
const TIMEOUT_BODY =
  '{"metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}\n';

describe('--request-timeout', () => {
  let s: ApfServer;
  let hook: HoldingAuthorizer;
  let held: HeldOneSeatServer | undefined;

  before(async () => {
    held = await startHeldOneSeatServer(['tok-u,user-u,u-uid', 'tok-q,user-q,q-uid'], ['user-q'], 1, { requestTimeoutMs: 2000 });
    s = held.server;
    hook = held.hook;
  });
  after(async () => {
    await held?.stop();
  });

  test("a request not answered by the deadline gets kube's 504; a watch stays open", async () => {
    const watch = await s.client.open('tok-u', `${NS}/configmaps?watch=1`);
    assert.equal(watch.statusCode, 200);
    let events = '';
    watch.setEncoding('utf8');
    watch.on('data', (d: string) => (events += d));

    const started = performance.now();
    const held = s.client.send('tok-u', `${NS}/configmaps/hold-a`);
    await hook.reached('hold-a');
    const answer = await held;
    assert.ok(performance.now() - started >= 1900, 'not before the deadline');
    assert.equal(answer.status, 504);
    assert.equal(answer.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(answer.text, TIMEOUT_BODY);
    // The handler goes on once authorized, and writes nothing more: the server keeps serving.
    hook.release('hold-a');
    const m = await scrape(s.adminUrl);
    assert.equal(sampleValue(m, 'apiserver_request_terminations_total', { code: '504', verb: 'GET', resource: 'configmaps' }), 1);

    // The watch outlived the deadline and still delivers.
    const created = await s.client.send('tok-u', `${NS}/configmaps`, { body: { metadata: { name: 'after-deadline' } } });
    assert.equal(created.status, 201);
    await until('the watch event', async () => (events.includes('"after-deadline"') ? true : undefined), 30_000);
    watch.destroy();
  });

  test('a shorter timeout parameter is the deadline', async () => {
    const started = performance.now();
    const held = s.client.send('tok-u', `${NS}/configmaps/hold-b?timeout=300ms`);
    await hook.reached('hold-b');
    const answer = await held;
    assert.equal(answer.status, 504);
    assert.equal(answer.text, TIMEOUT_BODY);
    // Well before the 2 s of the flag (generous: the machine may be busy).
    assert.ok(performance.now() - started < 1900, `${performance.now() - started} ms`);
    hook.release('hold-b');
  });

  test('an APF queue holds a request a quarter of its deadline', async () => {
    const first = s.client.send('tok-q', `${NS}/configmaps/hold-c`);
    await hook.reached('hold-c');
    // The level's only seat is taken: this one queues, and leaves with 429 after 2 s / 4.
    const started = performance.now();
    const queued = await s.client.send('tok-q', `${NS}/configmaps/hold-d`);
    const waited = performance.now() - started;
    assert.equal(queued.status, 429);
    assert.ok(waited >= 450 && waited < 1900, `${waited} ms`);
    const m = await scrape(s.adminUrl);
    assert.equal(
      sampleValue(m, 'apiserver_flowcontrol_rejected_requests_total', { priority_level: 'one-seat', flow_schema: 'one-seat', reason: 'time-out' }),
      1,
    );
    hook.release('hold-c');
    assert.ok([404, 504].includes((await first).status));
  });

  test("a timeout parameter that is not a Go duration is kube's 400", async () => {
    for (const [value, why] of [
      ['abc', 'time: invalid duration "abc"'],
      ['30', 'time: missing unit in duration "30"'],
      ['5x', 'time: unknown unit "x" in duration "5x"'],
    ]) {
      const r = await s.client.send('tok-u', `${NS}/configmaps?timeout=${value}`);
      assert.equal(r.status, 400, value);
      assert.equal(r.body.reason, 'BadRequest');
      assert.equal(r.body.message, `invalid timeout specified in the request URL - ${why}`);
    }
    assert.equal(parseGoDuration('1h2m3.5s'), 3_723_500);
    assert.equal(parseGoDuration('.5s'), 500);
    // A watch takes no deadline, and its timeout parameter is not checked.
    const watch = await s.client.open('tok-u', `${NS}/configmaps?watch=1&timeout=abc`);
    assert.equal(watch.statusCode, 200);
    watch.destroy();
  });

  test("the flag: kube's default and refusals", () => {
    const parsed = parseArgs([]);
    assert.ok(!parsed.help);
    if (!parsed.help) assert.equal(parsed.config.requestTimeoutMs, 60_000);
    const set = parseArgs(['--request-timeout=1m30s']);
    if (!set.help) assert.equal(set.config.requestTimeoutMs, 90_000);
    assert.throws(() => parseArgs(['--request-timeout=-1s']), /^Error: --request-timeout can not be negative value$/);
    assert.throws(() => parseArgs(['--request-timeout=x']), /invalid argument "x" for "--request-timeout" flag: time: invalid duration "x"/);
  });
});
