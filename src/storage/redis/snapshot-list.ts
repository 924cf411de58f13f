/**
 * Lists read from Redis itself: one consistent snapshot of a type's range, however many script
 * calls (list-4.lua) it takes. The first read fixes the version; later reads rebuild that version
 * from the current objects plus the changes after it, which the script returns alongside.
 */
import type { RedisCommands } from './commands.js';
import { parseStoredValue, type TypeKeys } from './keys.js';
import { replyNumber, replyString, scriptFailure } from './replies.js';
import { type ListOptions, type ListResult, type StoredObject } from '../storage.js';
import { StorageError } from '../../api/storage-error.js';

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
 * Walks the range page by page at one version: the first read fixes the version (`at`, or the
 * current one when empty); `whole` reads everything in one call.
 */
async function collect(commands: RedisCommands, keys: TypeKeys, options: ListOptions, at: string, whole: boolean): Promise<ListResult> {
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
    const reply = await commands.script((s) => s.list, keys, [version, lower, upper, base], false);
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

/**
 * One page of the type read from Redis, consistent through one version however many script calls
 * it takes: at `options.resourceVersion` when given (`Gone` when the history no longer reaches it,
 * `TooLarge` when it is newer than the type's), else at the current version. A list without a
 * version never fails because history moved on between its calls: it is then read whole in one.
 */
export async function readSnapshotList(commands: RedisCommands, keys: TypeKeys, options: ListOptions): Promise<ListResult> {
  const requested = options.resourceVersion;
  try {
    return await collect(commands, keys, options, requested ?? '', false);
  } catch (err) {
    if (requested === undefined && err instanceof StorageError && err.code === 'Gone') return collect(commands, keys, options, '', true);
    throw err;
  }
}
