/**
 * Watches of the Redis backend: each type's change stream is read by one WatchHub per process,
 * created on the type's first watch, and a watch from an older version replays the stream range it
 * missed (XRANGE) before going live.
 */
import { FreshReads } from '../fresh-reads.js';
import type { RedisCommands } from './commands.js';
import { createReaderClient } from './client.js';
import type { TypeKeys } from './keys.js';
import { replyString } from './replies.js';
import { awaitReplicated, fenceKeyOf, type FenceOptions } from './replication-fence.js';
import { parseStreamEntry, WatchHub, watchGone, type StreamEntry } from './watch-hub.js';
import type { PeerReaders } from './peer-readers.js';
import { compareResourceVersions } from '../resource-version.js';
import { type ChangeEvent, type ChangeListener, type ProgressListener, type WatchTrigger } from '../storage.js';
import { StorageError } from '../../api/storage-error.js';

/** What the change streams read through and where they report failures without a caller. */
export interface RedisChangeStreamsOptions {
  readonly commands: RedisCommands;
  /** The Redis keys of a storage type. */
  readonly keys: (type: string) => TypeKeys;
  /** Recent changes each type's reader keeps in process. */
  readonly watchCacheSize: number;
  /** With replicas to wait for, watches show only changes that many replicas have (replication-fence.ts). */
  readonly fence?: FenceOptions;
  /** The other workers of this instance, whose watches of a type a write waits for (absent outside a cluster). */
  readonly peers?: PeerReaders;
  readonly onError: (message: string, err: unknown) => void;
}

/** The per-process readers of every watched type's change stream, owned by one RedisStorage. */
export class RedisChangeStreams {
  private readonly hubs = new Map<string, WatchHub>();
  /** The same readers by stream key (what peers name). */
  private readonly hubsByStream = new Map<string, WatchHub>();
  /** Concurrent watches of a type share one read of its history bounds. */
  private readonly historyReads = new FreshReads<{ current: string; oldest: string }>((type) => this.historyBounds(this.options.keys(type)));

  constructor(private readonly options: RedisChangeStreamsOptions) {
    options.peers?.serve({ whenDispatched: (stream, version) => this.hubsByStream.get(stream)?.whenDispatched(version) });
  }

  /**
   * Storage.watch for Redis: every change after `fromResourceVersion`, in order and exactly once,
   * then live ones until `signal` aborts. Rejects with `Gone` when the stream's history no longer
   * reaches back that far (checked against bounds read after the call), `Unavailable` when Redis
   * cannot be reached or the backend is closed.
   */
  async watch(
    type: string,
    fromResourceVersion: string,
    listener: ChangeListener,
    signal: AbortSignal,
    onError?: (err: StorageError) => void,
    trigger?: WatchTrigger,
    onProgress?: ProgressListener,
  ): Promise<void> {
    const { current, oldest } = await this.historyReads.get(type);
    if (compareResourceVersions(fromResourceVersion, oldest) < 0) throw watchGone(fromResourceVersion, oldest);
    if (signal.aborted) return;
    const hub = this.hub(type, this.options.keys(type), current);
    await hub.subscribe(fromResourceVersion, listener, signal, onError, trigger, onProgress);
  }

  /** Whether this process reads the type's changes (its own writes of the type are then handed to the reader). */
  follows(type: string): boolean {
    return this.hubs.has(type);
  }

  /**
   * Hands a change this process wrote to the type's reader, if it has one (see WatchHub.deliverOwn):
   * a promise when the write waits for older changes to be read first, else undefined.
   */
  deliverOwn(type: string, event: ChangeEvent): Promise<void> | undefined {
    return this.hubs.get(type)?.deliverOwn(event);
  }

  /**
   * Waits (bounded, see PeerReaders.awaitPeers) until the other workers with watches of the type
   * have handed out its changes through `version`; undefined when there is nothing to wait for.
   * Not with a replication fence: there a change reaches watches only once replicas have it, after
   * the write's response on every worker alike.
   */
  awaitPeers(type: string, version: string): Promise<void> | undefined {
    const peers = this.options.peers;
    if (peers === undefined || (this.options.fence !== undefined && this.options.fence.replicas > 0)) return undefined;
    return peers.awaitPeers(this.options.keys(type).stream, version);
  }

  /** Stops every reader and closes their connections; listeners receive nothing more. */
  async close(): Promise<void> {
    const hubs = [...this.hubs.values()];
    this.hubs.clear();
    this.hubsByStream.clear();
    await Promise.all(hubs.map((h) => h.close()));
  }

  private hub(type: string, keys: TypeKeys, current: string): WatchHub {
    if (this.options.commands.isClosed) throw new StorageError('Unavailable', 'storage is closed');
    const existing = this.hubs.get(type);
    if (existing) return existing;
    const client = createReaderClient(this.options.commands.client);
    const fence = this.options.fence;
    const fenceKey = fenceKeyOf(keys);
    const hub = new WatchHub({
      client,
      fence: fence === undefined || fence.replicas <= 0 ? undefined : (signal) => awaitReplicated(client, fenceKey, fence, signal),
      stream: keys.stream,
      counter: keys.counter,
      position: current,
      cacheSize: this.options.watchCacheSize,
      readRange: (after, through, deliver) => this.readRange(keys, after, through, deliver),
      readNewer: async (after) => {
        const reply = await this.options.commands.command(keys, 'XRANGE', [keys.stream, `(${after}-0`, '+', 'COUNT', 1000]);
        return Array.isArray(reply) ? reply.map(parseStreamEntry) : [];
      },
      onError: this.options.onError,
      onListening: (listening) => this.options.peers?.reading(keys.stream, listening),
    });
    this.hubs.set(type, hub);
    this.hubsByStream.set(keys.stream, hub);
    return hub;
  }

  /** The type's current version and the oldest version its history reaches back to. */
  private async historyBounds(keys: TypeKeys): Promise<{ current: string; oldest: string }> {
    const reply = await this.options.commands.script((s) => s.info, keys, [], false);
    return { current: replyString(reply[0], 'info'), oldest: replyString(reply[1], 'info') };
  }

  /** Replays the stream after `after` through `through` in batches; Gone when an entry is missing. */
  private async readRange(keys: TypeKeys, after: string, through: string, deliver: (events: StreamEntry[]) => void): Promise<void> {
    let cursor = after;
    while (compareResourceVersions(cursor, through) < 0) {
      const reply = await this.options.commands.command(keys, 'XRANGE', [keys.stream, `(${cursor}-0`, `${through}-0`, 'COUNT', 1000]);
      const entries = Array.isArray(reply) ? reply : [];
      const events: StreamEntry[] = [];
      for (const entry of entries) {
        const event = parseStreamEntry(entry);
        if (event.resourceVersion !== (BigInt(cursor) + 1n).toString()) break;
        events.push(event);
        cursor = event.resourceVersion;
      }
      if (events.length === 0 || events.length < entries.length) {
        const { oldest } = await this.historyBounds(keys);
        throw watchGone(after, oldest);
      }
      deliver(events);
    }
  }
}
