import type { ChangeEvent } from '../storage/storage.js';
import { withApiVersion, type Obj } from '../handlers/object-util.js';
import type { Representation } from '../codec/negotiation.js';
import { toPartialObjectMetadata, toTable } from '../codec/representations.js';

/**
 * Encodes each change once per (event type, apiVersion) and shares the bytes across all watchers;
 * parses each change's objects once for selector matching. Caches live as long as the event does.
 */
const lineCache = new WeakMap<ChangeEvent, Map<string, string>>();
const parsedCache = new WeakMap<ChangeEvent, { current: Obj; previous: Obj | undefined }>();

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * The JSON line (`{"type":...,"object":...}\n`) for `event` delivered as `type` at `apiVersion`, in
 * the watch's representation (the object, a one-row Table, or PartialObjectMetadata).
 */
export function encodedLine(event: ChangeEvent, type: WatchEventType, apiVersion: string, representation: Representation = 'object'): string {
  let byKey = lineCache.get(event);
  if (!byKey) {
    byKey = new Map();
    lineCache.set(event, byKey);
  }
  const k = `${type} ${apiVersion} ${representation}`;
  let line = byKey.get(k);
  if (line === undefined) {
    line = objectLine(type, event.json, apiVersion, representation);
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

/** A line for one object (synthetic ADDED of initial state, or a change) in a representation. */
export function objectLine(type: WatchEventType, json: string, apiVersion: string, representation: Representation = 'object'): string {
  const objectJson = withApiVersion(json, apiVersion);
  if (representation === 'object') return `{"type":"${type}","object":${objectJson}}\n`;
  const obj = JSON.parse(objectJson) as Obj;
  const meta = (typeof obj.metadata === 'object' && obj.metadata !== null ? obj.metadata : {}) as Obj;
  const out = representation === 'Table'
    ? toTable([obj], { resourceVersion: meta.resourceVersion ?? '' })
    : toPartialObjectMetadata(obj);
  return `${JSON.stringify({ type, object: out })}\n`;
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
