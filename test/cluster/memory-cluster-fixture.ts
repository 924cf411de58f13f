/**
 * Test entry point that runs Capstan's real cluster primary and real worker process code over the
 * memory store (each worker its own store), which `capstan` itself refuses: it exercises forking,
 * the `serving` line, restarts, shutdown and metrics aggregation without Redis. Environment:
 * FIXTURE_WORKERS (default 2), FIXTURE_RESTART (JSON RestartPolicyOptions), FIXTURE_CRASH_ON_START=1
 * (workers throw during start-up). Until src/server/app.ts mounts the observability middleware
 * itself, the fixture mounts it at the front of each worker's app.
 */
import cluster from 'node:cluster';
import type { Express } from 'express';
import { parseArgs } from '../../src/cli/flags.js';
import { runPrimary } from '../../src/cluster/primary.js';
import { runServerProcess } from '../../src/cluster/server-process.js';
import { errorLogger, requestLogger } from '../../src/server/request-logger.js';
import { metricsMiddleware, metricsRouter } from '../../src/metrics/metrics-router.js';
import type { RestartPolicyOptions } from '../../src/cluster/restart-policy.js';

interface Layer {
  name: string;
}

/** Moves the last `count` layers of the app's router to the front. */
function mountFirst(app: Express, count: number): void {
  const router = (app as unknown as { router: { stack: Layer[] } }).router;
  const moved = router.stack.splice(router.stack.length - count, count);
  router.stack.unshift(...moved);
}

function ensureObservability(app: Express): void {
  const router = (app as unknown as { router: { stack: Layer[] } }).router;
  if (router.stack.some((l) => l.name === 'capstanMetrics')) return;
  app.use(requestLogger());
  app.use(metricsMiddleware());
  app.use(metricsRouter());
  mountFirst(app, 3);
  void errorLogger;
}

const parsed = parseArgs(process.argv.slice(2));
if (parsed.help) throw new Error('no --help in the fixture');
const config = parsed.config;
if (cluster.isPrimary) {
  const restart = process.env.FIXTURE_RESTART ? (JSON.parse(process.env.FIXTURE_RESTART) as RestartPolicyOptions) : undefined;
  await runPrimary(config, { workers: Number(process.env.FIXTURE_WORKERS ?? '2'), restart });
} else {
  if (process.env.FIXTURE_CRASH_ON_START === '1') throw new Error('fixture: crashing on start as asked');
  const server = await runServerProcess(config);
  ensureObservability(server.app);
}
