import cluster, { type Worker } from 'node:cluster';
import type { ServerConfig } from '../config/server-config.js';
import { announceServing } from '../cli/serving-banner.js';
import { listenOrExplain } from '../config/startup-error.js';
import { logger } from '../logging/logger.js';
import { servePrimaryMetrics } from '../metrics/cluster-aggregation.js';
import { ConnectionDistributor } from './connection-distributor.js';
import { isReadyMessage, LISTEN_PORT_ENV, LISTEN_SECURE_PORT_ENV, LISTEN_SECURE_URL_ENV, LISTEN_URL_ENV, WORKER_INDEX_ENV } from './messages.js';
import { ensureServingCertDir } from '../tls/serving-setup.js';
import { RestartPolicy, type RestartPolicyOptions } from './restart-policy.js';
import { PeerSyncRelay } from './peer-sync-relay.js';
import { workerExecArgv } from './node-flags.js';

/** Extra time past the shutdown delay a worker gets to drain before the primary kills it. */
const DRAIN_GRACE_MS = 60_000;

/**
 * glibc malloc arenas of a worker when its environment does not set MALLOC_ARENA_MAX: two instead of
 * glibc's eight per core. A worker's memory outside the JavaScript heap (buffers, V8's compiler zones,
 * TLS) is spread over fewer arenas and less of it stays resident after it is freed: at 3,000 pods on
 * Redis with two workers the workers' peak RSS was about 6% lower (docs/operations.md#memory), at the
 * same CPU. glibc reads it when the process starts, so the primary sets it for the workers it forks.
 */
const WORKER_MALLOC_ARENAS = '2';

interface Slot {
  index: number;
  worker: Worker | undefined;
  startedAt: number;
  restartTimer: NodeJS.Timeout | undefined;
}

/** Options of {@link runPrimary}. */
export interface PrimaryOptions {
  workers: number;
  restart?: RestartPolicyOptions;
}

/**
 * The cluster primary: binds the port itself and hands each connection to the next ready worker
 * (see ConnectionDistributor: a connection is never lost to a worker that dies while taking it),
 * forks `workers` workers, each in a slot whose index it keeps across restarts
 * (`CAPSTAN_WORKER_INDEX`; slot 0 runs the controllers). Prints the `serving` line once every slot
 * is ready. Restarts crashed workers with exponential backoff and gives up (exit 1, after stopping
 * the rest) when crashes come in a burst. On SIGTERM/SIGINT it forwards SIGTERM to every worker,
 * keeps handing out connections until the workers drain, waits for all of them, and exits 0 when
 * each exited 0. Resolves once the workers are forked (the process ends through `process.exit`);
 * rejects with a StartupError when the port cannot be bound or, with `--storage=redis`, Redis
 * cannot be reached (checked once here, so workers do not crash-loop on it).
 */
