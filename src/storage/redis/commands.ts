/**
 * How the Redis backend sends scripts and commands on its shared connection, and what a failure
 * means: a refusal before sending or a Redis error reply is `Unavailable` (nothing was done); a write
 * whose reply never came is `Timeout` (it may have been applied). ioredis re-sends a command left
 * unanswered by a closed connection (to the same server after a reconnect, to a Cluster slot's new
 * master after a failover), so a write whose connection changed while it was out has no outcome a
 * client can trust unless it succeeded: the refusal or error may answer a re-send of a write the
 * first attempt applied.
 */
import type { TypeKeys } from './keys.js';
import { replyArray, unavailable } from './replies.js';
import { runScript, runScriptAndWait, type LuaScript, type RedisClient, type StorageScripts } from './scripts.js';
import { closeClient } from './client.js';
import { batchWritesThisTurn } from './write-batching.js';
import { ConnectionEpoch, ReadConfirmation } from './read-confirmation.js';
import { StorageError } from '../../api/storage-error.js';

/** Durability asked of every write. */
export interface WriteAcknowledgement {
  /** After each write, wait until this many replicas acknowledged it (WAIT); 0 disables. */
  waitReplicas?: number;
  /** How long WAIT may take before the write's outcome is reported unknown (`Timeout`; default 1000 ms). */
  waitTimeoutMs?: number;
}

/**
 * The backend's shared command connection with its loaded scripts. Once `refuse` is called every
 * call rejects with `Unavailable('storage is closed')`.
 */
export class RedisCommands {
  private closed = false;
  private readonly epoch: ConnectionEpoch;
  /** With replicas to wait for, reads are answered only once they hold what the read saw. */
  private readonly confirmation: ReadConfirmation | undefined;

  constructor(
    /** The shared connection; owned by this object (closed by `quit`). */
    readonly client: RedisClient,
    /** The storage scripts, loading (a rejected load fails every script call). */
    private readonly scripts: Promise<StorageScripts>,
    private readonly acknowledgement: WriteAcknowledgement,
  ) {
    this.scripts.catch(() => undefined);
    this.epoch = new ConnectionEpoch(client);
    const replicas = acknowledgement.waitReplicas ?? 0;
    this.confirmation = replicas > 0 ? new ReadConfirmation(client, this.epoch, { replicas, timeoutMs: acknowledgement.waitTimeoutMs ?? 1000 }) : undefined;
  }

  /** Settles when the scripts have loaded (rejects when they cannot be read). */
  get loaded(): Promise<unknown> {
    return this.scripts;
  }

