import { compareResourceVersions } from '../resource-version.js';
import type { RedisClient } from './scripts.js';
import { shareReplacedText, type ChangeEvent, type ChangeListener, type ChangeType, type ProgressListener, type WatchTrigger } from '../storage.js';
import { ListenerSet } from '../listener-set.js';
import { StorageError } from '../../api/storage-error.js';

const CHANGE_TYPES: readonly ChangeType[] = ['ADDED', 'MODIFIED', 'DELETED'];

/** A Redis array reply; anything else is a protocol error naming WHAT. */
function replyArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`unexpected Redis reply for ${what}`);
  return value;
}

/** A Redis bulk string (or integer) reply as text; anything else is a protocol error naming WHAT. */
function replyString(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new Error(`unexpected Redis reply for ${what}`);
}

/** The version a stream id `<rv>-0` stands for. */
export function versionOfStreamId(id: string): string {
  const dash = id.indexOf('-');
  return dash < 0 ? id : id.slice(0, dash);
}

/**
 * A stream entry that changed no object: the type's version moved on (advance-3.lua,
 * Storage.advanceVersion). It has its place in the stream's order like a change.
 */
export interface VersionProgress {
  readonly type: 'PROGRESS';
  readonly key: '';
  readonly resourceVersion: string;
  readonly json: '';
}

/** What one stream entry holds: a change, or a version the type moved to without one. */
export type StreamEntry = ChangeEvent | VersionProgress;

/** One stream entry (`[id, [field, value, ...]]`) as a ChangeEvent or VersionProgress; throws on a malformed entry. */
export function parseStreamEntry(entry: unknown): StreamEntry {
  const [id, fields] = replyArray(entry, 'stream entry');
  const list = replyArray(fields, 'stream fields');
  // Every event of every followed type passes here in every process: read the few fields in one
  // pass, without building a map of them.
  let type: ChangeType | undefined;
  let progress = false;
  let key: string | undefined;
  let json: string | undefined;
  let prevJson: string | undefined;
  for (let i = 0; i + 1 < list.length; i += 2) {
    const field = replyString(list[i], 'field');
    if (field === 'e') {
      const value = replyString(list[i + 1], 'value');
      type = CHANGE_TYPES.find((t) => t === value);
      progress = value === 'PROGRESS';
    } else if (field === 'k') key = replyString(list[i + 1], 'value');
    else if (field === 'o') json = replyString(list[i + 1], 'value');
    else if (field === 'p') prevJson = replyString(list[i + 1], 'value');
  }
  const resourceVersion = versionOfStreamId(replyString(id, 'stream id'));
  if (progress) return { type: 'PROGRESS', key: '', resourceVersion, json: '' };
  if (type === undefined || key === undefined || json === undefined) throw new Error('malformed change event in stream');
  return prevJson === undefined ? { type, key, resourceVersion, json } : { type, key, resourceVersion, json, prevJson };
}

/**
 * The entries newer than `after` of a single-stream XREAD reply (`[[stream, [entry, ...]]]` or
 * null). Older entries (already handed out as this process's own writes) are skipped unparsed.
 */
function parseXread(reply: unknown, after: string): StreamEntry[] {
  if (reply === null) return [];
  const events: StreamEntry[] = [];
  for (const stream of replyArray(reply, 'XREAD')) {
    const [, entries] = replyArray(stream, 'XREAD stream');
    for (const entry of replyArray(entries, 'XREAD entries')) {
      if (Array.isArray(entry) && typeof entry[0] === 'string' && compareResourceVersions(versionOfStreamId(entry[0]), after) <= 0) continue;
      events.push(parseStreamEntry(entry));
    }
  }
  return events;
}

function successor(rv: string): string {
  return (BigInt(rv) + 1n).toString();
}

/** Reads the changes after `after` up to and including `through`, in order; rejects with Gone on a gap. */
export type RangeReader = (after: string, through: string, deliver: (events: StreamEntry[]) => void) => Promise<void>;

interface Subscription {
  readonly listener: ChangeListener;
  /** Only changes newer than this are delivered. */
  readonly after: string;
  /** Live changes held back while older history is replayed; null once live. */
  buffer: StreamEntry[] | null;
  /** Told (once) when this hub can no longer deliver every change to the listener. */
  readonly onError: ((err: StorageError) => void) | undefined;
  /** Told of the versions the type moved to without a change. */
  readonly onProgress: ProgressListener | undefined;
}

