import type { ChangeEvent } from './storage.js';
import type { Obj } from '../api/object-util.js';
import { decodeStoredJson } from './stored-json.js';
import { RecentEventCache } from './recent-event-cache.js';

/**
 * A change's objects parsed once per process and shared by everyone in it who reads the change as
 * it goes out: watch selectors and frames, the node authorizer's graph. Shared objects are never
 * to be mutated. Kept for the most recent RECENT_CHANGES changes only (see RecentEventCache): an
 * older change read again (a resumed watch) is parsed again, to the same result.
 */
export const RECENT_CHANGES = 2048;

interface ParsedChange {
  /** Undefined when the change's object does not decode (a corrupt stored object). */
  current: Obj | undefined;
  /** Undefined when there is none or it does not decode; parsed only once asked for. */
  previous: Obj | undefined;
  previousParsed: boolean;
  /** The key's last parse when this change was first read: its object is `previous` if the texts are equal. */
  lastOfKey: LastParse | undefined;
}

interface LastParse {
  readonly json: string;
  readonly object: Obj;
}

const parsedCache = new RecentEventCache<ParsedChange>(RECENT_CHANGES);

/**
 * Each recently changed key's last parsed object and the text it was parsed from. The object a
 * MODIFIED or DELETED change replaced is the object of that key's change before it, which this
 * process parsed moments ago: it is reused when the texts are equal (kept for the most recently
 * changed RECENT_CHANGES keys). Keys of different types can meet here; their texts then differ.
 */
const lastParseByKey = new Map<string, LastParse>();

function rememberParse(key: string, json: string, object: Obj): void {
  lastParseByKey.delete(key);
  lastParseByKey.set(key, { json, object });
  if (lastParseByKey.size > RECENT_CHANGES) {
    const oldest = lastParseByKey.keys().next();
    if (oldest.done !== true) lastParseByKey.delete(oldest.value);
  }
}

function parsedChange(event: ChangeEvent): ParsedChange {
  let parsed = parsedCache.get(event);
  if (!parsed) {
    const lastOfKey = event.prevJson !== undefined ? lastParseByKey.get(event.key) : undefined;
    const current = decodeStoredJson(event.json);
    parsed = { current, previous: undefined, previousParsed: false, lastOfKey };
    parsedCache.set(event, parsed);
    if (current !== undefined) rememberParse(event.key, event.json, current);
  }
  return parsed;
}

/** The change's object, parsed (shared: do not mutate); undefined when it does not decode. */
export function parsedObject(event: ChangeEvent): Obj | undefined {
  return parsedChange(event).current;
}

/** The change's object and the one it replaced, parsed (shared: do not mutate). */
export function parsedObjects(event: ChangeEvent): { current: Obj | undefined; previous: Obj | undefined } {
  const parsed = parsedChange(event);
  if (!parsed.previousParsed) {
    const prevJson = event.prevJson;
    const last = parsed.lastOfKey;
    parsed.previous = prevJson === undefined ? undefined : last !== undefined && last.json === prevJson ? last.object : decodeStoredJson(prevJson);
    parsed.previousParsed = true;
    parsed.lastOfKey = undefined;
  }
  return parsed;
}

/** The change's object if someone in this process parsed it recently; never parses. */
export function parsedIfRecent(event: ChangeEvent): Obj | undefined {
  return parsedCache.get(event)?.current;
}

/** Whether the change's object decodes (parsed once, and shared as parsedObject's). */
export function eventDecodes(event: ChangeEvent): boolean {
  return parsedChange(event).current !== undefined;
}
