/**
 * The Redis backend, composed of single-concern modules: connections (redis-client), script and
 * command calls with their failure rules (redis-commands), reply decoding (redis-replies), snapshot
 * lists (redis-snapshot-list), change streams (redis-change-streams, redis-watch-hub) and shared
 * secrets (redis-shared-secrets). The per-process list cache is not part of it: the server wraps
 * it in ListCachingStorage (see open-redis).
 */
import { FreshReads } from '../fresh-reads.js';
import { splitAroundResourceVersion } from './json.js';
import { parseStoredValue, typeKeys, type TypeKeys } from './keys.js';
import { RedisChangeStreams } from './change-streams.js';
import { answersPing, createRedisClient, reachRedis, type RedisConnectionOptions } from './client.js';
import { RedisCommands, type WriteAcknowledgement } from './commands.js';
import { replyString, scriptFailure, unavailable } from './replies.js';
import { loadScripts } from './scripts.js';
import { awaitReplicasConnected } from './replication-fence.js';
import { sharedSecret } from './shared-secrets.js';
import type { PeerReaders } from './peer-readers.js';
import { readSnapshotList } from './snapshot-list.js';
import { isResourceVersion } from '../resource-version.js';
import {
  DEFAULT_MAX_OBJECT_BYTES,
  objectTooLarge,
  type ChangeEvent,
  type ListOptions,
  type ListResult,
  type Storage,
  type StorageStats,
  type StoredObject,
} from '../storage.js';
import { StorageError } from '../../api/storage-error.js';

/** Where the Redis deployment is (standalone URL, Sentinel or Cluster) and how history is kept. */
export interface RedisStorageOptions extends RedisConnectionOptions, WriteAcknowledgement {
  /** How long change history is kept, in milliseconds (watch and snapshot window). */
  historyMs: number;
  /** Largest object stored, in bytes of its JSON (default DEFAULT_MAX_OBJECT_BYTES). */
  maxObjectBytes?: number;
  /** Most events kept per type, whatever their age (default DEFAULT_HISTORY_MAX_EVENTS). */
  historyMaxEvents?: number;
  /** Prefix of every key (default `capstan:`); must not contain `{`. */
  keyPrefix?: string;
  /** Recent changes each type's watch reader keeps in process (default 4096). */
  watchCacheSize?: number;
  /** Receives failures that have no caller to report to (watch reader retries, listener errors). */
  onError?: (message: string, err: unknown) => void;
  /** The other workers of this instance: writes wait until their watch readers have the change (see peer-readers.ts). */
  peers?: PeerReaders;
  /** With `waitReplicas`: how long `connect` waits for that many replicas to be connected (default 30 s). */
  replicaWaitMs?: number;
}

/** Most change events kept per type when `historyMaxEvents` is not given. */
export const DEFAULT_HISTORY_MAX_EVENTS = 1_000_000;

/** Where RedisStorage reports failures without a caller when `onError` is not given. */
export function logRedisStorageError(message: string, err: unknown): void {
  console.error(`[redis-storage] ${message}`, err ?? '');
}

/**
 * The Redis backend: objects, one resourceVersion counter and one change stream per storage type,
 * every key of a type under the hash tag `{type}` (one Cluster slot per type).
 *
 * Guarantees, identical to MemoryStorage: each write is one Lua script that checks, allocates the
 * next version, stores the object, updates the key index and appends the change event, all or
 * nothing; lists are consistent snapshots (exact at an older version while the history reaches
 * back); watches deliver changes in version order, exactly once, from any process connected to the
 * same Redis; in the writing process, a write's change has been handed to its watches when the write
 * resolves (as on MemoryStorage), unless older changes of other writers must be read first and that
 * read failed, or must first reach the replicas `waitReplicas` asks for; with `waitReplicas`, reads
 * too answer only what the replicas hold (read-confirmation.ts). Redis failures of any kind
 * reject with `StorageError('Unavailable')`; a write that timed out may still have been applied, as
 * with any remote store.
 *
 * Object JSON is produced by `splitAroundResourceVersion` and stored byte-exact: Lua never decodes
 * it, so `[]`, `{}` and number spellings survive, and bigint values are kept with all digits.
 *
 * Every list reads Redis. For ListCachingStorage, which wraps it in the server, two costs are kept
 * low here: concurrent `currentResourceVersion` calls of a type share one GET (FreshReads), and all
 * watches of a type in this process share one stream reader (WatchHub).
 */