/** What one WatchHub reads and where it reports failures that have no caller. */
export interface WatchHubOptions {
  /** Dedicated connection: it spends its life in blocking XREAD. */
  readonly client: RedisClient;
  readonly stream: string;
  /** The type's resourceVersion counter (absent means 1), read to tell whether history diverged. */
  readonly counter: string;
  /** Version up to which changes are known when the hub starts; reading begins after it. */
  readonly position: string;
  /**
   * Resolves once Redis replicas hold everything the reader's connection has read (see
   * replication-fence.ts); absent when writes wait for no replica. Read changes are handed out only after it.
   */
  readonly fence?: (signal: AbortSignal) => Promise<void>;
  /** Most recent changes kept in process to serve new watchers without a Redis round trip. */
  readonly cacheSize: number;
  readonly readRange: RangeReader;
  /** Reads the stream's changes after the given version (a bounded batch, oldest first), on a connection that does not block. */
  readonly readNewer: (after: string) => Promise<StreamEntry[]>;
  readonly onError: (message: string, err: unknown) => void;
  /** How long one XREAD blocks, in ms (bounds how late an abort is noticed if the socket hangs). */
  readonly blockMs?: number;
  /** Told when the hub gains its first listener (true) or loses its last (false). */
  readonly onListening?: (listening: boolean) => void;
}

/**
 * The single reader of one type's change stream in this process: a blocking XREAD loop on a
 * dedicated connection that fans each change out to every listener (the same ChangeEvent object,
 * never mutated) and keeps a cache of recent changes. Listeners receive changes in resourceVersion
 * order, each exactly once, including listeners that join with an older start version while the
 * loop keeps running: their history is replayed first while live changes are buffered.
 *
 * A change this process wrote itself is handed out as soon as its write's reply arrives
 * (`deliverOwn`), not when the blocking read brings it back: a controller that writes and then
 * waits for its informer sees its write before (or with) the response, as on the embedded store.
 * Not with a replication fence (`--redis-wait-replicas`): then every change waits for it.
 *
 * After its connection failed or was re-established (a failover may have moved it to a replica
 * that never received the last changes it delivered), the reader checks that Redis still holds
 * the change at its position, byte for byte, before it reads on; when it does not, the delivered
 * history has diverged from what survived: every listener is ended with Gone (clients relist)
 * and reading goes on from the surviving history's current version.
 */
export class WatchHub {
  private readonly options: WatchHubOptions;
  private readonly subscriptions: ListenerSet<Subscription>;
  private readonly cache: StreamEntry[] = [];
  private cacheStart = 0;
  /**
   * The newest cached change of each key in the cache: a change read next for the key points at
   * its text as the object it replaced (shareReplacedText), so the cache holds one copy of each.
   */
  private readonly lastOfKey = new Map<string, ChangeEvent>();
  private readonly stop = new AbortController();
  private readonly loop: Promise<void>;
  /** Every change up to this version has been dispatched. */
  private position: string;
  /** Connections the reader's client has made so far (a reconnect may land on another primary). */
  private connections = 0;
  /** Own writes that came back while an older change was not dispatched yet, by version. */
  private readonly pendingOwn = new Map<string, ChangeEvent>();
  /** The one read of newer changes in flight that own writes behind a gap wait for. */
  private catchingUp: Promise<'dispatched' | 'voided' | 'failed'> | null = null;
  /** The lineage check running, if any: meanwhile only the reader dispatches (the check compares against a fixed position). */
  private lineageCheck: Promise<boolean> | null = null;
  /** Whether any listener is registered (as last told to `onListening`). */
  private listening = false;
  /** Callers of whenDispatched waiting for the position to reach their version. */
  private dispatchWaiters: { version: string; resolve: () => void }[] = [];

  constructor(options: WatchHubOptions) {
    this.options = options;
    this.position = options.position;
    this.subscriptions = new ListenerSet(options.position);
    options.client.on('ready', () => this.connections++);
    this.loop = this.run(this.stop.signal);
  }

