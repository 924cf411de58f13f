/**
 * Reads confirmed by the replicas. With `--redis-wait-replicas N` a write is acknowledged only once
 * N replicas have it, but the primary serves it to readers at once: a get, a list or a counter read
 * could show a change that a failover then discards (a primary paused past the Sentinels'
 * down-after answers again, with its unreplicated writes, until it is demoted). etcd's reads are
 * quorum reads; here a read is answered only after a fence sent on the same connection behind it (a
 * marker SET, then WAIT) has reached every replica connected to the primary, and at least N:
 * replication is one ordered stream, so those replicas then hold everything the read saw.
 *
 * Concurrent reads of a type share one fence (each waits for a fence sent after its read answered).
 * A read whose connection closed or reconnected before its fence answered is not trusted (ioredis
 * re-sends an unanswered fence to the new primary, where it proves nothing about the old one's
 * read): it is read once more, then refused as `Unavailable`.
 */
import type { RedisClient } from './scripts.js';
import type { TypeKeys } from './keys.js';
import { replicasInRole, type FenceOptions } from './replication-fence.js';
import { FreshReads } from '../fresh-reads.js';
import { StorageError } from '../../api/storage-error.js';

/** One fence's answer: the connection it ran on (an epoch), and how many replicas had it of how many asked. */
interface FenceOutcome {
  epoch: number;
  acknowledged: number;
  needed: number;
}

/**
 * Counts the connections `client` has had: a number that changes whenever a connection closes or a
 * new one becomes ready (for a Cluster, also when nodes come and go), so a request whose epoch did
 * not change ran on one connection.
 */
export class ConnectionEpoch {
  private value = 0;

  constructor(client: RedisClient) {
    const next = (): void => {
      this.value++;
    };
    for (const event of ['close', 'ready', 'reconnecting', '+node', '-node', 'node error']) client.on(event, next);
  }

  get current(): number {
    return this.value;
  }
}

export class ReadConfirmation {
  /** Replicas the last fence saw connected (its ROLE); a fence asks for at least that many. */
  private connected = 0;
  /** The connection (ConnectionEpoch) `connected` was counted on. */
  private connectedEpoch = -1;
  private readonly fences = new FreshReads<FenceOutcome>((key) => this.fence(key));

  constructor(
    private readonly client: RedisClient,
    private readonly epoch: ConnectionEpoch,
    private readonly options: FenceOptions,
  ) {}

  /**
   * Runs `read` and returns its answer once the replicas hold everything it saw; reads again once
   * when the connection changed meanwhile or a replica dropped out; otherwise rejects with
   * `Unavailable`. `read`'s own failures reject as they are.
   */
  async read<T>(keys: TypeKeys, read: () => Promise<T>): Promise<T> {
    let problem = '';
    for (let attempt = 0; attempt < 2; attempt++) {
      const epoch = this.epoch.current;
      const value = await read();
      problem = await this.confirm(keys, epoch);
      if (problem === '') return value;
    }
    throw new StorageError('Unavailable', `storage unavailable: read not confirmed: ${problem}`);
  }

  /**
   * Waits for a fence behind an answer received on connection `epoch` (ConnectionEpoch.current
   * when its request was sent): '' when the replicas hold everything it saw, else why not.
   */
  async confirm(keys: TypeKeys, epoch: number): Promise<string> {
    if (this.epoch.current === epoch) {
      const outcome = await this.fences.get(`${keys.counter}:read-fence`);
      if (outcome.epoch === epoch) {
        if (outcome.acknowledged >= outcome.needed) return '';
        return `acknowledged by ${outcome.acknowledged} of ${outcome.needed} replicas within ${this.options.timeoutMs}ms`;
      }
    }
    return 'the Redis connection changed before its replicas confirmed it';
  }

  /**
   * Writes the marker and waits for every connected replica, and at least the configured number.
   * The count is the last ROLE's on this connection (a new connection, perhaps to a new primary,
   * starts from the configured number); the ROLE behind each WAIT updates it, and a fence that asked
   * for fewer replicas than are now connected, or failed for one that has since dropped out, is sent
   * again with the new count.
   */
  private async fence(key: string): Promise<FenceOutcome> {
    const epoch = this.epoch.current;
    if (this.connectedEpoch !== epoch) this.connected = 0;
    let needed = Math.max(this.options.replicas, this.connected);
    for (let tries = 1; ; tries++) {
      const results = await this.client
        .pipeline([
          // Expires on its own: one small key per type, rewritten by every fence.
          ['set', key, '1', 'px', 60_000],
          ['wait', needed, this.options.timeoutMs],
          ['role'],
        ])
        .exec();
      if (results === null) throw new StorageError('Unavailable', 'storage unavailable: pipeline aborted');
      for (const [err] of results) if (err) throw new StorageError('Unavailable', `storage unavailable: ${err.message}`);
      if (this.epoch.current !== epoch) return { epoch: -1, acknowledged: 0, needed };
      const acknowledged = Number(results[1]?.[1] ?? 0);
      this.connected = replicasInRole(results[2]?.[1]);
      this.connectedEpoch = epoch;
      const now = Math.max(this.options.replicas, this.connected);
      if (tries >= 3 || (acknowledged >= needed ? now <= needed : now >= needed)) return { epoch, acknowledged, needed };
      needed = now;
    }
  }
}