export class RedisStorage implements Storage {
  private readonly options: RedisStorageOptions;
  private readonly commands: RedisCommands;
  private readonly streams: RedisChangeStreams;
  private readonly prefix: string;
  private readonly historyMax: number;
  /** Concurrent reads of a type's counter share one round trip. */
  private readonly counterReads = new FreshReads<string>(async (type) => {
    const value = await this.commands.command(this.keys(type), 'GET', [this.keys(type).counter]);
    return value === null ? '1' : replyString(value, 'GET');
  });

  constructor(options: RedisStorageOptions) {
    this.options = options;
    this.prefix = options.keyPrefix ?? 'capstan:';
    this.historyMax = options.historyMaxEvents ?? DEFAULT_HISTORY_MAX_EVENTS;
    this.commands = new RedisCommands(createRedisClient(options), loadScripts(), options);
    this.streams = new RedisChangeStreams({
      commands: this.commands,
      keys: (type) => this.keys(type),
      watchCacheSize: options.watchCacheSize ?? 4096,
      fence: { replicas: options.waitReplicas ?? 0, timeoutMs: options.waitTimeoutMs ?? 1000 },
      peers: options.peers,
      onError: options.onError ?? logRedisStorageError,
    });
  }

  /**
   * Creates the storage and waits until scripts are loaded and Redis answers, and, with
   * `waitReplicas`, until the primary has that many replicas connected (without them no write or
   * read could be confirmed); otherwise closes it and rejects with `Unavailable` saying why.
   */
  static async connect(options: RedisStorageOptions): Promise<RedisStorage> {
    const storage = new RedisStorage(options);
    try {
      await reachRedis(storage.commands.client, storage.commands.loaded);
      const replicas = options.waitReplicas ?? 0;
      if (replicas > 0) await awaitReplicasConnected(storage.commands.client, replicas, options.replicaWaitMs ?? 30_000);
    } catch (err) {
      await storage.close();
      throw err;
    }
    return storage;
  }

  /** Key names of each type, built once (every call of every operation needs them). */
  private readonly keysByType = new Map<string, TypeKeys>();

  private keys(type: string): TypeKeys {
    let keys = this.keysByType.get(type);
    if (keys === undefined) {
      keys = typeKeys(this.prefix, type);
      this.keysByType.set(type, keys);
    }
    return keys;
  }

  private history(): (string | number)[] {
    return [this.options.historyMs, this.historyMax];
  }

  /** The stored JSON of a write around its resourceVersion, refused when bigger than the object limit. */
  private serialize(object: Record<string, unknown>): { before: string; after: string } {
    const split = splitAroundResourceVersion(object);
    const max = this.options.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
    if ((split.before.length + split.after.length) * 3 > max) {
      const size = Buffer.byteLength(split.before) + Buffer.byteLength(split.after);
      if (size > max) throw objectTooLarge(size, max);
    }
    return split;
  }

  /**
   * Hands this process's own write to the type's watch reader, when it has one (see
   * RedisChangeStreams.deliverOwn), and waits until the other workers' readers have it too (see
   * RedisChangeStreams.awaitPeers); a promise only when there is something to wait for, so a write
   * that waits for nothing pays no extra turn.
   */
  private handOut(type: string, resourceVersion: string, event: ChangeEvent | undefined): Promise<void> | undefined {
    const delivered = event === undefined ? undefined : this.streams.deliverOwn(type, event);
    const peers = this.streams.awaitPeers(type, resourceVersion);
    if (delivered === undefined) return peers;
    return peers === undefined ? delivered : Promise.all([delivered, peers]).then(() => undefined);
  }

  async create(type: string, key: string, object: Record<string, unknown>): Promise<StoredObject> {
    const { before, after } = this.serialize(object);
    const reply = await this.commands.script((s) => s.create, this.keys(type), [key, before, after, ...this.history()], true);
    const failure = scriptFailure(reply, key);
    if (failure) throw failure;
    const rv = replyString(reply[1], 'create');
    const json = before + rv + after;
    const handedOut = this.handOut(type, rv, { type: 'ADDED', key, resourceVersion: rv, json });
    if (handedOut) await handedOut;
    return { key, resourceVersion: rv, json };
  }

