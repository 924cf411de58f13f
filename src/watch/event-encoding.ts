import type { ChangeEvent } from '../storage/storage.js';
import { withApiVersion, type Obj } from '../handlers/object-util.js';

/**
 * Encodes each change once per (event type, apiVersion) and shares the bytes across all watchers;
 * parses each change's objects once for selector matching. Caches live as long as the event does.
 */
const lineCache = new WeakMap<ChangeEvent, Map<string, string>>();
const parsedCache = new WeakMap<ChangeEvent, { current: Obj; previous: Obj | undefined }>();

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** The JSON line (`{"type":...,"object":...}\n`) for `event` delivered as `type` at `apiVersion`. */
export function encodedLine(event: ChangeEvent, type: WatchEventType, apiVersion: string): string {
  let byKey = lineCache.get(event);
  if (!byKey) {
    byKey = new Map();
    lineCache.set(event, byKey);
  }
  const k = `${type} ${apiVersion}`;
  let line = byKey.get(k);
  if (line === undefined) {
    line = `{"type":"${type}","object":${withApiVersion(event.json, apiVersion)}}\n`;
    byKey.set(k, line);
  }
  return line;
}

/** The parsed objects of a change (shared: callers must not mutate them). */
export function parsedObjects(event: ChangeEvent): { current: Obj; previous: Obj | undefined } {
  let parsed = parsedCache.get(event);
  if (!parsed) {
    parsed = {
      current: JSON.parse(event.json) as Obj,
      previous: event.prevJson !== undefined ? (JSON.parse(event.prevJson) as Obj) : undefined,
    };
    parsedCache.set(event, parsed);
  }
  return parsed;
}

/** A line for an object that is not a stored change (synthetic ADDED of initial state). */
export function objectLine(type: WatchEventType, json: string, apiVersion: string): string {
  return `{"type":"${type}","object":${withApiVersion(json, apiVersion)}}\n`;
}

/** A BOOKMARK line: only kind, apiVersion and metadata.resourceVersion (plus annotations when given). */
export function bookmarkLine(kind: string, apiVersion: string, resourceVersion: string, annotations?: Record<string, string>): string {
  const metadata: Obj = { resourceVersion };
  if (annotations) metadata.annotations = annotations;
  return `${JSON.stringify({ type: 'BOOKMARK', object: { kind, apiVersion, metadata } })}\n`;
}

/** An ERROR line carrying a Status. */
export function errorLine(status: Obj): string {
  return `${JSON.stringify({ type: 'ERROR', object: status })}\n`;
}
