import type { ServerConfig } from '../../config/server-config.js';
import { redactUrl, StartupError } from '../../config/startup-error.js';
import { setTokenKey } from '../continue-token.js';
import { ListCachingStorage } from '../list-caching-storage.js';
import { logRedisStorageError, RedisStorage, type RedisStorageOptions } from './redis-storage.js';
import type { Storage } from '../storage.js';
import type { PeerReaders } from './peer-readers.js';

/** The Redis backend's options plus whether lists are served from the per-process list cache. */
export interface RedisBackendOptions extends RedisStorageOptions {
  /** Serve lists from a per-process cache kept current by the change stream (default true). */
  listCache?: boolean;
  /** How long a list waits for that cache to catch up before reading Redis (default 3000 ms). */
  listCacheCatchUpMs?: number;
  /** How long a get waits for that cache to catch up before reading Redis (default 100 ms). */
  getCacheCatchUpMs?: number;
}

/**
 * `redis` as the server runs it: wrapped in a ListCachingStorage keeping the same history window,
 * unless `listCache` is false. Failures without a caller, from either, go to one `onError`.
 */
export function withListCache(redis: RedisStorage, options: RedisBackendOptions): Storage {
  if (options.listCache === false) return redis;
  return new ListCachingStorage(redis, {
    historyMs: options.historyMs,
    historyMaxEvents: options.historyMaxEvents,
    catchUpTimeoutMs: options.listCacheCatchUpMs,
    getCatchUpTimeoutMs: options.getCacheCatchUpMs,
    onError: options.onError ?? logRedisStorageError,
  });
}

/**
 * Connects to Redis (see RedisStorage.connect, whose errors it rejects with) and returns the backend
 * as the server runs it (see withListCache).
 */
export async function connectRedisBackend(options: RedisBackendOptions): Promise<Storage> {
  return withListCache(await RedisStorage.connect(options), options);
}

function hostPort(value: string, flag: string): { host: string; port: number } {
  const i = value.lastIndexOf(':');
  const port = Number(value.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) throw new StartupError(`invalid ${flag} address "${value}": want host:port`);
  return { host: value.slice(0, i), port };
}

/** Which Redis the flags name, for messages: the URL (password hidden), the Cluster seeds or the Sentinels. */
function describeTarget(config: ServerConfig): string {
  if (config.redisCluster.length > 0) return `Redis Cluster ${config.redisCluster.join(',')}`;
  if (config.redisSentinels.length > 0) return `Redis master "${config.redisSentinelName}" through Sentinels ${config.redisSentinels.join(',')}`;
  return `Redis at ${redactUrl(config.redisUrl)}`;
}

/**
 * Opens the Redis backend configured by the command line (standalone URL, Cluster seeds or
 * Sentinel), behind the list cache unless `--watch-cache=false`, and sets the continue-token key
 * shared by every server on that Redis. Rejects with a StartupError naming the Redis and the
 * reason when it cannot be reached.
 */
export async function openRedisStorage(config: ServerConfig, peers?: PeerReaders): Promise<Storage> {
  let url: URL;
  try {
    url = new URL(config.redisUrl);
  } catch {
    throw new StartupError(`invalid --redis-url "${redactUrl(config.redisUrl)}": not a URL`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new StartupError(`invalid --redis-url "${redactUrl(config.redisUrl)}": the scheme must be redis:// or rediss://`);
  // The password comes from the URL, or from CAPSTAN_REDIS_PASSWORD (the Helm chart's Secret) so it
  // need not appear in process arguments.
  const password = url.password !== '' ? decodeURIComponent(url.password) : process.env.CAPSTAN_REDIS_PASSWORD || undefined;
  const tls = url.protocol === 'rediss:';
  const options: RedisBackendOptions = {
    url: config.redisUrl,
    clusterNodes: config.redisCluster.length > 0 ? config.redisCluster.map((n) => hostPort(n, '--redis-cluster')) : undefined,
    sentinels: config.redisSentinels.length > 0 ? config.redisSentinels.map((n) => hostPort(n, '--redis-sentinels')) : undefined,
    sentinelName: config.redisSentinelName,
    password,
    tls,
    waitReplicas: config.redisWaitReplicas,
    historyMs: config.watchCacheHistoryMs,
    maxObjectBytes: config.limits.maxObjectBytes,
    listCache: config.watchCache,
    peers,
  };
  const redis = await RedisStorage.connect(options).catch((err: unknown) => {
    const reason = (err instanceof Error ? err.message : String(err)).replace(/^cannot reach Redis: /, '');
    throw new StartupError(`cannot reach ${describeTarget(config)}: ${reason}`);
  });
  // Every worker and pod on this Redis signs continue tokens with the same key.
  setTokenKey(await redis.sharedSecret('continue-token-key'));
  return withListCache(redis, options);
}
