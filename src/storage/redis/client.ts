import { describeSocketError } from '../../config/startup-error.js';
/**
 * Connections to a Redis deployment (standalone URL, Sentinel or Cluster): how they are made, how
 * they reconnect, and how a failure to reach Redis is worded for a person.
 */
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisClient } from './scripts.js';
import { StorageError } from '../../api/storage-error.js';

/** Where the Redis deployment is and how to talk to it. */
export interface RedisConnectionOptions {
  /** `redis://` or `rediss://` URL of a standalone server (default redis://127.0.0.1:6379). */
  url?: string;
  /** Seed nodes of a Redis Cluster; when set, `url` and `sentinels` are ignored. */
  clusterNodes?: { host: string; port: number }[];
  /** Sentinels watching the master named `sentinelName`; when set, `url` is ignored. */
  sentinels?: { host: string; port: number }[];
  sentinelName?: string;
  password?: string;
  /** Connect with TLS (also to Cluster nodes and the Sentinel-announced master). */
  tls?: boolean;
  /** A command without reply after this long fails (default 5000 ms). */
  commandTimeoutMs?: number;
}

/** Reconnect quickly after a restart or failover; requests meanwhile fail fast. */
function reconnectDelay(attempt: number): number {
  return Math.min(attempt * 50, 500);
}

/**
 * The shared command connection. It starts connecting at once and reconnects for ever; connection
 * trouble is not reported as events (nobody listens) but as rejected commands, each given at most
 * `commandTimeoutMs` and two retries.
 *
 * The storage sends its scripts and reads on it in one write per turn of the event loop (write-batching.ts).
 */
export function createRedisClient(o: RedisConnectionOptions): RedisClient {
  const common: RedisOptions = {
    password: o.password,
    tls: o.tls ? {} : undefined,
    protocol: 2,
    commandTimeout: o.commandTimeoutMs ?? 5000,
    maxRetriesPerRequest: 2,
    retryStrategy: reconnectDelay,
  };
  let client: RedisClient;
  if (o.clusterNodes && o.clusterNodes.length > 0) {
    const clusterOptions: ClusterOptions = {
      redisOptions: common,
      maxRedirections: 16,
      retryDelayOnFailover: 200,
      clusterRetryStrategy: reconnectDelay,
    };
    client = new Cluster(o.clusterNodes, clusterOptions);
  } else if (o.sentinels && o.sentinels.length > 0) {
    client = new Redis({
      ...common,
      sentinels: o.sentinels,
      name: o.sentinelName ?? 'mymaster',
      sentinelPassword: o.password,
      enableTLSForSentinelMode: o.tls === true,
      // Reconnect as soon as the Sentinels announce a failover (+switch-master). Without it, a
      // primary that is paused or cut off keeps this connection until it comes back and is demoted:
      // meanwhile no write succeeds, and once it answers again it serves reads and takes writes
      // that the demotion then discards.
      failoverDetector: true,
    });
  } else {
    client = new Redis(o.url ?? 'redis://127.0.0.1:6379', common);
  }
  client.on('error', () => undefined);
  return client;
}

/**
 * A dedicated connection to the same deployment as `client`, for one blocking reader (XREAD
 * BLOCK): no command timeout shorter than its block, and commands wait through reconnects. With
 * Sentinels it reconnects whenever `client` does (a failover moves both to the new primary).
 */
export function createReaderClient(client: RedisClient): RedisClient {
  const override = { commandTimeout: undefined, maxRetriesPerRequest: null };
  if (client instanceof Cluster) {
    const reader = client.duplicate(undefined, { redisOptions: { ...client.options.redisOptions, ...override } });
    reader.on('error', () => undefined);
    return reader;
  }
  // With Sentinels, only the shared connection subscribes to failover announcements (one set of
  // Sentinel connections per process, not one per reader): when it reconnects, so do the readers.
  const reader = client.duplicate({ ...override, failoverDetector: false });
  reader.on('error', () => undefined);
  if (client.options.sentinels && client.options.sentinels.length > 0) {
    // Only a connected reader is dropped: one still asking the Sentinels would be ended for good
    // (ioredis gives up on a connection closed while it resolves the primary), and it will get
    // the new primary's address anyway.
    const follow = (): void => {
      if (reader.status === 'ready') reader.disconnect(true);
    };
    client.on('close', follow);
    reader.once('end', () => client.off('close', follow));
  }
  return reader;
}

/** A connection failure in a person's words (`connection refused`, `authentication failed`), or the error's own message. */
export function connectionProblem(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/NOAUTH|WRONGPASS|invalid password|invalid username-password/i.test(message)) return 'authentication failed';
  return describeSocketError(err);
}

/**
 * Resolves once `preparing` (e.g. script loading) has finished and Redis answers PING on `client`.
 * Otherwise rejects with `StorageError('Unavailable', 'cannot reach Redis: <why>')`, the why taken
 * from the connection's own error when it reported one (ioredis says why it cannot connect only
 * in 'error' events; the failed command says less).
 */
export async function reachRedis(client: RedisClient, preparing: Promise<unknown>): Promise<void> {
  let connectError: unknown;
  const onError = (err: unknown): void => {
    connectError = err;
  };
  client.on('error', onError);
  try {
    await preparing;
    await client.call('PING');
  } catch (err) {
    throw new StorageError('Unavailable', `cannot reach Redis: ${connectionProblem(connectError ?? err)}`);
  } finally {
    client.off('error', onError);
  }
}

/** Whether `client` is connected and Redis answers PING within `timeoutMs`; never rejects. */
export async function answersPing(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    return (await Promise.race([client.call('PING'), timeout])) === 'PONG';
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Closes `client` politely (QUIT), or drops it when Redis cannot be told; never rejects. */
export async function closeClient(client: RedisClient): Promise<void> {
  try {
    await client.quit();
  } catch {
    // dropped below
  } finally {
    // QUIT ends the connection but not the Sentinel connections of ioredis's failover detector,
    // which would reconnect forever (and keep the process alive); disconnect() closes those too.
    client.disconnect();
  }
}