  /**
   * Registers `listener` for the changes after `after`. Resolves once history up to the hub's
   * position has been delivered; rejects with Gone (and registers nothing) when Redis no longer
   * holds that history.
   */
  async subscribe(
    after: string,
    listener: ChangeListener,
    signal: AbortSignal,
    onError?: (err: StorageError) => void,
    trigger?: WatchTrigger,
    onProgress?: ProgressListener,
  ): Promise<void> {
    const sub: Subscription = { listener, after, buffer: null, onError, onProgress };
    const upTo = this.position;
    if (compareResourceVersions(after, upTo) < 0) {
      const cached = this.cachedAfter(after);
      if (cached) {
        for (const event of cached) this.deliver(sub, event);
      } else {
        sub.buffer = [];
        this.addSubscription(sub, trigger);
        try {
          await this.options.readRange(after, upTo, (events) => {
            for (const event of events) if (!signal.aborted) this.deliver(sub, event);
          });
        } catch (err) {
          this.removeSubscription(sub);
          throw err;
        }
        const held = sub.buffer;
        sub.buffer = null;
        for (const event of held) if (!signal.aborted) this.deliver(sub, event);
      }
    }
    if (signal.aborted) {
      this.removeSubscription(sub);
      return;
    }
    this.addSubscription(sub, trigger);
    signal.addEventListener('abort', () => this.removeSubscription(sub), { once: true });
    trigger?.onLive?.(this.subscriptions.clock);
  }

  /**
   * Hands out a change this process just wrote (byte for byte the stream's entry); with a
   * replication fence, leaves it to the reader. When every
   * older change has been dispatched it goes out at once and nothing is returned. Otherwise
   * (another writer's changes came first) it waits for one shared read of the newer changes and
   * the returned promise resolves once it has gone out, or once reading gave up: the blocking
   * reader delivers it then. Never rejects; never dispatches a change twice or out of order.
   */
  deliverOwn(event: ChangeEvent): Promise<void> | undefined {
    if (compareResourceVersions(event.resourceVersion, this.position) <= 0) return undefined;
    // With a replication fence only the reader, which waits for it, hands changes out: other writers'
    // changes may not be on the replicas yet, and an own write was acknowledged by
    // --redis-wait-replicas of them, where the fence waits for every connected one (a failover may
    // promote any; the Sentinel durability test's SIGSTOP fault showed a watch an own write that
    // the promoted replica lacked).
    if (this.options.fence) return undefined;
    if (this.lineageCheck === null && event.resourceVersion === successor(this.position)) {
      this.dispatch(event);
      return undefined;
    }
    this.pendingOwn.set(event.resourceVersion, event);
    const check = this.lineageCheck;
    if (check === null) return this.catchUpThrough(event.resourceVersion);
    return check.then(
      () => this.catchUpThrough(event.resourceVersion),
      () => undefined,
    );
  }

  private async catchUpThrough(version: string): Promise<void> {
    // The shared read may have been sent before this write was applied, and a lineage check that
    // starts meanwhile voids a read's result: read again until one that counts reaches the write.
    // Bounded, so a write whose change Redis lost (a failover) does not wait forever; a failed
    // read ends the wait (the blocking reader delivers the change when it can).
    for (let reads = 0, turns = 0; reads < 3 && turns < 10 && !this.stop.signal.aborted && compareResourceVersions(this.position, version) < 0; turns++) {
      const check = this.lineageCheck;
      if (check !== null) {
        await check.catch(() => false);
        continue;
      }
      this.catchingUp ??= this.readNewer().finally(() => {
        this.catchingUp = null;
      });
      const outcome = await this.catchingUp;
      if (outcome === 'failed') return;
      if (outcome === 'dispatched') reads++;
    }
  }

  /** One read of the changes after the position; dispatches them unless a lineage check began meanwhile. */
  private async readNewer(): Promise<'dispatched' | 'voided' | 'failed'> {
    let events: StreamEntry[];
    try {
      events = await this.options.readNewer(this.position);
    } catch {
      // The blocking reader reports failures and delivers these changes when it can.
      return 'failed';
    }
    if (this.lineageCheck !== null) return 'voided';
    for (const event of events) this.dispatch(event);
    return 'dispatched';
  }

  /**
   * Resolves once every change through `version` has been dispatched to this hub's listeners (or
   * the hub closed, or its history was reset past it); undefined when that is already so.
   */
  whenDispatched(version: string): Promise<void> | undefined {
    if (compareResourceVersions(version, this.position) <= 0 || this.stop.signal.aborted) return undefined;
    return new Promise((resolve) => this.dispatchWaiters.push({ version, resolve }));
  }

  /** Resolves the whenDispatched callers whose version the position has reached (all of them when `all`). */
  private releaseWaiters(all = false): void {
    if (this.dispatchWaiters.length === 0) return;
    const waiting: { version: string; resolve: () => void }[] = [];
    for (const waiter of this.dispatchWaiters) {
      if (all || compareResourceVersions(waiter.version, this.position) <= 0) waiter.resolve();
      else waiting.push(waiter);
    }
    this.dispatchWaiters = waiting;
  }