export async function runPrimary(config: ServerConfig, options: PrimaryOptions): Promise<void> {
  const policy = new RestartPolicy(options.restart);
  const slots: Slot[] = [];
  const workerSlot = new Map<Worker, Slot>();
  const ready = new Set<number>();
  let announced = false;
  let stopping = false;
  let exitCode = 0;
  let distributor: ConnectionDistributor | undefined;
  /** The listeners' URLs and ports: the main one (plain HTTP when served, else HTTPS), and HTTPS. */
  let listening: { url: string; port: number; secureUrl?: string; securePort?: number } | undefined;

  // Writes wait for the other workers' watch readers (peer-sync.ts); not with a replication fence,
  // where every change reaches watches only once replicas have it.
  const peerSync =
    config.storage === 'redis' && options.workers > 1 && config.workerWriteSyncTimeoutMs > 0 && config.redisWaitReplicas === 0
      ? new PeerSyncRelay(config.workerWriteSyncTimeoutMs)
      : undefined;
  const liveWorkers = (): Worker[] => slots.flatMap((s) => (s.worker !== undefined && !s.worker.isDead() ? [s.worker] : []));
  servePrimaryMetrics(liveWorkers);

  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv) });
  const fork = (slot: Slot): void => {
    slot.restartTimer = undefined;
    const listener = distributor;
    const where = listening;
    if (listener === undefined || where === undefined) throw new Error('workers are forked only once the port is bound');
    const worker = cluster.fork({
      MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? WORKER_MALLOC_ARENAS,
      [WORKER_INDEX_ENV]: String(slot.index),
      [LISTEN_URL_ENV]: where.url,
      [LISTEN_PORT_ENV]: String(where.port),
      ...(where.securePort === undefined ? {} : { [LISTEN_SECURE_URL_ENV]: where.secureUrl, [LISTEN_SECURE_PORT_ENV]: String(where.securePort) }),
    });
    slot.worker = worker;
    slot.startedAt = Date.now();
    workerSlot.set(worker, slot);
    peerSync?.addWorker(worker);
    worker.on('message', (msg: unknown) => {
      if (!isReadyMessage(msg)) return;
      listener.addWorker(worker);
      ready.add(slot.index);
      if (!announced && ready.size === options.workers) {
        announced = true;
        announceServing(config, where.url, { workers: options.workers }, where.secureUrl);
      } else if (announced) {
        logger.info('worker restarted', { worker: slot.index, pid: worker.process.pid });
      }
    });
  };

  const finishIfAllExited = (): void => {
    if (liveWorkers().length > 0) return;
    logger.announce('all workers exited', { code: exitCode });
    process.exit(exitCode);
  };

  const stopAll = (reason: string, code: number): void => {
    if (code !== 0) exitCode = code;
    if (stopping) return;
    stopping = true;
    logger.announce('shutting down', { signal: reason, workers: liveWorkers().length });
    for (const slot of slots) {
      if (slot.restartTimer !== undefined) clearTimeout(slot.restartTimer);
      slot.restartTimer = undefined;
    }
    distributor?.shutdown();
    for (const worker of liveWorkers()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      const left = liveWorkers();
      logger.error('workers did not drain in time; killing them', { workers: left.map((w) => w.process.pid) });
      exitCode = 1;
      for (const worker of left) worker.process.kill('SIGKILL');
    }, config.shutdownDelayMs + DRAIN_GRACE_MS).unref();
    finishIfAllExited();
  };

  cluster.on('exit', (worker: Worker, code: number | null, signal: string | null) => {
    peerSync?.removeWorker(worker);
    const slot = workerSlot.get(worker);
    workerSlot.delete(worker);
    if (slot === undefined) return;
    if (slot.worker === worker) slot.worker = undefined;
    if (stopping) {
      if (code !== 0) {
        exitCode = 1;
        logger.warn('worker exited during shutdown', { worker: slot.index, pid: worker.process.pid, code, signal });
      }
      finishIfAllExited();
      return;
    }
    const uptimeMs = Date.now() - slot.startedAt;
    const decision = policy.onCrash(slot.index, uptimeMs, Date.now());
    if (decision.action === 'give-up') {
      logger.error('workers are crashing repeatedly; giving up', {
        worker: slot.index,
        code,
        signal,
        crashes: decision.crashesInWindow,
        windowSeconds: decision.windowMs / 1000,
      });
      stopAll('crash loop', 1);
      return;
    }
    logger.warn('worker exited unexpectedly; restarting', {
      worker: slot.index,
      pid: worker.process.pid,
      code,
      signal,
      uptimeMs,
      restartInMs: decision.delayMs,
      consecutiveCrashes: decision.consecutive,
    });
    slot.restartTimer = setTimeout(() => fork(slot), decision.delayMs);
  });

  process.on('SIGTERM', () => stopAll('SIGTERM', 0));
  process.on('SIGINT', () => stopAll('SIGINT', 0));

  if (config.storage === 'redis') {
    // Workers would each fail the same way and crash-loop: say once, before forking, why not.
    const { openRedisStorage } = await import('../storage/redis/open-redis.js');
    await (await openRedisStorage(config)).close();
  }
  // Certificates are generated once here, before the workers load them.
  if (config.securePort !== undefined) await ensureServingCertDir(config);
  const distributorOptions = { claimTimeoutMs: config.workerClaimTimeoutMs, rebalanceIntervalMs: config.workerRebalanceIntervalMs };
  const urlOf = (scheme: string, host: string, port: number): string => `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const plainPort = config.port;
  const securePort = config.securePort;
  if (plainPort !== undefined) {
    const d = await listenOrExplain(config.insecureBindAddress, plainPort, () =>
      ConnectionDistributor.listen(plainPort, config.insecureBindAddress, distributorOptions),
    );
    distributor = d;
    listening = { url: d.url, port: d.port };
    if (securePort !== undefined) {
      const bound = await listenOrExplain(config.bindAddress, securePort, () => d.listenAlso(securePort, config.bindAddress));
      listening = { ...listening, secureUrl: urlOf('https', config.bindAddress, bound), securePort: bound };
    }
  } else if (securePort !== undefined) {
    const d = await listenOrExplain(config.bindAddress, securePort, () => ConnectionDistributor.listen(securePort, config.bindAddress, distributorOptions));
    distributor = d;
    const secureUrl = urlOf('https', config.bindAddress, d.port);
    listening = { url: secureUrl, port: d.port, secureUrl, securePort: d.port };
  } else {
    throw new Error('nothing to serve: neither --secure-port nor --insecure-port is set');
  }
  if (stopping) return;
  for (let index = 0; index < options.workers; index++) {
    const slot: Slot = { index, worker: undefined, startedAt: 0, restartTimer: undefined };
    slots.push(slot);
    fork(slot);
  }
}
