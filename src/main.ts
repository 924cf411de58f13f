#!/usr/bin/env node
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { parseArgs, usage } from './cli/flags.js';
import { runPrimary } from './cluster/primary.js';
import { runServerProcess } from './cluster/server-process.js';
import { StartupError } from './config/startup-error.js';
import { checkKubeconfigPath } from './cli/serving-banner.js';
import { logger } from './logging/logger.js';
import { checkAuditPolicy } from './audit/audit-log.js';
import { checkAuthenticationFlags } from './auth/authentication-setup.js';
import { envtestAssetsCommand } from './cli/envtest-assets.js';
import { warnIfOpenToOtherHosts } from './cli/open-access-warning.js';

/**
 * The `capstan` command: parses flags, then either serves in this process (`--workers 1`, the
 * default: no cluster module, fastest start), or becomes the cluster primary that forks the workers
 * (`--workers N`, `auto` = one per core). Workers re-run this file and go straight to serving.
 * `capstan envtest-assets DIR` writes executables for controller-runtime's envtest instead.
 */
async function main(): Promise<void> {
  if (process.argv[2] === 'envtest-assets') process.exit(envtestAssetsCommand(process.argv.slice(3)));
  let parsed;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(usage());
    return;
  }
  const config = parsed.config;
  logger.setLevel(config.logLevel);
  logger.setFormat(config.logFormat === 'auto' ? (process.stderr.isTTY ? 'text' : 'json') : config.logFormat);
  if (config.storage === 'memory' && config.workers !== 1) {
    process.stderr.write('Error: --workers greater than 1 requires --storage=redis: the memory store lives in one process\n');
    process.exit(2);
  }
  if (cluster.isPrimary) checkKubeconfigPath(config);
  if (cluster.isPrimary) warnIfOpenToOtherHosts(config);
  const workers = config.workers < 1 ? availableParallelism() : config.workers;
  if (cluster.isPrimary && workers > 1) checkAuditPolicy(config);
  if (cluster.isPrimary && workers > 1) checkAuthenticationFlags(config);
  if (cluster.isPrimary && workers > 1) {
    await runPrimary(config, { workers });
    return;
  }
  await runServerProcess(config);
}

main().catch((err: unknown) => {
  // Start-up failed: one line naming what failed (the stack only when debugging).
  if (!(err instanceof StartupError)) logger.debug('start-up failed', { error: err });
  process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
