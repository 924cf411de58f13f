import { randomBytes } from 'node:crypto';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { splitAroundResourceVersion } from './redis-json.js';
import { parseStoredValue, typeKeys, type TypeKeys } from './redis-keys.js';
import { loadScripts, runScript, runScriptAndWait, type LuaScript, type RedisClient, type StorageScripts } from './redis-scripts.js';
import { FreshReads } from './fresh-reads.js';
import { ListCache } from './redis-list-cache.js';
import { parseStreamEntry, WatchHub, watchGone } from './redis-watch-hub.js';
import { compareResourceVersions, isResourceVersion } from './resource-version.js';
import {
  DEFAULT_MAX_OBJECT_BYTES,
  objectTooLarge,
  StorageError,
  type ChangeEvent,
  type ChangeListener,
  type ListOptions,
  type ListResult,
  type Storage,
  type StoredObject,
} from './storage.js';

/** Where the Redis deployment is (standalone URL, Sentinel or Cluster) and how history is kept. */
export interface RedisStorageOptions {
  /** `redis://` or `rediss://` URL of a standalone server (default redis://127.0.0.1:6379). */
  url?: string;
  /** Seed nodes of a Redis Cluster; when set, `url` and `sentinels` are ignored. */
  clusterNodes?: { host: string; port: number }[];
  /** Sentinels watching the master named `sentinelName`; when set, `url` is ignored. */
  sentinels?: { host: string; port: number }[];
  sentinelName?: string;
  password?: string;
  /** Connect with TLS (also to Cluster nodes and the Sentinel-announced master). */
  tls?: boolean;
  /** How long change history is kept, in milliseconds (watch and snapshot window). */
  historyMs: number;
  /** Largest object stored, in bytes of its JSON (default DEFAULT_MAX_OBJECT_BYTES). */
  maxObjectBytes?: number;
  /** Most events kept per type, whatever their age. */
  historyMaxEvents?: number;
  /** After each write, wait until this many replicas acknowledged it (WAIT); 0 disables. */
  waitReplicas?: number;
  /** How long WAIT may take before the write is reported Unavailable (default 1000 ms). */
  waitTimeoutMs?: number;
  /** Prefix of every key (default `capstan:`); must not contain `{`. */
  keyPrefix?: string;
  /** A command without reply after this long fails with Unavailable (default 5000 ms). */
  commandTimeoutMs?: number;
  /** Recent changes each type's watch reader keeps in process (default 4096). */
  watchCacheSize?: number;
  /** Serve lists from a per-process cache kept current by the change stream (default true). */
  listCache?: boolean;
  /** How long a consistent list waits for that cache to catch up before reading Redis (default 3000 ms). */
  listCacheCatchUpMs?: number;
  /** Receives failures that have no caller to report to (watch reader retries, listener errors). */
  onError?: (message: string, err: unknown) => void;
}

/** A script reply narrowed to an array; anything else is a protocol failure. */
function replyArray(reply: unknown, what: string): unknown[] {
  if (!Array.isArray(reply) || reply.length === 0) throw new Error(`unexpected reply from ${what}`);
  return reply;
}

function replyString(value: unknown, what: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  throw new Error(`unexpected reply from ${what}`);
}

function replyNumber(value: unknown, what: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  if (!Number.isInteger(n)) throw new Error(`unexpected reply from ${what}`);
  return n;
}

/**
 * The one place where script outcomes become StorageErrors, with MemoryStorage's messages.
 * `subject` is the object key (writes) or the requested version (lists).
 */
function scriptFailure(reply: unknown[], subject: string): StorageError | undefined {
  const code = reply[0];
  const detail = reply[1] === undefined ? '' : replyString(reply[1], 'script');
  switch (code) {
    case 'ok':
      return undefined;
    case 'AlreadyExists':
      return new StorageError('AlreadyExists', `${subject} already exists`);
    case 'NotFound':
      return new StorageError('NotFound', `${subject} not found`);
    case 'Conflict':
      return new StorageError('Conflict', `${subject} is at ${detail}`, detail);
    case 'Gone':
      return new StorageError('Gone', `resource version ${subject} is older than the history kept`, detail);
    case 'TooLarge':
      return new StorageError('TooLarge', `resource version ${subject} is newer than ${detail}`);
    default:
      return new StorageError('Unavailable', `unexpected script reply ${String(code)}`);
  }
}

/** Redis failures (connection, timeout, OOM, READONLY, failover) surface as Unavailable. */
function unavailable(err: unknown): StorageError {
  if (err instanceof StorageError) return err;
  const message = err instanceof Error ? err.message : String(err);
  return new StorageError('Unavailable', `storage unavailable: ${message}`);
}

