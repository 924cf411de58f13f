import type { ServerConfig } from '../cli/flags.js';
import { setTokenKey } from '../handlers/continue-token.js';
import { RedisStorage } from './redis-storage.js';
import type { Storage } from './storage.js';

function hostPort(value: string, flag: string): { host: string; port: number } {
  const i = value.lastIndexOf(':');
  const port = Number(value.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`invalid ${flag} address "${value}": want host:port`);
  return { host: value.slice(0, i), port };
}

/** Opens the Redis backend configured by the command line (standalone URL, Cluster seeds or Sentinel). */
export async function openRedisStorage(config: ServerConfig): Promise<Storage> {
  const url = new URL(config.redisUrl);
  // The password comes from the URL, or from CAPSTAN_REDIS_PASSWORD (the Helm chart's Secret) so it
  // need not appear in process arguments.
  const password = url.password !== '' ? decodeURIComponent(url.password) : process.env.CAPSTAN_REDIS_PASSWORD || undefined;
  const tls = url.protocol === 'rediss:';
  const storage = await RedisStorage.connect({
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
  });
  // Every worker and pod on this Redis signs continue tokens with the same key.
  setTokenKey(await storage.sharedSecret('continue-token-key'));
  return storage;
}
