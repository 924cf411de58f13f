import type { ChangeEvent } from '../storage/storage.js';
import { type Obj } from '../api/object-util.js';
import { servedJsonFor } from '../conversion/version-conversion.js';
import { needsWebhookConversion, servedJsonForAsync, untilConverted } from '../conversion/converting-io.js';
import type { Representation } from '../codec/negotiation.js';
import { cachedStoredMessage, encodeProtobufStoredWatchFrame, encodeProtobufWatchFrame, forgetStoredObject } from '../codec/protobuf/protobuf-codec.js';
import { withResourceVersion } from '../codec/protobuf/version-splice.js';
import { encodeCborWatchEvent } from '../codec/cbor/cbor-encoder.js';
import { encodeCborDocument, encodeCborJson } from '../codec/cbor/cbor-response.js';
import { toPartialObjectMetadata, toTable } from '../codec/representations.js';
import { type TablePrinter } from '../codec/table-printer.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import { RecentEventCache } from '../storage/recent-event-cache.js';
import { eventDecodes, parsedIfRecent, parsedObjects, RECENT_CHANGES } from '../storage/parsed-changes.js';

/**
 * Watch event frames: JSON lines (`{"type":...,"object":...}\n`), length-delimited Protobuf
 * `WatchEvent` frames, or items of a CBOR sequence (`application/cbor-seq`). Each change is encoded once per (event type, apiVersion, representation,
 * encoding) and the bytes (one Buffer) are shared across all watchers; each change's objects are parsed once for
 * selector matching and frames, while the change is recent (storage/parsed-changes.ts). Custom resources are served with the
 * read defaults and conversion webhooks of the serving catalogue's CustomResourceFacts, passed in.
 */
type FramesByType = Partial<Record<WatchEventType, string | Buffer>>;
/**
 * Frames are kept for as many recent changes as the parsed objects (RECENT_CHANGES, see RecentEventCache
 * and storage/parsed-changes.ts): enough for every watcher to share them at fan-out, even at thousands of writes
 * per second with deferred flushes, without holding them for the whole history window.
 */
const frameCache = new RecentEventCache<Map<string, FramesByType>>(RECENT_CHANGES);

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** How a watch's events are written. */
export interface WatchEncoding {
  representation: Representation;
  protobuf: boolean;
  /** Items of an `application/cbor-seq` stream (CBORServingAndStorage). */
  cbor?: boolean;
  /** Tables after a watch's first one omit their column definitions, as kube sends them. */
  noHeaders?: boolean;
  /** The Table columns of the watched kind (undefined: Name and Created At). */
  printer?: TablePrinter;
}

export const JSON_OBJECTS: WatchEncoding = { representation: 'object', protobuf: false };

/** Identifies a watch's (apiVersion, encoding) pair; compute once per watch with `encodingKey`. */
export function encodingKey(apiVersion: string, encoding: WatchEncoding): string {
  const wire = encoding.protobuf ? 'pb' : encoding.cbor === true ? 'cbor' : 'json';
  return `${apiVersion} ${encoding.representation} ${wire}${encoding.noHeaders === true ? ' nh' : ''}`;
}

/**
 * The frame for `event` delivered as `type` at `apiVersion`; `key` is `encodingKey(apiVersion, encoding)`.
 * A DELETED event whose object does not decode (a corrupt object removed by an unsafe delete)
 * carries an object of `kind` naming only the object and the deletion's version.
 */
export function encodedEvent(
  facts: CustomResourceFacts,
  event: ChangeEvent,
  type: WatchEventType,
  kind: string,
  apiVersion: string,
  encoding: WatchEncoding,
  key: string,
): string | Buffer {
  let byKey = frameCache.get(event);
  if (!byKey) {
    byKey = new Map();
    frameCache.set(event, byKey);
  }
  let frames = byKey.get(key);
  if (!frames) {
    frames = {};
    byKey.set(key, frames);
  }
  let frame = frames[type];
  if (frame === undefined) {
    // A deletion whose removed object's message is known decodes (that object was parsed to be
    // encoded): it is neither parsed to tell nor encoded again.
    const known = type === 'DELETED' ? knownMessage(event, encoding) : undefined;
    const json = known === undefined && type === 'DELETED' && !eventDecodes(event) ? corruptTombstone(event, kind, apiVersion) : deliveredJson(event, type);
    // Protobuf, Table and metadata frames are built from the object: when a watch's selector had
    // it parsed already, that parse serves (not kept for this alone: parsed objects are large).
    const parsed = known === undefined && json === event.json ? parsedIfRecent(event) : undefined;
    const encoded = objectFrame(facts, type, json, apiVersion, encoding, parsed, json === event.json ? known : undefined);
    // Encoded to UTF-8 once here rather than by every watcher's socket write.
    frame = typeof encoded === 'string' ? Buffer.from(encoded) : encoded;
    frames[type] = frame;
    // A protobuf frame put the object's encoding in the LIST items' cache; the version this change
    // replaced or removed will not be listed again, nor will a deletion's own.
    if (encoding.protobuf && encoding.representation === 'object') {
      if (event.prevJson !== undefined) forgetStoredObject(apiVersion, kind, event.prevJson);
      if (event.type === 'DELETED') forgetStoredObject(apiVersion, kind, event.json);
    }
  }
  return frame;
}

