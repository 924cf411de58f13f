import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { HealthChecks, type HealthChecksOptions } from '../../src/health/health-checks.js';
import { healthRouter } from '../../src/health/health-router.js';

interface Running {
  get: (path: string) => Promise<{ status: number; body: string; headers: Headers }>;
  close: () => Promise<void>;
}

async function serve(checks: HealthChecks): Promise<Running> {
  const app = express();
  app.use(healthRouter(checks));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    get: async (path) => {
      const res = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: res.status, body: await res.text(), headers: res.headers };
    },
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

/** Runs `fn` against a server over fresh checks, closing the server afterwards. */
async function withServer(opts: Partial<HealthChecksOptions>, fn: (checks: HealthChecks, srv: Running) => Promise<void>): Promise<void> {
  const checks = new HealthChecks({ livezGracePeriodMs: 0, ...opts });
  const srv = await serve(checks);
  try {
    await fn(checks, srv);
  } finally {
    await srv.close();
  }
}

describe('health endpoints', () => {
  test('plain ok on all three endpoints, text/plain with nosniff', async () => {
    await withServer({}, async (_checks, srv) => {
      for (const ep of ['/healthz', '/livez', '/readyz']) {
        const r = await srv.get(ep);
        assert.equal(r.status, 200, ep);
        assert.equal(r.body, 'ok');
        assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
        assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
      }
    });
  });

  test('verbose lists checks in order; shutdown only on readyz, last', async () => {
    await withServer({}, async (checks, srv) => {
      checks.addStorageChecks(() => undefined);
      checks.addPostStartHook('start-capstan-bootstrap').done();
      assert.equal(
        (await srv.get('/livez?verbose')).body,
        '[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]poststarthook/start-capstan-bootstrap ok\nlivez check passed\n',
      );
      assert.equal(
        (await srv.get('/healthz?verbose=false')).body,
        '[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]poststarthook/start-capstan-bootstrap ok\nhealthz check passed\n',
      );
      assert.equal(
        (await srv.get('/readyz?verbose')).body,
        '[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]poststarthook/start-capstan-bootstrap ok\n[+]shutdown ok\nreadyz check passed\n',
      );
    });
  });

  test('exclude is repeatable, marks excluded checks and warns about unknown names', async () => {
    const logged: string[] = [];
    await withServer({ log: (l) => logged.push(l) }, async (checks, srv) => {
      checks.addCheck('etcd', () => {
        throw new Error('connection refused');
      });
      const r = await srv.get('/readyz?verbose&exclude=etcd&exclude=log&exclude=nope&exclude=alsonope');
      assert.equal(r.status, 200);
      assert.equal(
        r.body,
        '[+]ping ok\n[+]log excluded: ok\n[+]etcd excluded: ok\n[+]shutdown ok\n' +
          'warn: some health checks cannot be excluded: no matches for "alsonope","nope"\nreadyz check passed\n',
      );
      assert.ok(logged.includes('cannot exclude some health checks, no health checks are installed matching "alsonope","nope"'));
      const quiet = await srv.get('/readyz?exclude=etcd');
      assert.equal(quiet.status, 200);
      assert.equal(quiet.body, 'ok');
    });
  });

  test('a failing check gives 500 with the verbose listing, reason withheld, and a log line', async () => {
    const logged: string[] = [];
    await withServer({ log: (l) => logged.push(l) }, async (checks, srv) => {
      checks.addCheck('etcd', async () => {
        throw new Error('connection refused');
      });
      const r = await srv.get('/healthz');
      assert.equal(r.status, 500);
      assert.equal(r.body, '[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\nhealthz check failed\n');
      assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
      assert.ok(logged.includes('etcd check failed: healthz\n[-]etcd failed: connection refused\n'));
      const v = await srv.get('/livez?verbose');
      assert.equal(v.status, 500);
      assert.ok(v.body.endsWith('[-]etcd failed: reason withheld\nlivez check failed\n'));
    });
  });

  test('single checks: ok, failure with reason, unknown is 404', async () => {
    await withServer({}, async (checks, srv) => {
      checks.addCheck(
        'etcd',
        () => {
          throw new Error('connection refused');
        },
        ['livez', 'readyz'],
      );
      const ping = await srv.get('/livez/ping');
      assert.equal(ping.status, 200);
      assert.equal(ping.body, 'ok');
      const etcd = await srv.get('/readyz/etcd');
      assert.equal(etcd.status, 500);
      assert.equal(etcd.body, 'internal server error: connection refused\n');
      const notOnHealthz = await srv.get('/healthz/etcd');
      assert.equal(notOnHealthz.status, 404);
      assert.equal(notOnHealthz.body, '404 page not found\n');
      assert.equal((await srv.get('/livez/shutdown')).status, 404);
      assert.equal((await srv.get('/readyz/shutdown')).body, 'ok');
      const hook = checks.addPostStartHook('rbac/bootstrap-roles');
      assert.equal((await srv.get('/readyz/poststarthook/rbac/bootstrap-roles')).body, 'internal server error: not finished\n');
      hook.done();
      assert.equal((await srv.get('/readyz/poststarthook/rbac/bootstrap-roles')).body, 'ok');
    });
  });

  test('livez grace period: unfinished post-start hooks pass on livez only, until the period ends', async () => {
    let now = 1_000_000;
    await withServer({ livezGracePeriodMs: 10_000, now: () => now }, async (checks, srv) => {
      const hook = checks.addPostStartHook('start-capstan-bootstrap');
      now += 5_000;
      assert.equal((await srv.get('/livez')).status, 200);
      assert.equal((await srv.get('/livez/poststarthook/start-capstan-bootstrap')).status, 200);
      const ready = await srv.get('/readyz');
      assert.equal(ready.status, 500);
      assert.ok(ready.body.includes('[-]poststarthook/start-capstan-bootstrap failed: reason withheld\n'));
      assert.equal((await srv.get('/healthz')).status, 500);
      assert.equal(await checks.isReady(), false);

      now += 5_001;
      const late = await srv.get('/livez');
      assert.equal(late.status, 500);
      assert.ok(late.body.endsWith('[-]poststarthook/start-capstan-bootstrap failed: reason withheld\nlivez check failed\n'));

      hook.done();
      for (const ep of ['/livez', '/readyz', '/healthz']) assert.equal((await srv.get(ep)).status, 200, ep);
      assert.equal(await checks.isReady(), true);
    });
  });

  test('shutdown fails readyz from the moment it starts; livez and healthz stay ok', async () => {
    await withServer({}, async (checks, srv) => {
      assert.equal(await checks.isReady(), true);
      checks.startShutdown();
      const r = await srv.get('/readyz');
      assert.equal(r.status, 500);
      assert.equal(r.body, '[+]ping ok\n[+]log ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n');
      assert.equal((await srv.get('/readyz/shutdown')).body, 'internal server error: process is shutting down\n');
      assert.equal((await srv.get('/livez')).status, 200);
      assert.equal((await srv.get('/healthz')).status, 200);
      assert.equal(await checks.isReady(), false);
      assert.equal((await srv.get('/readyz?exclude=shutdown')).status, 200);
    });
  });

  test('a hung storage check fails after its timeout instead of hanging the endpoint', async () => {
    await withServer({}, async (checks, srv) => {
      checks.addStorageChecks(() => new Promise<void>(() => undefined), 50);
      const started = Date.now();
      const r = await srv.get('/readyz/etcd');
      assert.equal(r.status, 500);
      assert.equal(r.body, 'internal server error: timed out after 50ms\n');
      assert.ok(Date.now() - started < 2000);
    });
  });

  test('duplicate and reserved names are refused; other paths pass through', async () => {
    await withServer({}, async (checks, srv) => {
      assert.throws(() => checks.addCheck('ping', () => undefined), /already installed/);
      assert.throws(() => checks.addCheck('shutdown', () => undefined), /reserved/);
      checks.addCheck('readyz-only', () => undefined, ['readyz']);
      assert.deepEqual(checks.names('readyz'), ['ping', 'log', 'readyz-only', 'shutdown']);
      assert.deepEqual(checks.names('livez'), ['ping', 'log']);
      assert.equal((await srv.get('/livezzz')).status, 404);
    });
  });
});
