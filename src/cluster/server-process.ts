import cluster from 'node:cluster';
import type { ServerConfig } from '../config/server-config.js';
import { announceServing } from '../cli/serving-banner.js';
import { warmUpProtobufWhenIdle } from '../codec/protobuf/warm-up.js';
import { logger } from '../logging/logger.js';
import { startServer, type CapstanServer } from '../server/app.js';
import { MemoryStorage } from '../storage/memory-storage.js';
import type { Storage } from '../storage/storage.js';
import { ConnectionReceiver } from './connection-receiver.js';
import { afterDeferredWatchFrames } from '../watch/watch-writer.js';
import { WorkerPeerSync } from './peer-sync.js';
import type { PeerReaders } from '../storage/redis/peer-readers.js';
import { listenerFromEnv, workerIndexFromEnv, type ReadyMessage } from './messages.js';

/** Opens the storage backend the flags select (with `peers`, the Redis backend's writes wait for the other workers' watches). */
export async function openStorage(config: ServerConfig, peers?: PeerReaders): Promise<Storage> {
  if (config.storage === 'memory') return new MemoryStorage({ historyMs: config.watchCacheHistoryMs, maxObjectBytes: config.limits.maxObjectBytes });
  const { openRedisStorage } = await import('../storage/redis/open-redis.js');
  return openRedisStorage(config, peers);
}

/** A worker's link to the other workers' watch readers, through the primary (peer-sync.ts). */
function workerPeerSync(config: ServerConfig): WorkerPeerSync | undefined {
  const worker = cluster.worker;
  if (worker === undefined || config.storage !== 'redis' || config.workerWriteSyncTimeoutMs <= 0) return undefined;
  const sync = new WorkerPeerSync({
    self: worker.id,
    send: (message) => {
      if (process.connected) process.send?.(message, undefined, {}, () => undefined);
    },
    safetyMs: config.workerWriteSyncTimeoutMs + 1000,
    afterWatchFrames: afterDeferredWatchFrames,
  });
  process.on('message', (message: unknown) => sync.onMessage(message));
  return sync;
}

/** Logs a fatal error with its stack and exits 1 (a worker is then restarted by the primary). */
function installCrashHandlers(): void {
  process.on('uncaughtException', (err: unknown) => {
    logger.error('uncaught exception', { error: err });
    process.exit(1);
  });
  process.on('unhandledRejection', (reason: unknown) => {
    logger.error('unhandled promise rejection', { error: reason });
    process.exit(1);
  });
}

/**
 * Graceful stop on SIGTERM/SIGINT (and, in a worker, on losing the primary): readyz fails, the
 * shutdown delay passes, watches end, in-flight requests drain, storage closes, exit 0 (1 when the
 * shutdown itself fails). A signal during start-up exits 0 at once: nothing is served yet. Repeated
 * signals do not restart the sequence. Installed before start-up so no signal meets Node's default
 * handler (which would end the process with a signal status instead of 0).
 */
function installShutdown(): { serving(server: CapstanServer): void } {
  let server: CapstanServer | undefined;
  let stopping = false;
  const close = (target: CapstanServer): void => {
    target.close().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error('shutdown failed', { error: err });
        process.exit(1);
      },
    );
  };
  const stop = (reason: string): void => {
    if (stopping) return;
    stopping = true;
    logger.announce('shutting down', { signal: reason });
    if (server === undefined) process.exit(0);
    else close(server);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (cluster.isWorker) process.on('disconnect', () => stop('primary disconnected'));
  return {
    serving(started) {
      server = started;
    },
  };
}

/**
 * Runs one serving process: the whole server (`--workers 1`, binding the port itself) or one
 * cluster worker (serving the connections the primary accepts and hands over; it binds nothing).
 * Every worker is a candidate for the controller manager's lease (one process at a time runs the
 * controllers, across every instance on the storage); only the single process or worker slot 0 does
 * the instance's own work (identity Lease, APF configuration). The single process prints the
 * `serving` line; a worker tells the primary it is ready, and the primary prints the line once
 * every worker is.
 */
export async function runServerProcess(config: ServerConfig): Promise<CapstanServer> {
  installCrashHandlers();
  const index = cluster.isWorker ? workerIndexFromEnv() : 0;
  if (cluster.isWorker) logger.addBaseFields({ worker: index, pid: process.pid });
  const shutdown = installShutdown();
  const listener = cluster.isWorker ? listenerFromEnv() : undefined;
  if (cluster.isWorker && listener === undefined) {
    throw new Error("a cluster worker needs the primary's listener (CAPSTAN_LISTEN_URL, CAPSTAN_LISTEN_PORT)");
  }
  const receiver = listener === undefined ? undefined : new ConnectionReceiver(index);
  const storage = await openStorage(config, workerPeerSync(config));
  const server = await startServer(config, storage, {
    // Each worker competes for the controller manager's lease; one per instance does the instance's own work.
    instanceControllers: index === 0,
    handedConnections:
      listener === undefined || receiver === undefined
        ? undefined
        : {
            ...listener,
            onDraining: () => receiver.drain(),
            clients: receiver.clients,
            onClosed: () => receiver.close(),
          },
  });
  shutdown.serving(server);
  warmUpProtobufWhenIdle(server.context.shutdownSignal);
  if (receiver !== undefined) {
    receiver.serve(
      (socket) => server.serverForPort(socket.localPort ?? 0),
      (share, settling) => server.shedConnection(share, settling),
      (session) => server.moveConnection(session),
    );
    logger.debug('worker ready', { url: server.url });
    const message: ReadyMessage = { type: 'capstan:ready', url: server.url, index };
    process.send?.(message);
  } else {
    announceServing(config, server.url, {}, server.secureUrl);
  }
  return server;
}