/**
 * The whole protobuf message of a deletion's object, for a protobuf watch of full objects, when it
 * is known without encoding: the object is the removed one at the deletion's version, and a frame
 * or LIST encoded the removed one (its message is in the list items' cache). Undefined otherwise.
 */
function knownMessage(event: ChangeEvent, encoding: WatchEncoding): Buffer | undefined {
  if (!encoding.protobuf || encoding.representation !== 'object' || event.type !== 'DELETED' || event.prevJson === undefined) return undefined;
  const removed = cachedStoredMessage(event.prevJson);
  return removed === undefined ? undefined : withResourceVersion(removed, event.resourceVersion);
}

/** Each change's object converted by its CRD's webhook, per apiVersion: one ConversionReview per (event, version). */
const convertedCache = new WeakMap<ChangeEvent, Map<string, Promise<string>>>();

/**
 * The frame of `event` as `encodedEvent` gives it, or a promise of it when the object must first go
 * through its CRD's conversion webhook (converted once per change and version, shared by every
 * watcher, retried while the webhook fails); the promise rejects with the webhook's last ApiError
 * when it never recovers.
 */
export function encodedEventOrConversion(
  facts: CustomResourceFacts,
  event: ChangeEvent,
  type: WatchEventType,
  kind: string,
  apiVersion: string,
  encoding: WatchEncoding,
  key: string,
): string | Buffer | Promise<string | Buffer> {
  if (!needsWebhookConversion(facts, event.json, apiVersion) || !eventDecodes(event)) return encodedEvent(facts, event, type, kind, apiVersion, encoding, key);
  let byVersion = convertedCache.get(event);
  if (!byVersion) {
    byVersion = new Map();
    convertedCache.set(event, byVersion);
  }
  // An update delivered as DELETED carries the previous object: converted separately.
  const leaving = leftSelection(event, type);
  const cacheKey = leaving ? `${apiVersion} previous` : apiVersion;
  let converted = byVersion.get(cacheKey);
  if (converted === undefined) {
    const json = deliveredJson(event, type);
    converted = untilConverted(() => servedJsonForAsync(facts, json, apiVersion, 'object'));
    // Kept even when it fails for good: every watcher of this version gets the same ERROR.
    converted.catch(() => undefined);
    byVersion.set(cacheKey, converted);
  }
  return converted.then((json) => objectFrame(facts, type, json, apiVersion, encoding));
}

/** Whether a watch delivers the update `event` as DELETED: its object left the watch's selection. */
function leftSelection(event: ChangeEvent, type: WatchEventType): boolean {
  return type === 'DELETED' && event.type === 'MODIFIED' && event.prevJson !== undefined;
}

/**
 * The object a watch delivers for `event` as `type`. For an object that left the watch's
 * selection (an update delivered as DELETED), kube's cacher sends the object as it was before the
 * update, which the watcher last saw matching, with the update's resourceVersion; otherwise the
 * change's object.
 */
function deliveredJson(event: ChangeEvent, type: WatchEventType): string {
  if (!leftSelection(event, type) || event.prevJson === undefined) return event.json;
  const { previous } = parsedObjects(event);
  if (previous === undefined) return event.json;
  return JSON.stringify({ ...previous, metadata: { ...(previous.metadata as Obj), resourceVersion: event.resourceVersion } });
}

/** The object of a DELETED event whose stored bytes do not decode: kind, apiVersion, name, namespace, version. */
function corruptTombstone(event: ChangeEvent, kind: string, apiVersion: string): string {
  const slash = event.key.indexOf('/');
  const metadata =
    slash < 0
      ? { name: event.key, resourceVersion: event.resourceVersion }
      : { name: event.key.slice(slash + 1), namespace: event.key.slice(0, slash), resourceVersion: event.resourceVersion };
  return JSON.stringify({ kind, apiVersion, metadata });
}

