/**
 * Test entry point that runs Capstan's real cluster primary and real worker process code over the
 * memory store (each worker its own store), which `capstan` itself refuses: it exercises forking,
 * the `serving` line, restarts, shutdown and metrics aggregation without Redis. Environment:
 * FIXTURE_WORKERS (default 2), FIXTURE_RESTART (JSON RestartPolicyOptions), FIXTURE_CRASH_ON_START=1
 * (workers throw during start-up). Each worker's app logs its requests and serves /metrics itself.
 */
import cluster from 'node:cluster';
import { parseArgs } from '../../src/cli/flags.js';
import { runPrimary } from '../../src/cluster/primary.js';
import { runServerProcess } from '../../src/cluster/server-process.js';
import type { RestartPolicyOptions } from '../../src/cluster/restart-policy.js';

const parsed = parseArgs(process.argv.slice(2));
if (parsed.help) throw new Error('no --help in the fixture');
const config = parsed.config;
if (cluster.isPrimary) {
  const restart = process.env.FIXTURE_RESTART ? (JSON.parse(process.env.FIXTURE_RESTART) as RestartPolicyOptions) : undefined;
  await runPrimary(config, { workers: Number(process.env.FIXTURE_WORKERS ?? '2'), restart });
} else {
  if (process.env.FIXTURE_CRASH_ON_START === '1') throw new Error('fixture: crashing on start as asked');
  await runServerProcess(config);
}
