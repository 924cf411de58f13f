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
}

const parsedCache = new RecentEventCache<ParsedChange>(RECENT_CHANGES);

function parsedChange(event: ChangeEvent): ParsedChange {
  let parsed = parsedCache.get(event);
  if (!parsed) {
    parsed = { current: decodeStoredJson(event.json), previous: undefined, previousParsed: false };
    parsedCache.set(event, parsed);
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
    parsed.previous = event.prevJson !== undefined ? decodeStoredJson(event.prevJson) : undefined;
    parsed.previousParsed = true;
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