  private addSubscription(sub: Subscription, trigger: WatchTrigger | undefined): void {
    this.subscriptions.add(sub, trigger);
    this.noteListening();
  }

  private removeSubscription(sub: Subscription): void {
    this.subscriptions.delete(sub);
    this.noteListening();
  }

  /** Tells `onListening` when the hub gains its first listener or loses its last. */
  private noteListening(): void {
    const listening = this.subscriptions.size > 0;
    if (listening === this.listening) return;
    this.listening = listening;
    this.options.onListening?.(listening);
  }

  /** Number of registered listeners. */
  get size(): number {
    return this.subscriptions.size;
  }

  /** Stops the loop, drops listeners and closes the dedicated connection. */
  async close(): Promise<void> {
    this.stop.abort();
    this.releaseWaiters(true);
    this.subscriptions.clear();
    this.options.client.disconnect();
    await this.loop;
  }

  /** Cached changes after `after` when the cache reaches back that far, else undefined. */
  private cachedAfter(after: string): StreamEntry[] | undefined {
    const first = this.cache[this.cacheStart];
    if (!first || compareResourceVersions(first.resourceVersion, successor(after)) > 0) return undefined;
    const events: StreamEntry[] = [];
    for (let i = this.cacheStart; i < this.cache.length; i++) {
      const event = this.cache[i];
      if (compareResourceVersions(event.resourceVersion, after) > 0) events.push(event);
    }
    return events;
  }

  private deliver(sub: Subscription, event: StreamEntry): void {
    if (compareResourceVersions(event.resourceVersion, sub.after) <= 0) return;
    try {
      if (event.type === 'PROGRESS') sub.onProgress?.(event.resourceVersion);
      else sub.listener(event);
    } catch (err) {
      this.options.onError('watch listener failed', err);
    }
  }

  /** Dispatches `event`, then the own writes waiting for it. */
  private dispatch(event: StreamEntry): void {
    this.dispatchOne(event);
    while (this.pendingOwn.size > 0) {
      const next = this.pendingOwn.get(successor(this.position));
      if (next === undefined) break;
      this.dispatchOne(next);
    }
    this.releaseWaiters();
  }

  private dispatchOne(event: StreamEntry): void {
    if (this.pendingOwn.size > 0) this.pendingOwn.delete(event.resourceVersion);
    if (compareResourceVersions(event.resourceVersion, this.position) <= 0) return;
    if (event.resourceVersion !== successor(this.position)) {
      // The stream was trimmed past changes this reader had not read: listeners miss them.
      this.options.onError(
        `watch reader of ${this.options.stream} lost changes ${successor(this.position)} up to ${event.resourceVersion} (exclusive) to history trimming`,
        undefined,
      );
      this.cache.length = 0;
      this.cacheStart = 0;
      this.lastOfKey.clear();
      this.dropPendingThrough(event.resourceVersion);
      // Every current listener has missed changes: end their watches so clients resume or relist.
      const lost = watchGone(this.position, event.resourceVersion);
      for (const sub of this.subscriptions.entries()) {
        this.removeSubscription(sub);
        sub.onError?.(lost);
      }
    }
    this.position = event.resourceVersion;
    this.cache.push(event);
    if (event.type !== 'PROGRESS') {
      const last = this.lastOfKey.get(event.key);
      if (last !== undefined) shareReplacedText(event, last.json);
      this.lastOfKey.set(event.key, event);
    }
    if (this.cache.length - this.cacheStart > this.options.cacheSize) {
      const evicted = this.cache[this.cacheStart++];
      if (this.lastOfKey.get(evicted.key) === evicted) this.lastOfKey.delete(evicted.key);
    }
    if (this.cacheStart > 1024 && this.cacheStart * 2 > this.cache.length) {
      this.cache.splice(0, this.cacheStart);
      this.cacheStart = 0;
    }
    const handOut = (sub: Subscription): void => {
      if (sub.buffer) sub.buffer.push(event);
      else this.deliver(sub, event);
    };
    if (event.type !== 'PROGRESS') this.subscriptions.dispatch(event, handOut);
    else {
      // Rare (an expired continue token's type): every listener is told, narrowed ones included.
      this.subscriptions.passed(event.resourceVersion);
      for (const sub of this.subscriptions.entries()) handOut(sub);
    }
  }

