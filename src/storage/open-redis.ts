import type { ServerConfig } from '../cli/flags.js';
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
  const password = url.password !== '' ? decodeURIComponent(url.password) : undefined;
  const tls = url.protocol === 'rediss:';
  return RedisStorage.connect({
    url: config.redisUrl,
    clusterNodes: config.redisCluster.length > 0 ? config.redisCluster.map((n) => hostPort(n, '--redis-cluster')) : undefined,
    sentinels: config.redisSentinels.length > 0 ? config.redisSentinels.map((n) => hostPort(n, '--redis-sentinels')) : undefined,
    sentinelName: config.redisSentinelName,
    password,
    tls,
    waitReplicas: config.redisWaitReplicas,
    historyMs: config.watchCacheHistoryMs,
  });
}
