/**
 * The storage backends a suite runs against: the embedded memory store and a real redis-server
 * spawned for the suite. Each `open` gives a fresh, isolated store.
 */
import { randomBytes } from 'node:crypto';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { connectRedisBackend } from '../../src/storage/redis/open-redis.js';
import type { Storage } from '../../src/storage/storage.js';
import { startRedis, type RedisServer } from './redis-process.js';

export interface BackendOptions {
  historyMs?: number;
  historyMaxEvents?: number;
  now?: () => number;
}

export interface Backend {
  name: string;
  /** A fresh store (its own key prefix on Redis). */
  open(options?: BackendOptions): Promise<Storage>;
  /** Stops processes the backend started. */
  stop(): Promise<void>;
}

export function memoryBackend(): Backend {
  return {
    name: 'memory',
    open: async (o = {}) => new MemoryStorage({ historyMs: o.historyMs ?? 300_000, historyMaxEvents: o.historyMaxEvents, now: o.now }),
    stop: async () => undefined,
  };
}

/** A backend over one redis-server started lazily on first `open`. */
export function redisBackend(): Backend {
  let server: RedisServer | undefined;
  return {
    name: 'redis',
    open: async (o = {}) => {
      server ??= await startRedis();
      return connectRedisBackend({
        url: server.url,
        keyPrefix: `t${randomBytes(4).toString('hex')}:`,
        historyMs: o.historyMs ?? 300_000,
        historyMaxEvents: o.historyMaxEvents,
      });
    },
    stop: async () => {
      const running = server;
      server = undefined;
      await running?.stop();
    },
  };
}

/** Every backend that exists: suites loop over these. */
export function allBackends(): Backend[] {
  return [memoryBackend(), redisBackend()];
}