  /** Forgets own writes up to `version` (history skipped past them). */
  private dropPendingThrough(version: string): void {
    for (const rv of [...this.pendingOwn.keys()]) if (compareResourceVersions(rv, version) < 0) this.pendingOwn.delete(rv);
  }

  private async run(signal: AbortSignal): Promise<void> {
    let backoff = 50;
    const blockMs = this.options.blockMs ?? 2000;
    let suspect = false;
    // ioredis never settles a command queued while its connection reconnects once disconnect() is
    // called: close() must not wait for such a read, so each one races the abort.
    const aborted = new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('watch reader closed')), { once: true }));
    aborted.catch(() => undefined);
    while (!signal.aborted) {
      try {
        await Promise.race([this.readOnce(signal, suspect, blockMs), aborted]);
        suspect = false;
        backoff = 50;
      } catch (err) {
        if (signal.aborted) break;
        suspect = true;
        this.options.onError(`watch reader of ${this.options.stream} failed; retrying`, err);
        // A connection that gave up reconnecting is started again: this reader has no other.
        if (this.options.client.status === 'end') this.options.client.connect().catch(() => undefined);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, backoff);
          signal.addEventListener(
            'abort',
            () => {
              clearTimeout(timer);
              resolve();
            },
            { once: true },
          );
        });
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  }

  /** One read: the lineage check when the last read failed, XREAD, the replication fence, then dispatch. */
  private async readOnce(signal: AbortSignal, suspect: boolean, blockMs: number): Promise<void> {
    if (suspect) await this.checkLineage();
    // A command issued while the client is not ready goes out on its next connection (the first
    // one included): only a connection made after that one means the read may have moved.
    const connection = this.options.client.status === 'ready' ? this.connections : this.connections + 1;
    const reply = await this.options.client.call('XREAD', ['COUNT', 1000, 'BLOCK', blockMs, 'STREAMS', this.options.stream, `${this.position}-0`]);
    const events = parseXread(reply, this.position);
    if (events.length > 0 && this.options.fence) await this.options.fence(signal);
    if (signal.aborted) return;
    // The connection changed between the read and now (a failover): the changes may have been read
    // on the old primary and fenced on the new one, where ioredis re-sent the fence, so they may not
    // exist there. None of them goes out: the lineage check ends the watches if what they were
    // already shown is gone, and the next read takes the changes from the current primary.
    if (connection !== this.connections) {
      await this.checkLineage();
      return;
    }
    for (const event of events) this.dispatch(event);
  }

  /**
   * Whether Redis lost changes this reader delivered: its counter is behind the reader's position,
   * or the change at the position is not the one delivered. If so, ends every listener with Gone,
   * empties the cache and goes on from the counter; resolves true.
   */
  private async checkLineage(): Promise<boolean> {
    const check = this.lineageDiverged();
    this.lineageCheck = check;
    try {
      return await check;
    } finally {
      this.lineageCheck = null;
    }
  }

  private async lineageDiverged(): Promise<boolean> {
    const counter = await this.options.client.call('GET', [this.options.counter]);
    const current = counter === null ? '1' : replyString(counter, 'GET');
    let diverged = compareResourceVersions(current, this.position) < 0;
    const delivered = this.cache[this.cache.length - 1];
    if (!diverged && delivered !== undefined && delivered.resourceVersion === this.position) {
      const at = replyArray(await this.options.client.call('XRANGE', [this.options.stream, `${this.position}-0`, `${this.position}-0`]), 'XRANGE');
      // A missing entry was trimmed (the history window passed); a different one was written anew.
      diverged = at.length > 0 && parseStreamEntry(at[0]).json !== delivered.json;
    }
    if (!diverged) return false;
    this.options.onError(
      `change stream ${this.options.stream} no longer holds the changes its reader delivered up to ${this.position} (now at ${current}: a failover lost them); ending every watch of the type`,
      undefined,
    );
    this.cache.length = 0;
    this.cacheStart = 0;
    this.lastOfKey.clear();
    this.pendingOwn.clear();
    const lost = watchGone(this.position, current);
    this.position = current;
    this.releaseWaiters();
    this.subscriptions.passed(current);
    for (const sub of this.subscriptions.entries()) {
      this.removeSubscription(sub);
      sub.onError?.(lost);
    }
    return true;
  }
}

/** Gone for a watch whose start version is older than the kept history (same text as MemoryStorage). */
export function watchGone(from: string, oldest: string): StorageError {
  return new StorageError('Gone', `too old resource version: ${from} (${oldest})`, oldest);
}
