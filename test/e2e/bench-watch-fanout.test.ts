/**
 * The benchmark's watch fan-out (bench/watch-fanout-run.ts) against a real Capstan over HTTPS with a
 * token, on both transports it measures: each watcher on its own HTTP/1.1 connection, and the
 * watchers sharing HTTP/2 connections. Every watcher must get every write once, in order, with no
 * problem reported, or the benchmark's per-event figures would count the wrong thing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';
import { certDirPaths } from '../../src/tls/cert-dir.js';
import { deliveryProblems, runFanout } from '../../bench/watch-fanout-run.js';

describe('bench watch fan-out over HTTP/1.1 and HTTP/2', () => {
  let dir: string;
  let cap: CapstanProcess;
  let secureUrl: string;
  let ca: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-fanout-'));
    writeFileSync(join(dir, 'tokens.csv'), 'fanout-token,fanout-admin,fanout-admin,"system:masters"\n');
    cap = await spawnCapstan(['--port', '0', '--cert-dir', join(dir, 'pki'), '--token-auth-file', join(dir, 'tokens.csv')]);
    secureUrl = /"secureUrl":"([^"]+)"/.exec(cap.stderr())?.[1] ?? '';
    assert.match(secureUrl, /^https:/);
    ca = readFileSync(certDirPaths(join(dir, 'pki')).caCert, 'utf8');
  });

  after(async () => {
    assert.equal(await cap?.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  });

  for (const http2 of [false, true]) {
    test(`every watcher gets every write once, in order (${http2 ? 'HTTP/2, shared connections' : 'HTTP/1.1, a connection each'})`, async () => {
      // Each transport writes its own objects (w-0, w-1, ...): a namespace each.
      const ns = http2 ? 'fanout-h2' : 'fanout-h1';
      const created = await api(cap.url, '/api/v1/namespaces', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      });
      assert.equal(created.status, 201);
      const outcome = await runFanout(
        {
          url: secureUrl,
          access: { token: 'fanout-token', ca },
          path: `/api/v1/namespaces/${ns}/configmaps`,
          assertAlive: () => undefined,
          exited: () => false,
        },
        // 150 watchers: two HTTP/2 connections at 100 watches each.
        { watchers: 150, rate: 20, seconds: 1, payloadBytes: 64, threads: 1, http2 },
      );
      assert.equal(deliveryProblems(outcome), undefined);
      assert.equal(outcome.watchersStarted, 150);
      assert.ok(outcome.acked >= 15, `${outcome.acked} writes acknowledged`);
      assert.equal(outcome.events, outcome.acked * 150);
    });
  }
});