  async get(type: string, key: string): Promise<StoredObject | undefined> {
    const value = await this.commands.command(this.keys(type), 'HGET', [this.keys(type).objects, key]);
    if (value === null) return undefined;
    const parsed = parseStoredValue(replyString(value, 'HGET'));
    if (!parsed) throw new StorageError('Unavailable', `storage holds a malformed value for ${key}`);
    return { key, resourceVersion: parsed.resourceVersion, json: parsed.json };
  }

  async update(type: string, key: string, object: Record<string, unknown>, expectedResourceVersion: string): Promise<StoredObject> {
    const { before, after } = this.serialize(object);
    const followed = this.streams.follows(type);
    const args = [key, expectedResourceVersion, before, after, ...this.history(), followed ? '1' : '0'];
    const reply = await this.commands.script((s) => s.update, this.keys(type), args, true);
    const failure = scriptFailure(reply, key);
    if (failure) throw failure;
    const rv = replyString(reply[1], 'update');
    const json = before + rv + after;
    const handedOut = this.handOut(
      type,
      rv,
      followed && reply.length > 2 ? { type: 'MODIFIED', key, resourceVersion: rv, json, prevJson: replyString(reply[2], 'update') } : undefined,
    );
    if (handedOut) await handedOut;
    return { key, resourceVersion: rv, json };
  }

  async delete(type: string, key: string, expectedResourceVersion?: string): Promise<StoredObject> {
    const precondition = expectedResourceVersion === undefined ? ['0', ''] : ['1', expectedResourceVersion];
    const followed = this.streams.follows(type);
    const reply = await this.commands.script((s) => s.delete, this.keys(type), [key, ...precondition, ...this.history(), followed ? '1' : '0'], true);
    const failure = scriptFailure(reply, key);
    if (failure) throw failure;
    const rv = replyString(reply[1], 'delete');
    const json = replyString(reply[2], 'delete');
    const handedOut = this.handOut(
      type,
      rv,
      followed && reply.length > 3 ? { type: 'DELETED', key, resourceVersion: rv, json, prevJson: replyString(reply[3], 'delete') } : undefined,
    );
    if (handedOut) await handedOut;
    return { key, resourceVersion: rv, json };
  }

  /** See Storage.advanceVersion: a progress entry in the type's stream carries the version to every reader. */
  async advanceVersion(type: string): Promise<string> {
    const reply = await this.commands.script((s) => s.advance, this.keys(type), this.history(), true);
    if (reply[0] !== 'ok') throw new StorageError('Unavailable', `unexpected reply of ${type}'s version advance`);
    return replyString(reply[1], 'advance');
  }

  /** Read from Redis (see readSnapshotList); a malformed version is refused as `TooLarge`. */
  async list(type: string, options: ListOptions = {}): Promise<ListResult> {
    const requested = options.resourceVersion;
    if (requested !== undefined && !isResourceVersion(requested)) {
      throw new StorageError('TooLarge', `resource version ${requested} is not a valid resource version`);
    }
    return readSnapshotList(this.commands, this.keys(type), options);
  }

  /** Read after the call (concurrent callers share one GET, see FreshReads). */
  async currentResourceVersion(type: string): Promise<string> {
    return this.counterReads.get(type);
  }

  /** See RedisChangeStreams.watch. */
  async watch(...args: Parameters<Storage['watch']>): Promise<void> {
    return this.streams.watch(...args);
  }

  /**
   * A random secret shared by every server on this Redis (created on first use), e.g. the key
   * that signs continue tokens so a chunked list can continue on any worker or pod.
   */
  async sharedSecret(name: string): Promise<Buffer> {
    return sharedSecret(this.commands.client, this.prefix, name);
  }

  /** The count only: the sizes are known where a process holds every object (the list cache wrapping this store). */
  async stats(type: string): Promise<StorageStats> {
    try {
      return { objectCount: Number(await this.commands.client.call('ZCARD', [this.keys(type).index])), averageObjectBytes: undefined };
    } catch (err) {
      throw unavailable(err);
    }
  }

  async ready(): Promise<boolean> {
    if (this.commands.isClosed) return false;
    return answersPing(this.commands.client, 1000);
  }

  async close(): Promise<void> {
    if (this.commands.isClosed) return;
    this.commands.refuse();
    await this.streams.close();
    await this.commands.quit();
  }
}
