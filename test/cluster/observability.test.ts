/**
 * Request labels, the JSON logger, the request logger and the metrics middleware/router over a
 * real HTTP server (a small Express app mounting them the way src/server/app.ts does).
 */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Logger } from '../../src/logging/logger.js';
import { errorLogger, redactedUrl, requestLogger } from '../../src/server/request-logger.js';
import { observeRedisCommand, recordWatchDropped, recordWatchEventSent, setStorageStatsCollector } from '../../src/metrics/metrics.js';
import { metricsMiddleware, metricsRouter } from '../../src/metrics/metrics-router.js';
import { labelRequest } from '../../src/metrics/request-labels.js';
import { metricSum } from './cluster-process.js';
import { parseRequest } from '../../src/api/parsed-request.js';

describe('request labels follow kube-apiserver', () => {
  const cases: [string, string, string, Partial<Record<string, string>>][] = [
    ['GET', '/api/v1/namespaces/ns/pods/p', '', { verb: 'GET', scope: 'resource', resource: 'pods', group: '', version: 'v1' }],
    ['GET', '/api/v1/namespaces/ns/pods', '', { verb: 'LIST', scope: 'namespace' }],
    ['GET', '/api/v1/pods', '', { verb: 'LIST', scope: 'cluster' }],
    ['GET', '/apis/apps/v1/namespaces/ns/deployments?watch=true', '', { verb: 'WATCH', scope: 'namespace', group: 'apps' }],
    ['POST', '/apis/apps/v1/namespaces/ns/deployments?dryRun=All', 'application/json', { verb: 'POST', scope: 'resource', dry_run: 'All' }],
    ['PATCH', '/apis/apps/v1/namespaces/ns/deployments/d', 'application/apply-patch+yaml', { verb: 'APPLY', scope: 'resource' }],
    ['PUT', '/apis/apps/v1/namespaces/ns/deployments/d/scale', 'application/json', { verb: 'PUT', subresource: 'scale' }],
    ['DELETE', '/api/v1/namespaces/ns/configmaps', '', { verb: 'DELETE', scope: 'namespace' }],
    ['GET', '/readyz', '', { verb: 'GET', scope: '', resource: '', subresource: '/readyz' }],
  ];
  for (const [method, url, ct, want] of cases) {
    test(`${method} ${url}`, () => {
      const { labels } = labelRequest(method, parseRequest(method, url), ct);
      for (const [k, v] of Object.entries(want)) assert.equal(labels[k as keyof typeof labels], v, k);
      assert.equal(labels.component, 'apiserver');
    });
  }
});

