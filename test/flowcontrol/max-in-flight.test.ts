/**
 * `--enable-priority-and-fairness=false`: kube's two in-flight limits instead of APF. Read-only
 * requests beyond --max-requests-inflight get kube's 429 at once (Retry-After: 1, no APF headers),
 * system:masters is never refused, watches are not counted, and a limit of 0 is no limit. The flags
 * are checked as kube checks them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from '../../src/cli/flags.js';
import { spawnCapstan } from '../helpers/capstan.js';
import { HoldingAuthorizer, sampleValue, scrape, startApfServer, until, type Answer, type ApfServer } from './apf-helpers.js';

const NS = '/api/v1/namespaces/default';

describe('the in-flight limits without APF', () => {
  let s: ApfServer;
  const hook = new HoldingAuthorizer();

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-inflight-'));
    await hook.start(dir);
    s = await startApfServer(
      ['tok-alice,alice,alice-uid'],
      {
        enablePriorityAndFairness: false,
        maxRequestsInflight: 2,
        maxMutatingRequestsInflight: 0,
        authorizationMode: 'Webhook',
        authorizationWebhook: { configFile: hook.configFile, version: 'v1', authorizedTtlMs: 0, unauthorizedTtlMs: 0 },
      },
      dir,
    );
  });
  after(async () => {
    await hook.stop();
    await s?.stop();
  });

  test('a read beyond the limit is refused at once; writes (limit 0), watches and system:masters are not limited', async () => {
    const pending: Array<Promise<Answer>> = [];
    try {
      for (const name of ['hold-r0', 'hold-r1']) {
        pending.push(s.client.send('tok-alice', `${NS}/configmaps/${name}`));
        await hook.reached(name);
      }
      const refused = await s.client.send('tok-alice', `${NS}/configmaps`);
      assert.equal(refused.status, 429);
      assert.equal(refused.text, 'Too many requests, please try again later.\n');
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(refused.headers['content-type'], 'text/plain; charset=utf-8');
      assert.equal(refused.headers['x-kubernetes-pf-flowschema-uid'], undefined);
      // A limit of 0: writes are not limited however many run.
      for (const name of ['hold-w0', 'hold-w1', 'hold-w2']) {
        pending.push(s.client.send('tok-alice', `${NS}/configmaps/${name}`, { method: 'DELETE' }));
        await hook.reached(name);
      }
      const created = await s.client.send('tok-alice', `${NS}/configmaps`, { body: { metadata: { name: 'made' } } });
      assert.equal(created.status, 201);
      // Watches are long-running: never counted, never refused.
      const watch = await s.client.open('tok-alice', `${NS}/configmaps?watch=true`);
      assert.equal(watch.statusCode, 200);
      watch.destroy();
      // The administrator is never refused.
      assert.equal((await fetch(`${s.adminUrl}${NS}/configmaps`)).status, 200);
      // kube's watermark: the most reads executing in the last full second (unlimited writes are not tracked, as in kube).
      const m = await until('the in-flight watermark', async () => {
        const got = await scrape(s.adminUrl);
        return sampleValue(got, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' }) === 2 ? got : undefined;
      });
      assert.equal(sampleValue(m, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }), 0);
      assert.equal(sampleValue(m, 'apiserver_request_terminations_total', { code: '429', verb: 'LIST', resource: 'configmaps' }), 1);
      assert.equal(sampleValue(m, 'apiserver_flowcontrol_nominal_limit_seats'), undefined, 'no APF series without APF');
    } finally {
      hook.releaseAll();
      await Promise.allSettled(pending);
    }
    // Released: reads run again.
    assert.equal((await s.client.send('tok-alice', `${NS}/configmaps`)).status, 200);
  });
});

describe('flow control flags', () => {
  test('negative limits are refused as kube refuses them', () => {
    assert.throws(() => parseArgs(['--max-requests-inflight=-1']), /^Error: --max-requests-inflight can not be negative value$/);
    assert.throws(() => parseArgs(['--max-mutating-requests-inflight=x']), /invalid argument "x" for "--max-mutating-requests-inflight" flag/);
    const parsed = parseArgs([]);
    assert.ok(!parsed.help);
    if (!parsed.help)
      assert.deepEqual(
        [parsed.config.maxRequestsInflight, parsed.config.maxMutatingRequestsInflight, parsed.config.enablePriorityAndFairness],
        [400, 200, true],
      );
  });

  test('APF needs a positive concurrency limit: the server does not start', async () => {
    await assert.rejects(
      spawnCapstan(['--port=0', '--anonymous-auth=false', '--max-requests-inflight=0', '--max-mutating-requests-inflight=0']),
      /capstan exited with 1: Error: invalid configuration: MaxRequestsInFlight=0 and MaxMutatingRequestsInFlight=0; they must add up to something positive/,
    );
  });
});
