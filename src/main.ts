#!/usr/bin/env node
import { writeFileSync } from 'node:fs';
import { parseArgs, usage } from './cli/flags.js';
import { kubeconfigFor } from './cli/kubeconfig.js';
import { startServer } from './server/app.js';
import { MemoryStorage } from './storage/memory-storage.js';
import type { Storage } from './storage/storage.js';

/** The `capstan` command: parses flags, opens storage, serves until SIGTERM/SIGINT. */
async function main(): Promise<void> {
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
  if (config.storage === 'memory' && config.workers !== 1) {
    process.stderr.write('Error: --workers greater than 1 requires --storage=redis: the memory store lives in one process\n');
    process.exit(2);
  }
  let storage: Storage;
  if (config.storage === 'memory') {
    storage = new MemoryStorage({ historyMs: config.watchCacheHistoryMs });
  } else {
    const { openRedisStorage } = await import('./storage/open-redis.js');
    storage = await openRedisStorage(config);
  }
  const server = await startServer(config, storage);
  if (config.writeKubeconfig) writeFileSync(config.writeKubeconfig, kubeconfigFor(server.url));
  process.stderr.write(`${JSON.stringify({ level: 'info', msg: 'serving', url: server.url, storage: config.storage })}\n`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${JSON.stringify({ level: 'info', msg: 'shutting down', signal })}\n`);
    server.close().then(() => process.exit(0), (err: unknown) => {
      process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'shutdown failed', error: String(err) })}\n`);
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`Error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