describe('logger', () => {
  test('filters by level and writes one JSON object per line with the stack of errors', () => {
    const lines: string[] = [];
    const log = new Logger('warn', (l) => lines.push(l));
    log.info('dropped');
    log.error('boom', { error: new Error('bad thing') });
    assert.equal(lines.length, 1);
    assert.ok(lines[0]?.endsWith('\n'));
    const rec = JSON.parse(lines[0]) as Record<string, any>;
    assert.equal(rec.level, 'error');
    assert.equal(rec.msg, 'boom');
    assert.equal(rec.error.message, 'bad thing');
    assert.match(rec.error.stack, /observability\.test/);
    assert.match(lines[0], /^\{"level":"error","msg":"boom"/);
    log.setLevel('debug');
    log.debug('now shown');
    assert.equal(lines.length, 2);
  });

  test('redactedUrl drops token-like query parameters and keeps the rest', () => {
    assert.equal(redactedUrl('/api/v1/pods?watch=1&access_token=x&labelSelector=a%3Db&password=p'), '/api/v1/pods?watch=1&labelSelector=a%3Db');
    assert.equal(redactedUrl('/api/v1/pods?token=x'), '/api/v1/pods');
  });
});

describe('middleware over HTTP', () => {
  let server: Server;
  let base: string;
  const lines: string[] = [];
  const log = new Logger('info', (l) => lines.push(l));
  let releaseWatch: (() => void) | undefined;

  before(async () => {
    const app = express();
    app.use(requestLogger({ logger: log }));
    app.use(metricsMiddleware());
    app.use(metricsRouter());
    app.get('/api/v1/namespaces/:ns/configmaps/:name', (_req, res) => {
      res.status(200).json({});
    });
    app.post('/api/v1/namespaces/:ns/configmaps', express.json(), (_req, res) => {
      res.status(201).json({});
    });
    app.get('/api/v1/namespaces/:ns/secrets', (req, res, next) => {
      if (req.query.watch === '1') {
        res.status(200).write('{}\n');
        releaseWatch = () => res.end();
        return;
      }
      next(new Error('list exploded'));
    });
    app.use(errorLogger(log));
    app.use((_err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(500).end();
    });
    server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.close();
  });

  test('one request line per request, without bodies, Authorization or tokens', async () => {
    lines.length = 0;
    const r = await fetch(`${base}/api/v1/namespaces/obs/configmaps?token=abc`, {
      method: 'POST',
      headers: { authorization: 'Bearer sekrit-bearer', 'content-type': 'application/json', 'user-agent': 'obs-test/1.0' },
      body: JSON.stringify({ data: { password: 'hunter2' } }),
    });
    assert.equal(r.status, 201);
    await r.text();
    await new Promise((resolve) => setImmediate(resolve));
    const reqLines = lines.filter((l) => l.includes('"msg":"request"'));
    assert.equal(reqLines.length, 1);
    const line = reqLines[0];
    assert.ok(!line.includes('sekrit-bearer') && !line.includes('hunter2') && !line.includes('abc'), line);
    const rec = JSON.parse(line) as Record<string, unknown>;
    assert.equal(rec.level, 'info');
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/api/v1/namespaces/obs/configmaps');
    assert.equal(rec.verb, 'create');
    assert.equal(rec.resource, 'configmaps');
    assert.equal(rec.namespace, 'obs');
    assert.equal(rec.status, 201);
    assert.equal(typeof rec.durationMs, 'number');
    assert.equal(rec.userAgent, 'obs-test/1.0');
    assert.equal(rec.remoteAddr, '127.0.0.1');
  });

  test('server errors are logged with their stack trace', async () => {
    lines.length = 0;
    const r = await fetch(`${base}/api/v1/namespaces/obs/secrets`);
    assert.equal(r.status, 500);
    await r.text();
    await new Promise((resolve) => setImmediate(resolve));
    const err = lines.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.msg === 'request failed');
    assert.ok(err);
    assert.equal(err.level, 'error');
    assert.match(err.error.stack, /list exploded/);
    const reqLine = lines.map((l) => JSON.parse(l) as Record<string, any>).find((l) => l.msg === 'request');
    assert.equal(reqLine?.level, 'warn', '5xx request lines are warnings');
  });

  test('/metrics: request counts, latency histogram, long-running watches, storage objects, watch and Redis series', async () => {
    const scrape = async (): Promise<string> => {
      const r = await fetch(`${base}/metrics`);
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      return r.text();
    };
    const labels = { verb: 'GET', resource: 'configmaps', scope: 'resource', code: '200', component: 'apiserver' };
    const before = metricSum(await scrape(), 'apiserver_request_total', labels);
    for (let i = 0; i < 3; i++) await (await fetch(`${base}/api/v1/namespaces/obs/configmaps/c${i}`)).text();
    let text = await scrape();
    assert.equal(metricSum(text, 'apiserver_request_total', labels), before + 3);
    assert.ok(metricSum(text, 'apiserver_request_duration_seconds_count', { verb: 'GET', resource: 'configmaps' }) >= 3);
    // As kube-apiserver writes a histogram's labels: sorted, `le` last.
    assert.match(text, /apiserver_request_duration_seconds_bucket\{component="apiserver",dry_run="",group="",resource="configmaps",[^}]*,le="0\.005"\}/);

    const watchDone = new Promise<void>((resolve, reject) => {
      const req = request(`${base}/api/v1/namespaces/obs/secrets?watch=1`, (res) => {
        res.resume();
        res.on('end', () => resolve());
      });
      req.on('error', reject);
      req.end();
    });
    while (releaseWatch === undefined) await new Promise((r) => setTimeout(r, 10));
    text = await scrape();
    assert.equal(metricSum(text, 'apiserver_longrunning_requests', { verb: 'WATCH', resource: 'secrets', scope: 'namespace' }), 1);
    releaseWatch();
    await watchDone;
    await new Promise((r) => setTimeout(r, 20));
    text = await scrape();
    assert.equal(metricSum(text, 'apiserver_longrunning_requests', { verb: 'WATCH', resource: 'secrets' }), 0);
    assert.equal(metricSum(text, 'apiserver_request_total', { verb: 'WATCH', resource: 'secrets', code: '200' }), 1);

    setStorageStatsCollector(async () => ({
      pods: { objectCount: 7, averageObjectBytes: 1200 },
      'deployments.apps': { objectCount: 2, averageObjectBytes: undefined },
    }));
    recordWatchEventSent('pods', 5);
    recordWatchDropped('pods');
    observeRedisCommand('EVALSHA', 0.002);
    observeRedisCommand('evalsha', 0.5, new Error('READONLY'));
    text = await scrape();
    setStorageStatsCollector(undefined);
    assert.equal(metricSum(text, 'apiserver_storage_objects', { resource: 'pods' }), 7);
    assert.equal(metricSum(text, 'apiserver_storage_objects', { resource: 'deployments.apps' }), 2);
    assert.equal(metricSum(text, 'apiserver_resource_objects', { group: 'apps', resource: 'deployments' }), 2);
    assert.equal(metricSum(text, 'apiserver_resource_size_estimate_bytes', { group: '', resource: 'pods' }), 7 * 1200);
    assert.equal(metricSum(text, 'apiserver_resource_size_estimate_bytes', { group: 'apps', resource: 'deployments' }), -1);
    assert.equal(metricSum(text, 'apiserver_watch_events_total', { resource: 'pods' }), 5);
    assert.equal(metricSum(text, 'apiserver_terminated_watchers_total', { resource: 'pods' }), 1);
    assert.equal(metricSum(text, 'capstan_redis_request_duration_seconds_count', { command: 'evalsha' }), 2);
    assert.equal(metricSum(text, 'capstan_redis_request_errors_total', { command: 'evalsha' }), 1);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    assert.match(text, /^nodejs_heap_size_used_bytes /m);
  });
});
