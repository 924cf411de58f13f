/**
 * The watch readers' replication fence. With `--redis-wait-replicas N` a write is acknowledged only
 * once N replicas have it, but the change it appended to the stream is readable on the primary at
 * once: a watch fed straight from XREAD would show changes that a failover then discards (their
 * writers got 504, outcome unknown), and no etcd watch ever shows an uncommitted change. So before a
 * reader hands out what it read, it writes a marker on the same connection and waits (WAIT) until N
 * replicas have it: replication is one ordered stream, so they then have every change read before it.
 */
import { Cluster } from 'ioredis';
import type { TypeKeys } from './keys.js';
import type { RedisClient } from './scripts.js';
import { StorageError } from '../../api/storage-error.js';
import { logger } from '../../logging/logger.js';

/** What a fence waits for: replicas and each WAIT's timeout. */
export interface FenceOptions {
  replicas: number;
  timeoutMs: number;
}

/** The marker's key: beside the type's keys (same hash tag, so the same Cluster shard as its stream). */
export function fenceKeyOf(keys: TypeKeys): string {
  return `${keys.counter}:watch-fence`;
}

/** The replicas a ROLE reply lists as connected to a primary; 0 for anything else. */
export function replicasInRole(role: unknown): number {
  return Array.isArray(role) && role[0] === 'master' && Array.isArray(role[2]) ? role[2].length : 0;
}

/** The number of replicas the primary behind `client` has connected (its ROLE reply); 0 when unknown. */
async function connectedReplicas(client: RedisClient): Promise<number> {
  return replicasInRole(await client.call('ROLE', []));
}

/**
 * Resolves once every replica connected to the primary, and at least `replicas`, have everything
 * `client`'s connection has read so far, retrying WAIT (each up to `timeoutMs`) while fewer
 * acknowledge, e.g. while a new primary has no replica yet; resolves early when `signal` aborts.
 * Rejects when the connection fails (the reader then checks whether what it read survived).
 *
 * Every connected replica, not only `replicas` of them: a failover may promote any replica, so a
 * change one replica lacks could still be discarded after a watch showed it (seen with two replicas
 * and `--redis-wait-replicas 1`). A replica that disconnects drops out of the count at the next try.
 */
export async function awaitReplicated(client: RedisClient, key: string, o: FenceOptions, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const needed = Math.max(o.replicas, await connectedReplicas(client));
    const results = await client
      .pipeline([
        // Expires on its own: one small key per watched type, rewritten by every reader's batch.
        ['set', key, '1', 'px', 60_000],
        ['wait', needed, o.timeoutMs],
      ])
      .exec();
    if (results === null) throw new Error('pipeline aborted');
    for (const [err] of results) if (err) throw err;
    const acknowledged = Number(results[1]?.[1] ?? 0);
    if (acknowledged >= needed) return;
  }
}

/**
 * Resolves once the primary behind `client` has `replicas` replicas connected; logs that it waits
 * (then every 10 s); rejects with `Unavailable` after `timeoutMs`. A Cluster's shards are not asked
 * (each answers for its own replicas as its writes wait).
 */
export async function awaitReplicasConnected(client: RedisClient, replicas: number, timeoutMs: number): Promise<void> {
  if (client instanceof Cluster) return;
  const started = Date.now();
  let told = 0;
  for (;;) {
    const connected = await connectedReplicas(client);
    if (connected >= replicas) {
      if (told > 0) logger.info('Redis replicas connected', { replicas: connected });
      return;
    }
    const waited = Date.now() - started;
    if (waited >= timeoutMs) {
      throw new StorageError(
        'Unavailable',
        `Redis has ${connected} of the ${replicas} connected replicas --redis-wait-replicas asks for (waited ${Math.round(waited / 1000)} s)`,
      );
    }
    if (waited >= told * 10_000) {
      logger.info('waiting for Redis replicas (--redis-wait-replicas)', { connected, wanted: replicas });
      told++;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