function frame(type: string, object: Obj, encoding: WatchEncoding): string | Buffer {
  if (encoding.cbor === true) return encodeCborWatchEvent(type, encodeCborDocument(object));
  return encoding.protobuf ? encodeProtobufWatchFrame(type, object) : `${JSON.stringify({ type, object })}\n`;
}

/** `objectFrame`, after the object went through its CRD's conversion webhook when it needs to. */
export function objectFrameOrConversion(
  facts: CustomResourceFacts,
  type: WatchEventType,
  json: string,
  apiVersion: string,
  encoding: WatchEncoding,
): string | Buffer | Promise<string | Buffer> {
  if (!needsWebhookConversion(facts, json, apiVersion)) return objectFrame(facts, type, json, apiVersion, encoding);
  return servedJsonForAsync(facts, json, apiVersion, 'object').then((converted) => objectFrame(facts, type, converted, apiVersion, encoding));
}

/**
 * A frame for one object (synthetic ADDED of initial state, or a change) in the watch's encoding.
 * `parsed`, when given, is what `json` decodes to (shared, so never mutated here): used instead of
 * parsing again when the object is served as stored. `message`, when given, is the whole protobuf
 * message of `json`: a protobuf frame of the object as stored is built from it without parsing.
 */
export function objectFrame(
  facts: CustomResourceFacts,
  type: WatchEventType,
  json: string,
  apiVersion: string,
  encoding: WatchEncoding = JSON_OBJECTS,
  parsed?: Obj,
  message?: Buffer,
): string | Buffer {
  const objectJson = servedJsonFor(facts, json, apiVersion, encoding.representation);
  if (encoding.representation === 'object' && encoding.cbor === true) return encodeCborWatchEvent(type, encodeCborJson(objectJson));
  if (encoding.representation === 'object' && !encoding.protobuf) return `{"type":"${type}","object":${objectJson}}\n`;
  if (message !== undefined && encoding.representation === 'object' && objectJson === json) {
    const shipped = encodeProtobufStoredWatchFrame(type, json, message);
    if (shipped !== undefined) return shipped;
  }
  const obj = parsed !== undefined && objectJson === json ? parsed : (JSON.parse(objectJson) as Obj);
  // Protobuf (JSON and CBOR objects went out above): the object's message is shared with protobuf
  // LISTs of the same text (see encodeProtobufWatchFrame).
  if (encoding.representation === 'object') return encodeProtobufWatchFrame(type, obj, objectJson);
  const meta = (typeof obj.metadata === 'object' && obj.metadata !== null ? obj.metadata : {}) as Obj;
  const out =
    encoding.representation === 'Table'
      ? toTable([obj], { resourceVersion: meta.resourceVersion ?? '' }, 'Metadata', encoding.printer, { noHeaders: encoding.noHeaders === true })
      : toPartialObjectMetadata(obj);
  return frame(type, out, encoding);
}

/**
 * A BOOKMARK: only kind, apiVersion and metadata.resourceVersion (plus annotations when given),
 * transformed as kube transforms every event of the watch: a PartialObjectMetadata in a metadata
 * watch (metadata informers, such as kube-controller-manager's garbage collector and quota, decode
 * nothing else), a Table with one row in a Table watch.
 */
export function bookmarkFrame(
  kind: string,
  apiVersion: string,
  resourceVersion: string,
  encoding: WatchEncoding,
  annotations?: Record<string, string>,
): string | Buffer {
  const metadata: Obj = { resourceVersion };
  if (annotations) metadata.annotations = annotations;
  const obj: Obj = { kind, apiVersion, metadata };
  if (encoding.representation === 'PartialObjectMetadata') return frame('BOOKMARK', toPartialObjectMetadata(obj), encoding);
  if (encoding.representation === 'Table') {
    // kube prints the bookmark's empty object like any other: one row of the kind's columns.
    const table = toTable([obj], { resourceVersion }, 'Metadata', encoding.printer, { noHeaders: encoding.noHeaders === true });
    return frame('BOOKMARK', table, encoding);
  }
  return frame('BOOKMARK', obj, encoding);
}

/** An ERROR event carrying a Status. */
export function errorFrame(status: Obj, encoding: WatchEncoding): string | Buffer {
  return frame('ERROR', status, encoding);
}
