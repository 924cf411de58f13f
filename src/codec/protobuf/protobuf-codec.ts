import { ApiError, badRequest } from '../../api/errors.js';
import { hasMagic, PROTOBUF_MAGIC, unwrapEnvelope } from './envelope.js';
import { compileMessage, writeMessage, type CompiledMessage } from './message-encoder.js';
import { WireWriter, varintSize } from './wire-writer.js';
import { BytePieces } from './byte-pieces.js';
import { encodedItemsFor, forgetItem, type EncodedItems } from './encoded-items.js';
import { messageNameForKind } from './kind-messages.js';
import { planFor, type MessagePlan } from './message-plan.js';
import { ProtobufUnsupportedError } from './protobuf-errors.js';
import { messageToJson, setEmbeddedDecoder } from './proto-to-json.js';
import { fullName, lookupMessage, protobufModule, requireMessage } from './proto-runtime.js';
import type protobuf from 'protobufjs';
import type { Obj } from '../../api/object-util.js';
import { isObject } from '../../api/values.js';

export { ProtobufUnsupportedError } from './protobuf-errors.js';

/**
 * The Kubernetes protobuf codec (`application/vnd.kubernetes.protobuf`) for every built-in type:
 * converts between kube's JSON objects, which the server stores and handles, and the wire form
 * (magic prefix + `runtime.Unknown` envelope + the type's generated.proto message).
 *
 * Driven by schema/protobuf.json and schema/openapi-v2.json, loaded on first use; per-type conversion
 * plans are cached. Decoding mimics Go's JSON output (zero values of optional non-pointer fields are
 * dropped, kind and apiVersion restored from the envelope); encoding writes what the JSON holds.
 * int64 values are JSON numbers: exact up to 2^53.
 */

/** Media type of protobuf bodies and responses. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** The result of decoding a protobuf body. */
export interface DecodedProtobufObject {
  apiVersion: string;
  kind: string;
  /** The object in kube's JSON form, `kind` and `apiVersion` included. */
  object: Obj;
}

/** What the caller expects (the endpoint's kind): defaults an empty envelope type and shapes error messages. */
export interface ProtobufDecodeExpectation {
  apiVersion?: string;
  kind?: string;
}

const WATCH_EVENT = 'k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent';

function summarize(data: Uint8Array): string {
  if (data.length === 0) return '<empty>';
  const head = Buffer.from(data.buffer, data.byteOffset, Math.min(data.length, 30));
  const text = data[0] === 0x7b ? head.toString('utf8') : head.toString('hex');
  return data.length > 30 ? `${text} ...` : text;
}

function versionOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
}