  /** Whether `refuse` was called. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Runs one script over the type's keys and returns its reply array. A write is only sent on a
   * live connection and, with `waitReplicas`, is acknowledged only once that many replicas have it;
   * otherwise it is `Timeout`: it stands on the primary but may be lost in a failover, so its outcome
   * is unknown (never `Unavailable`, which tells a client that nothing was done). Failures: a refusal before sending
   * or a Redis error reply (READONLY, OOM, NOSCRIPT...) is `Unavailable`; a write that was sent
   * without a reply (timeout, connection lost) is `Timeout`, its outcome unknown. A write refused
   * (precondition or error reply) after its connection changed is `Timeout` too (`refusalStands`).
   */
  async script(pick: (s: StorageScripts) => LuaScript, keys: TypeKeys, args: (string | number)[], write: boolean): Promise<unknown[]> {
    if (this.closed) throw new StorageError('Unavailable', 'storage is closed');
    if (write && this.client.status !== 'ready') throw new StorageError('Unavailable', `storage unavailable: connection is ${this.client.status}`);
    // The connection the write goes out on: if it changes before the answer, ioredis may have sent
    // the write twice, and only a success is then the write's own outcome.
    const epoch = this.epoch.current;
    try {
      const s = pick(await this.scripts);
      const keyList = scriptKeys(s.keyCount, keys);
      const replicas = this.acknowledgement.waitReplicas ?? 0;
      if (!write) return await this.confirmed(keys, async () => replyArray(await runScript(this.client, s, keyList, args), s.name));
      if (replicas <= 0) {
        const result = replyArray(await runScript(this.client, s, keyList, args), s.name);
        if (result[0] !== 'ok') this.refusalStands(epoch);
        return result;
      }
      const timeoutMs = this.acknowledgement.waitTimeoutMs ?? 1000;
      const { reply, acknowledged } = await runScriptAndWait(this.client, s, keyList, args, replicas, timeoutMs);
      const result = replyArray(reply, s.name);
      if (result[0] !== 'ok') {
        this.refusalStands(epoch);
        // A refused precondition (conflict, not found, exists) reports what the script read: a
        // read, answered only once confirmed; nothing was written either way.
        const problem = (await this.confirmation?.confirm(keys, epoch)) ?? '';
        if (problem !== '') throw new StorageError('Unavailable', `storage unavailable: answer not confirmed: ${problem}`);
        return result;
      }
      if (acknowledged < replicas) {
        throw new StorageError('Timeout', `write outcome unknown: acknowledged by ${acknowledged} of ${replicas} replicas within ${timeoutMs}ms`);
      }
      // ioredis re-sends a WAIT left unanswered by a closed connection to the next one (a new
      // primary), where it counts nothing about the write the old one applied.
      if (this.epoch.current !== epoch) {
        throw new StorageError('Timeout', 'write outcome unknown: the Redis connection changed before its replicas confirmed it');
      }
      return result;
    } catch (err) {
      if (write && !(err instanceof StorageError)) {
        // An error reply (READONLY, CLUSTERDOWN...) refused the write only if it answers its only sending.
        if (err instanceof Error && err.name === 'ReplyError') this.refusalStands(epoch);
        else {
          const message = err instanceof Error ? err.message : String(err);
          throw new StorageError('Timeout', `write outcome unknown: ${message}`);
        }
      }
      throw unavailable(err);
    }
  }

  /**
   * Lets a write's refusal (a failed precondition or an error reply) stand only when the write went
   * out on one connection; otherwise it may answer a re-send of a write the first sending applied,
   * and the write's outcome is unknown (`Timeout`).
   */
  private refusalStands(epoch: number): void {
    if (this.epoch.current !== epoch) {
      throw new StorageError('Timeout', 'write outcome unknown: the Redis connection changed while the write was out, and a re-sent write was refused');
    }
  }

  /**
   * Sends one read-only command over the type's keys; any failure rejects with `Unavailable`. With
   * `waitReplicas` its answer waits for the replicas to hold what it saw (read-confirmation.ts).
   */
  async command(keys: TypeKeys, name: string, args: (string | number)[]): Promise<unknown> {
    if (this.closed) throw new StorageError('Unavailable', 'storage is closed');
    try {
      return await this.confirmed(keys, () => {
        batchWritesThisTurn(this.client);
        return this.client.call(name, args);
      });
    } catch (err) {
      throw unavailable(err);
    }
  }

  private confirmed<T>(keys: TypeKeys, read: () => Promise<T>): Promise<T> {
    return this.confirmation === undefined ? read() : this.confirmation.read(keys, read);
  }

  /** From now on every call rejects; the connection stays open until `quit`. */
  refuse(): void {
    this.closed = true;
  }

  /** Closes the shared connection. */
  async quit(): Promise<void> {
    await closeClient(this.client);
  }
}

/**
 * The keys a script of `count` keys takes, in its KEYS order: the counter and stream (info), with
 * the trim-due time (advance); the counter, objects, index and stream (list), with the trim-due time
 * (create, update, delete).
 */
function scriptKeys(count: number, keys: TypeKeys): string[] {
  switch (count) {
    case 2:
      return [keys.counter, keys.stream];
    case 3:
      return [keys.counter, keys.stream, keys.trimDue];
    case 4:
      return [keys.counter, keys.objects, keys.index, keys.stream];
    default:
      return [keys.counter, keys.objects, keys.index, keys.stream, keys.trimDue];
  }
}