/** A connection failure in a person's words (`connection refused`), or the error's own message. */
function connectionProblem(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  switch (e?.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      break;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/NOAUTH|WRONGPASS|invalid password|invalid username-password/i.test(message)) return 'authentication failed';
  return message;
}

function reconnectDelay(attempt: number): number {
  return Math.min(attempt * 50, 500);
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** ZRANGEBYLEX bounds of the keys a list covers (same range as MemoryStorage's binary search). */
function keyRange(options: ListOptions): { lower: string; upper: string } {
  let lower = '-';
  let upper = '+';
  if (options.namespace !== undefined) {
    lower = `[${options.namespace}/`;
    upper = `(${options.namespace}0`; // '0' is the byte after '/'
  }
  if (options.afterKey !== undefined && (lower === '-' || options.afterKey >= lower.slice(1))) lower = `(${options.afterKey}`;
  return { lower, upper };
}

/** One call of list-4.lua, decoded. */
interface RangeRead {
  at: string;
  /** Keys the range holds now. */
  total: number;
  /** The first current keys of the range, in order. */
  current: Map<string, StoredObject>;
  currentKeys: string[];
  /** State at `at` of keys changed since (undefined: absent then), and whether each exists now. */
  changes: Map<string, { then: StoredObject | undefined; existsNow: boolean }>;
}

function decodeRangeRead(reply: unknown[], requested: string): RangeRead | StorageError {
  const failure = scriptFailure(reply, requested);
  if (failure) return failure;
  const at = replyString(reply[1], 'list');
  const total = replyNumber(reply[2], 'list');
  const n = replyNumber(reply[3], 'list');
  const current = new Map<string, StoredObject>();
  const currentKeys: string[] = [];
  let i = 4;
  for (let j = 0; j < n; j++, i += 2) {
    const key = replyString(reply[i], 'list');
    const value = parseStoredValue(replyString(reply[i + 1], 'list'));
    currentKeys.push(key);
    if (value) current.set(key, { key, resourceVersion: value.resourceVersion, json: value.json });
  }
  const m = replyNumber(reply[i++], 'list');
  const changes = new Map<string, { then: StoredObject | undefined; existsNow: boolean }>();
  for (let j = 0; j < m; j++, i += 5) {
    const key = replyString(reply[i], 'list');
    const present = reply[i + 1] === 'P';
    const then = present ? { key, resourceVersion: replyString(reply[i + 2], 'list'), json: replyString(reply[i + 3], 'list') } : undefined;
    changes.set(key, { then, existsNow: reply[i + 4] === '1' });
  }
  return { at, total, current, currentKeys, changes };
}

/**
 * The Redis backend: objects, one resourceVersion counter and one change stream per storage type,
 * every key of a type under the hash tag `{type}` (one Cluster slot per type).
 *
 * Guarantees, identical to MemoryStorage: each write is one Lua script that checks, allocates the
 * next version, stores the object, updates the key index and appends the change event, all or
 * nothing; lists are consistent snapshots (exact at an older version while the history reaches
 * back); watches deliver changes in version order, exactly once, from any process connected to the
 * same Redis. Redis failures of any kind reject with `StorageError('Unavailable')`; a write that
 * timed out may still have been applied, as with any remote store.
 *
 * Object JSON is produced by `splitAroundResourceVersion` and stored byte-exact: Lua never decodes
 * it, so `[]`, `{}` and number spellings survive, and bigint values are kept with all digits.
 */
export class RedisStorage implements Storage {
  private readonly options: RedisStorageOptions;
  private readonly client: RedisClient;
  private readonly scripts: Promise<StorageScripts>;
  private readonly prefix: string;
  private readonly historyMax: number;
  private readonly hubs = new Map<string, WatchHub>();
  private readonly onError: (message: string, err: unknown) => void;
  private readonly listCache: ListCache | undefined;
  /** Concurrent reads of a type's counter, and of its history bounds, share one round trip. */
  private readonly counterReads = new FreshReads<string>(async (type) => {
    const value = await this.command('GET', [this.keys(type).counter]);
    return value === null ? '1' : replyString(value, 'GET');
  });
  private readonly historyReads = new FreshReads<{ current: string; oldest: string }>((type) => this.historyBounds(this.keys(type)));
  private closed = false;

  constructor(options: RedisStorageOptions) {
    this.options = options;
    this.prefix = options.keyPrefix ?? 'capstan:';
    this.historyMax = options.historyMaxEvents ?? 1_000_000;
    this.onError = options.onError ?? ((message, err) => console.error(`[redis-storage] ${message}`, err ?? ''));
    this.client = this.createClient();
    // ioredis reports connection trouble as events; requests see it as rejected commands.
    this.client.on('error', () => undefined);
    this.scripts = loadScripts();
    this.scripts.catch(() => undefined);
    this.listCache =
      options.listCache === false
        ? undefined
        : new ListCache(
            {
              readPage: (type, o) => this.readStore(type, o),
              subscribe: (type, after, listener, signal, onError) => this.watch(type, after, listener, signal, onError),
              currentResourceVersion: (type) => this.currentResourceVersion(type),
            },
            {
              historyMs: options.historyMs,
              historyMaxEvents: this.historyMax,
              catchUpTimeoutMs: options.listCacheCatchUpMs,
              onError: this.onError,
            },
          );
  }

  /** Creates the storage and waits until scripts are loaded and Redis answers. */
  static async connect(options: RedisStorageOptions): Promise<RedisStorage> {
    const storage = new RedisStorage(options);
    // ioredis reports why it cannot connect only as 'error' events; the failed command says less.
    let connectError: unknown;
    const onError = (err: unknown): void => {
      connectError = err;
    };
    storage.client.on('error', onError);
    try {
      await storage.scripts;
      await storage.client.call('PING');
    } catch (err) {
      await storage.close();
      throw new StorageError('Unavailable', `cannot reach Redis: ${connectionProblem(connectError ?? err)}`);
    } finally {
      storage.client.off('error', onError);
    }
    return storage;
  }

  private createClient(): RedisClient {
    const o = this.options;
    const common: RedisOptions = {
      password: o.password,
      tls: o.tls ? {} : undefined,
      protocol: 2,
      commandTimeout: o.commandTimeoutMs ?? 5000,
      maxRetriesPerRequest: 2,
      // Reconnect quickly after a restart or failover; requests meanwhile fail fast as Unavailable.
      retryStrategy: reconnectDelay,
    };
    if (o.clusterNodes && o.clusterNodes.length > 0) {
      const clusterOptions: ClusterOptions = {
        redisOptions: common,
        maxRedirections: 16,
        retryDelayOnFailover: 200,
        clusterRetryStrategy: reconnectDelay,
      };
      return new Cluster(o.clusterNodes, clusterOptions);
    }
    if (o.sentinels && o.sentinels.length > 0) {
      return new Redis({
        ...common,
        sentinels: o.sentinels,
        name: o.sentinelName ?? 'mymaster',
        sentinelPassword: o.password,
        enableTLSForSentinelMode: o.tls === true,
      });
    }
    return new Redis(o.url ?? 'redis://127.0.0.1:6379', common);
  }

  /** A connection for one blocking reader: no command timeout shorter than its BLOCK. */
  private createReaderClient(): RedisClient {
    const override = { commandTimeout: undefined, maxRetriesPerRequest: null };
    const client =
      this.client instanceof Cluster
        ? this.client.duplicate(undefined, { redisOptions: { ...this.client.options.redisOptions, ...override } })
        : this.client.duplicate(override);
    client.on('error', () => undefined);
    return client;
  }

  private keys(type: string): TypeKeys {
    return typeKeys(this.prefix, type);
  }

  private async run(script: (s: StorageScripts) => LuaScript, keys: TypeKeys, args: (string | number)[], write: boolean): Promise<unknown[]> {
    if (this.closed) throw new StorageError('Unavailable', 'storage is closed');
    // A write is only sent on a live connection, so a failure before sending is a clean Unavailable.
    if (write && this.client.status !== 'ready') throw new StorageError('Unavailable', `storage unavailable: connection is ${this.client.status}`);
    try {
      const s = script(await this.scripts);
      const keyList = s.keyCount === 2 ? [keys.counter, keys.stream] : [keys.counter, keys.objects, keys.index, keys.stream];
      const replicas = this.options.waitReplicas ?? 0;
      if (!write || replicas <= 0) return replyArray(await runScript(this.client, s, keyList, args), s.name);
      const timeoutMs = this.options.waitTimeoutMs ?? 1000;
      const { reply, acknowledged } = await runScriptAndWait(this.client, s, keyList, args, replicas, timeoutMs);
      const result = replyArray(reply, s.name);
      if (result[0] === 'ok' && acknowledged < replicas) {
        throw new StorageError('Unavailable', `storage unavailable: write acknowledged by ${acknowledged} of ${replicas} replicas within ${timeoutMs}ms`);
      }
      return result;
    } catch (err) {
      // A Redis error reply (READONLY, OOM, NOSCRIPT...) is a definite refusal; anything else after
      // sending (timeout, connection lost) leaves the write's outcome unknown.
      if (write && !(err instanceof StorageError) && !(err instanceof Error && err.name === 'ReplyError')) {
        const message = err instanceof Error ? err.message : String(err);
        throw new StorageError('Timeout', `write outcome unknown: ${message}`);
      }
      throw unavailable(err);
    }
  }

  private async command(name: string, args: (string | number)[]): Promise<unknown> {
    if (this.closed) throw new StorageError('Unavailable', 'storage is closed');
    try {
      return await this.client.call(name, args);
    } catch (err) {
      throw unavailable(err);
    }
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

  async create(type: string, key: string, object: Record<string, unknown>): Promise<StoredObject> {
    const { before, after } = this.serialize(object);
    const reply = await this.run((s) => s.create, this.keys(type), [key, before, after, ...this.history()], true);
    const failure = scriptFailure(reply, key);
    if (failure) throw failure;
    const rv = replyString(reply[1], 'create');
    return { key, resourceVersion: rv, json: before + rv + after };
  }

  async get(type: string, key: string): Promise<StoredObject | undefined> {
    const value = await this.command('HGET', [this.keys(type).objects, key]);
    if (value === null) return undefined;
    const parsed = parseStoredValue(replyString(value, 'HGET'));
    if (!parsed) throw new StorageError('Unavailable', `storage holds a malformed value for ${key}`);
    return { key, resourceVersion: parsed.resourceVersion, json: parsed.json };
  }

  async update(type: string, key: string, object: Record<string, unknown>, expectedResourceVersion: string): Promise<StoredObject> {
    const { before, after } = this.serialize(object);
    const reply = await this.run((s) => s.update, this.keys(type), [key, expectedResourceVersion, before, after, ...this.history()], true);
    const failure = scriptFailure(reply, key);
    if (failure) throw failure;
    const rv = replyString(reply[1], 'update');
    return { key, resourceVersion: rv, json: before + rv + after };
  }

  async delete(type: string, key: string, expectedResourceVersion?: string): Promise<StoredObject> {
    const precondition = expectedResourceVersion === undefined ? ['0', ''] : ['1', expectedResourceVersion];
    const reply = await this.run((s) => s.delete, this.keys(type), [key, ...precondition, ...this.history()], true);
    const failure = scriptFailure(reply, key);
    if (failure) throw failure;
    return { key, resourceVersion: replyString(reply[1], 'delete'), json: replyString(reply[2], 'delete') };
  }

  /**
   * Served from the list cache when it can (see ListCache for when), else read from Redis: both
   * give the same consistent snapshot.
   */
  async list(type: string, options: ListOptions = {}): Promise<ListResult> {
    const requested = options.resourceVersion;
    if (requested !== undefined && !isResourceVersion(requested)) {
      throw new StorageError('TooLarge', `resource version ${requested} is not a valid resource version`);
    }
    const cached = await this.listCache?.list(type, options);
    return cached ?? this.readStore(type, options);
  }

  /** A list read from Redis itself, consistent through one version however many reads it takes. */
  private async readStore(type: string, options: ListOptions): Promise<ListResult> {
    const requested = options.resourceVersion;
    const keys = this.keys(type);
    try {
      return await this.collect(keys, options, requested ?? '', false);
    } catch (err) {
      // A plain list must not fail because history moved on between its pages: read it whole.
      if (requested === undefined && err instanceof StorageError && err.code === 'Gone') return this.collect(keys, options, '', true);
      throw err;
    }
  }

  /**
   * Walks the range page by page at one version: the first read fixes the version (`at`, or the
   * current one when empty), later reads rebuild that version from current objects plus the
   * changes after it, so the result is one consistent snapshot however many reads it takes.
   */
  private async collect(keys: TypeKeys, options: ListOptions, at: string, whole: boolean): Promise<ListResult> {
    const limit = options.limit !== undefined && options.limit > 0 ? options.limit : Infinity;
    const filter = options.filter;
    const base = whole || limit === Infinity ? 0 : filter ? Math.max(limit + 1, 128) : limit + 1;
    let { lower } = keyRange(options);
    const { upper } = keyRange(options);
    const items: StoredObject[] = [];
    let hasMore = false;
    let remaining: number | undefined;
    let version = at;
    for (;;) {
      const reply = await this.run((s) => s.list, keys, [version, lower, upper, base], false);
      const read = decodeRangeRead(reply, version);
      if (read instanceof StorageError) throw read;
      version = read.at;
      const truncated = read.currentKeys.length < read.total;
      const boundary = truncated ? read.currentKeys[read.currentKeys.length - 1] : undefined;
      const merged = new Set(read.currentKeys);
      let snapshotTotal = read.total;
      for (const [key, change] of read.changes) {
        if (change.then && !change.existsNow) snapshotTotal++;
        if (!change.then && change.existsNow) snapshotTotal--;
        if (boundary === undefined || byteOrder(key, boundary) <= 0) merged.add(key);
      }
      const ordered = read.changes.size === 0 ? read.currentKeys : [...merged].sort(byteOrder);
      let seen = 0;
      for (const key of ordered) {
        const change = read.changes.get(key);
        const obj = change ? change.then : read.current.get(key);
        if (!obj) continue;
        seen++;
        if (filter && !filter(obj)) continue;
        if (items.length < limit) {
          items.push(obj);
          if (items.length === limit) remaining = snapshotTotal - seen;
        } else {
          hasMore = true;
          break;
        }
      }
      if (hasMore || boundary === undefined) break;
      lower = `(${boundary}`;
    }
    return { items, resourceVersion: options.resourceVersion ?? version, hasMore, remaining: hasMore ? remaining : undefined };
  }

  /** Read after the call (concurrent callers share one GET, see FreshReads). */
  async currentResourceVersion(type: string): Promise<string> {
    return this.counterReads.get(type);
  }

  /** The type's current version and the oldest version its history reaches back to. */
  private async historyBounds(keys: TypeKeys): Promise<{ current: string; oldest: string }> {
    const reply = await this.run((s) => s.info, keys, [], false);
    return { current: replyString(reply[0], 'info'), oldest: replyString(reply[1], 'info') };
  }

  async watch(type: string, fromResourceVersion: string, listener: ChangeListener, signal: AbortSignal, onError?: (err: StorageError) => void): Promise<void> {
    const { current, oldest } = await this.historyReads.get(type);
    if (compareResourceVersions(fromResourceVersion, oldest) < 0) throw watchGone(fromResourceVersion, oldest);
    if (signal.aborted) return;
    const hub = this.hub(type, this.keys(type), current);
    await hub.subscribe(fromResourceVersion, listener, signal, onError);
  }

  private hub(type: string, keys: TypeKeys, current: string): WatchHub {
    if (this.closed) throw new StorageError('Unavailable', 'storage is closed');
    const existing = this.hubs.get(type);
    if (existing) return existing;
    const hub = new WatchHub({
      client: this.createReaderClient(),
      stream: keys.stream,
      position: current,
      cacheSize: this.options.watchCacheSize ?? 4096,
      readRange: (after, through, deliver) => this.readRange(keys, after, through, deliver),
      onError: this.onError,
    });
    this.hubs.set(type, hub);
    return hub;
  }

  /** Replays the stream after `after` through `through` in batches; Gone when an entry is missing. */
  private async readRange(keys: TypeKeys, after: string, through: string, deliver: (events: ChangeEvent[]) => void): Promise<void> {
    let cursor = after;
    while (compareResourceVersions(cursor, through) < 0) {
      const reply = await this.command('XRANGE', [keys.stream, `(${cursor}-0`, `${through}-0`, 'COUNT', 1000]);
      const entries = Array.isArray(reply) ? reply : [];
      const events: ChangeEvent[] = [];
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

  /**
   * A random secret shared by every server on this Redis (created on first use), e.g. the key
   * that signs continue tokens so a chunked list can continue on any worker or pod.
   */
  async sharedSecret(name: string): Promise<Buffer> {
    const key = `${this.prefix}{secrets}:${name}`;
    try {
      await this.client.call('SET', [key, randomBytes(32).toString('base64'), 'NX']);
      const value = await this.client.call('GET', [key]);
      if (typeof value !== 'string' || value === '') throw new Error(`secret ${name} is missing`);
      return Buffer.from(value, 'base64');
    } catch (err) {
      throw unavailable(err);
    }
  }

  async count(type: string): Promise<number> {
    try {
      return Number(await this.client.call('ZCARD', [this.keys(type).index]));
    } catch (err) {
      throw unavailable(err);
    }
  }

  async ready(): Promise<boolean> {
    if (this.closed || this.client.status !== 'ready') return false;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), 1000);
      });
      return (await Promise.race([this.client.call('PING'), timeout])) === 'PONG';
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listCache?.close();
    const hubs = [...this.hubs.values()];
    this.hubs.clear();
    await Promise.all(hubs.map((h) => h.close()));
    try {
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
  }
}