/** kube-apiserver's wording for a body that could not be decoded (handlers' transformDecodeError). */
function decodeError(base: string, body: Uint8Array, expected: ProtobufDecodeExpectation | undefined, kind = '', apiVersion = ''): ApiError {
  if (expected?.kind === undefined) return badRequest(base);
  if (kind !== '') return badRequest(`${kind} in version "${versionOf(apiVersion)}" cannot be handled as a ${expected.kind}: ${base}`);
  return badRequest(`the object provided is unrecognized (must be of type ${expected.kind}): ${base} (${summarize(body)})`);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Decodes a protobuf request body into kube's JSON form.
 * Throws ApiError 400 (BadRequest) for a missing or wrong magic prefix, an envelope without kind or
 * apiVersion, a kind without a protobuf message, or malformed bytes; never any other error.
 */
export function decodeProtobufObject(body: Uint8Array, expected?: ProtobufDecodeExpectation): DecodedProtobufObject {
  if (body.length === 0) throw decodeError('empty data', body, expected);
  if (!hasMagic(body)) {
    throw decodeError('provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]', body, expected);
  }
  if (body.length === 4) throw decodeError('empty body', body, expected);
  let apiVersion = '';
  let kind = '';
  try {
    const env = unwrapEnvelope(body);
    apiVersion = env.apiVersion;
    kind = env.kind;
    if (kind === '') kind = expected?.kind ?? '';
    if (apiVersion === '') apiVersion = expected?.apiVersion ?? '';
    const typeMeta = `runtime.TypeMeta{APIVersion:"${env.apiVersion}", Kind:"${env.kind}"}`;
    if (kind === '') throw decodeError(`Object 'Kind' is missing in '${typeMeta}'`, body, expected);
    if (apiVersion === '') throw decodeError(`Object 'apiVersion' is missing in '${typeMeta}'`, body, expected);
    const compiled = compiledKinds.get(apiVersion)?.get(kind) ?? (hasProtobufMessage(apiVersion, kind) ? compiledFor(apiVersion, kind) : undefined);
    if (compiled === undefined) {
      throw decodeError(
        `no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/api/legacyscheme/scheme.go:30"`,
        body,
        expected,
        kind,
        apiVersion,
      );
    }
    const object: Obj = { kind, apiVersion };
    messageToJson(compiled.plan, env.raw, object);
    return { apiVersion, kind, object };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw decodeError(`proto: ${errorText(err)}`, body, expected, kind, apiVersion);
  }
}

setEmbeddedDecoder((bytes) => decodeProtobufObject(bytes).object);

/** True when APIVERSION/KIND has a protobuf message (built-in types; not custom resources or Table). */
export function hasProtobufMessage(apiVersion: string, kind: string): boolean {
  return messageNameForKind(apiVersion, kind) !== undefined;
}

/** What encoding an apiVersion and kind needs: its message type, compiled plan and encoded-item cache. */
interface CompiledKind {
  type: protobuf.Type;
  /** Its conversion plan (decoding reads by it). */
  plan: MessagePlan;
  message: CompiledMessage;
  /** The cache of whole items of this message (see encoded-items.ts). */
  items: EncodedItems;
}

/** CompiledKind by apiVersion, then kind: only kinds with a message, so bounded by the descriptor. */
const compiledKinds = new Map<string, Map<string, CompiledKind>>();

/** The compiled encoder of APIVERSION/KIND's message; ProtobufUnsupportedError when it has none. */
function compiledFor(apiVersion: string, kind: string): CompiledKind {
  let byKind = compiledKinds.get(apiVersion);
  const known = byKind?.get(kind);
  if (known !== undefined) return known;
  const name = messageNameForKind(apiVersion, kind);
  const type = name === undefined ? undefined : lookupMessage(name);
  if (type === undefined) throw new ProtobufUnsupportedError(apiVersion, kind);
  const plan = planFor(type);
  const compiled = { type, plan, message: compileMessage(plan), items: encodedItemsFor(fullName(type), '') };
  if (byKind === undefined) {
    byKind = new Map();
    compiledKinds.set(apiVersion, byKind);
  }
  byKind.set(kind, compiled);
  return compiled;
}

function typeOf(obj: Obj): { apiVersion: string; kind: string } {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  return { apiVersion, kind };
}

/** Magic prefix and the start of the `Unknown` envelope: typeMeta, then the tag of `raw` (its length follows). */
function writeEnvelopeHead(w: WireWriter, apiVersion: string, kind: string): void {
  w.raw(PROTOBUF_MAGIC);
  w.byte(0x0a);
  const typeMeta = w.begin();
  w.byte(0x0a);
  w.string(apiVersion);
  w.byte(0x12);
  w.string(kind);
  w.end(typeMeta);
  w.byte(0x12);
}

/** The envelope's empty contentEncoding and contentType, which Go's serializer writes too. */
const ENVELOPE_TAIL = Uint8Array.from([0x1a, 0x00, 0x22, 0x00]);

/** Writes OBJ's protobuf body (magic prefix + Unknown envelope around its message). */
function writeObjectBody(w: WireWriter, obj: Obj): void {
  const { apiVersion, kind } = typeOf(obj);
  const { message } = compiledFor(apiVersion, kind);
  writeEnvelopeHead(w, apiVersion, kind);
  const raw = w.begin();
  writeMessage(w, message, obj);
  w.end(raw);
  w.raw(ENVELOPE_TAIL);
}

/**
 * `writeObjectBody` for an object parsed from `json` (its text as a LIST serves it): the message is
 * the one a list item of that text has, so it is copied from the list items' cache when a LIST (or
 * an earlier frame) encoded it, and put there when not. A watch of a changed object thus also
 * encodes it for the next protobuf LIST, and a DELETED or initial event of a listed object is not
 * encoded again.
 */
function writeStoredObjectBody(w: WireWriter, obj: Obj, json: string): void {
  const { apiVersion, kind } = typeOf(obj);
  const { message, items: cache } = compiledFor(apiVersion, kind);
  writeEnvelopeHead(w, apiVersion, kind);
  const hit = cache.get(json);
  if (hit !== undefined) w.bytes(hit);
  else {
    const raw = w.begin();
    writeMessage(w, message, obj);
    cache.set(json, w.copyFrom(raw + 1));
    w.end(raw);
  }
  w.raw(ENVELOPE_TAIL);
}

/**
 * Forgets the cached encodings of `json`, a version of an `apiVersion`/`kind` object that no LIST
 * will serve again (it was replaced or deleted), so that watched changes do not fill the cache with
 * dead versions. Kinds without a protobuf message have none.
 */
export function forgetStoredObject(apiVersion: string, kind: string, json: string): void {
  const name = messageNameForKind(apiVersion, kind);
  const type = name === undefined ? undefined : lookupMessage(name);
  if (type !== undefined) forgetItem(fullName(type), json);
}

/** One writer reused by the single-object encoders (all synchronous); its buffer grows to the largest object. */
const scratch = new WireWriter(16 * 1024);

/**
 * The protobuf body of OBJ (magic prefix + Unknown envelope), typed by its own apiVersion and kind.
 * Throws ProtobufUnsupportedError when that kind has no message (custom resources).
 */
export function encodeProtobufObject(obj: Record<string, unknown>): Buffer {
  scratch.reset();
  writeObjectBody(scratch, obj);
  return scratch.copy();
}

/** `{"kind":"K","apiVersion":"V"` (or the reverse) at the start of a stored object's text, without escapes. */
const STORED_TYPE_META = /^\{(?:"kind":"([^"\\]*)","apiVersion":"([^"\\]*)"|"apiVersion":"([^"\\]*)","kind":"([^"\\]*)")/;

/** The kind and apiVersion a stored object's text opens with; undefined when it opens otherwise. */
function storedTypeMeta(json: string): { apiVersion: string; kind: string } | undefined {
  const m = STORED_TYPE_META.exec(json);
  return m === null ? undefined : { kind: m[1] ?? m[4] ?? '', apiVersion: m[2] ?? m[3] ?? '' };
}

/**
 * `encodeProtobufObject` of the stored object whose JSON text is `json`, when that text's message is
 * already in the list items' cache (a watch frame or a LIST encoded it); undefined otherwise, and
 * for kinds without a message. A write's watch event is encoded before its response is written, so
 * the response of a client-go write reuses that encoding rather than parsing and encoding again.
 * Never adds to the cache: a response alone would leave dead versions there.
 */
export function cachedProtobufObject(json: string): Buffer | undefined {
  const meta = storedTypeMeta(json);
  if (meta === undefined) return undefined;
  const { apiVersion, kind } = meta;
  // Only kinds something has encoded already can have entries.
  const hit = compiledKinds.get(apiVersion)?.get(kind)?.items.get(json);
  if (hit === undefined) return undefined;
  scratch.reset();
  writeEnvelopeHead(scratch, apiVersion, kind);
  scratch.bytes(hit);
  scratch.raw(ENVELOPE_TAIL);
  return scratch.copy();
}

/**
 * The message of the stored object whose JSON text is `json` when the list items' cache holds it (a
 * watch frame or a LIST encoded it); undefined otherwise. Never adds to the cache.
 */
export function cachedStoredMessage(json: string): Buffer | undefined {
  const meta = storedTypeMeta(json);
  return meta === undefined ? undefined : compiledKinds.get(meta.apiVersion)?.get(meta.kind)?.items.get(json);
}

/**
 * The protobuf body of a list: LIST_KIND (e.g. "ConfigMapList") in APIVERSION with ListMeta
 * LIST_METADATA and ITEMS (their kind/apiVersion are not part of the wire form).
 * Throws ProtobufUnsupportedError when the list kind has no message.
 */
export function encodeProtobufList(listKind: string, apiVersion: string, listMetadata: Record<string, unknown>, items: Record<string, unknown>[]): Buffer {
  const e = new ProtobufListEncoder(listKind, apiVersion, listMetadata);
  for (const item of items) e.add(item);
  return Buffer.concat([...e.chunks()]);
}

/** Writer of the items that `ProtobufListEncoder` encodes (it copies each out before the next). */
const itemWriter = new WireWriter(64 * 1024);

/** The message bytes of one list item (no tag, no length). */
function encodeItem(message: CompiledMessage, obj: Obj): Buffer {
  itemWriter.reset();
  writeMessage(itemWriter, message, obj);
  return itemWriter.copy();
}

/** Pieces of a large protobuf list body (see `ProtobufListEncoder.chunks`). */
export const LIST_PIECE_BYTES = 256 * 1024;

/**
 * A protobuf list body gathered one item at a time, straight from each item's JSON form. The
 * envelope states the list's length before its items, so items are kept until `chunks`: as
 * references to the encoded-item cache's bytes where it had them (`addStored`), and as their own
 * message bytes otherwise. `chunks` then copies them into pieces of about `LIST_PIECE_BYTES`, one
 * at a time, so a large list is never held as one body. Throws ProtobufUnsupportedError when the
 * list kind has no message.
 */
export class ProtobufListEncoder {
  /** The list message's fields before its items (its ListMeta). */
  private readonly head: Buffer;
  private readonly itemTag: number;
  private readonly item: CompiledMessage;
  private readonly itemMessage: string;
  private readonly items: Buffer[] = [];
  /** Bytes of the list message: `head` and every item with its tag and length. */
  private size: number;
  private fullCache: EncodedItems | undefined;

  constructor(
    private readonly listKind: string,
    private readonly apiVersion: string,
    listMetadata: Record<string, unknown>,
  ) {
    const { type, message } = compiledFor(apiVersion, listKind);
    const items = type.fields.items;
    const itemType = items?.resolvedType;
    if (items === undefined || !items.repeated || !(itemType instanceof protobufModule().Type)) throw new ProtobufUnsupportedError(apiVersion, listKind);
    this.itemTag = ((items.id << 3) | 2) >>> 0;
    this.item = compileMessage(planFor(itemType));
    this.itemMessage = fullName(itemType);
    const w = new WireWriter(256);
    writeMessage(w, message, { metadata: listMetadata });
    this.head = w.copy();
    this.size = this.head.length;
  }

  /** Adds one item (kube's JSON form); items that are not objects are skipped, as the whole-list encoder skips them. */
  add(item: Record<string, unknown>): void {
    if (isObject(item)) this.push(encodeItem(this.item, item));
  }

  /**
   * Adds one item from its stored JSON text, seen through VIEW when given (e.g. its
   * PartialObjectMetadata); items met before (the same text, item message and view) are taken from
   * the encoded-item cache instead of being parsed and encoded again.
   */
  addStored(json: string, view?: ItemView): void {
    const cache = view === undefined ? (this.fullCache ??= encodedItemsFor(this.itemMessage, '')) : encodedItemsFor(this.itemMessage, view.name);
    const hit = cache.get(json);
    if (hit !== undefined) {
      this.push(hit);
      return;
    }
    const obj = JSON.parse(json) as Obj;
    const value = view === undefined ? obj : view.project(obj);
    if (!isObject(value)) return;
    const bytes = encodeItem(this.item, value);
    cache.set(json, bytes);
    this.push(bytes);
  }

  private push(bytes: Buffer): void {
    this.items.push(bytes);
    this.size += varintSize(this.itemTag) + varintSize(bytes.length) + bytes.length;
  }

  /**
   * The body (magic prefix, Unknown envelope around the list message) in pieces of about
   * `pieceBytes`, each copied when the one before it has been taken; the encoder is spent.
   */
  *chunks(pieceBytes = LIST_PIECE_BYTES): Generator<Buffer> {
    const lead = new WireWriter(256);
    writeEnvelopeHead(lead, this.apiVersion, this.listKind);
    lead.uint32(this.size);
    lead.raw(this.head);
    const leadBytes = lead.copy();
    const out = new BytePieces(pieceBytes, leadBytes.length + this.size - this.head.length + ENVELOPE_TAIL.length);
    out.put(leadBytes);
    const tag = this.itemTag;
    for (const item of this.items) {
      out.varint(tag);
      out.varint(item.length);
      out.put(item);
      if (out.hasPieces) yield* out.take();
    }
    out.put(ENVELOPE_TAIL);
    yield* out.finish();
  }
}

/** A projection of list items (kube's JSON form to the JSON form sent), named for the item cache. */
export interface ItemView {
  name: string;
  project: (obj: Obj) => Obj;
}

/**
 * One frame of a protobuf watch stream: 4-byte big-endian length + `meta.v1.WatchEvent` {type, object}
 * where object.raw is OBJ's full protobuf body (magic prefix + envelope), as kube-apiserver writes it.
 * Throws ProtobufUnsupportedError when OBJ's kind has no message.
 */
export function encodeProtobufWatchFrame(type: string, obj: Record<string, unknown>, sourceJson?: string): Buffer {
  return writeWatchFrame(type, (w) => {
    if (sourceJson === undefined) writeObjectBody(w, obj);
    else writeStoredObjectBody(w, obj, sourceJson);
  });
}

/**
 * `encodeProtobufWatchFrame` of the stored object whose JSON text is `json`, given its whole message
 * (`message`, e.g. a deletion's: the removed object's message with the deletion's version): neither
 * parses nor encodes the object, and leaves the message in the list items' cache as an encoding
 * would. Undefined when the text does not open with the object's kind and apiVersion, or the kind
 * has no message.
 */
export function encodeProtobufStoredWatchFrame(type: string, json: string, message: Buffer): Buffer | undefined {
  const meta = storedTypeMeta(json);
  if (meta === undefined || messageNameForKind(meta.apiVersion, meta.kind) === undefined) return undefined;
  const { items: cache } = compiledFor(meta.apiVersion, meta.kind);
  const bytes = cache.get(json) ?? message;
  if (bytes === message) cache.set(json, message);
  return writeWatchFrame(type, (w) => {
    writeEnvelopeHead(w, meta.apiVersion, meta.kind);
    w.bytes(bytes);
    w.raw(ENVELOPE_TAIL);
  });
}

/** A watch frame of `type` whose object's body `writeBody` writes (see encodeProtobufWatchFrame). */
function writeWatchFrame(type: string, writeBody: (w: WireWriter) => void): Buffer {
  const w = scratch;
  w.reset();
  w.raw(FRAME_LENGTH_PLACEHOLDER);
  w.byte(0x0a);
  w.string(type);
  w.byte(0x12);
  const object = w.begin();
  w.byte(0x0a);
  const raw = w.begin();
  writeBody(w);
  w.end(raw);
  w.end(object);
  const frame = w.copy();
  frame.writeUInt32BE(frame.length - 4, 0);
  return frame;
}

const FRAME_LENGTH_PLACEHOLDER = new Uint8Array(4);

/** Decodes one watch frame (without its length prefix) into the event type and the object's JSON form. */
export function decodeProtobufWatchEvent(frame: Uint8Array): { type: string; object: Obj } {
  let msg: Obj;
  try {
    msg = requireMessage(WATCH_EVENT).decode(frame);
  } catch (err) {
    throw badRequest(`proto: ${errorText(err)}`);
  }
  const type = typeof msg.type === 'string' ? msg.type : '';
  const object = msg.object as { raw?: unknown } | undefined;
  const raw = object?.raw instanceof Uint8Array ? object.raw : new Uint8Array(0);
  return { type, object: decodeProtobufObject(raw).object };
}
