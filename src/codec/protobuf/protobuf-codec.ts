import { ApiError, badRequest } from '../../api/errors.js';
import { hasMagic, lengthDelimited, PROTOBUF_MAGIC, unwrapEnvelope, wrapEnvelope } from './envelope.js';
import { jsonToMessage, valueToWire } from './json-to-proto.js';
import { messageNameForKind } from './kind-messages.js';
import { planFor } from './message-plan.js';
import { ProtobufUnsupportedError } from './protobuf-errors.js';
import { messageToJson, setEmbeddedDecoder } from './proto-to-json.js';
import { lookupMessage, protobufModule, requireMessage } from './proto-runtime.js';
import type protobuf from 'protobufjs';
import type { Obj } from '../../api/object-util.js';

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
    const name = messageNameForKind(apiVersion, kind);
    const type = name === undefined ? undefined : lookupMessage(name);
    if (type === undefined) {
      throw decodeError(
        `no kind "${kind}" is registered for version "${apiVersion}" in scheme "pkg/api/legacyscheme/scheme.go:30"`,
        body,
        expected,
        kind,
        apiVersion,
      );
    }
    const msg = type.decode(env.raw) as unknown as Obj;
    const object: Obj = { kind, apiVersion };
    messageToJson(planFor(type), msg, object);
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

/** The message bytes (no envelope) of OBJ as APIVERSION/KIND. */
function encodeMessage(apiVersion: string, kind: string, obj: Obj): Uint8Array {
  const name = messageNameForKind(apiVersion, kind);
  const type = name === undefined ? undefined : lookupMessage(name);
  if (type === undefined) throw new ProtobufUnsupportedError(apiVersion, kind);
  return type.encode(jsonToMessage(planFor(type), obj)).finish();
}

function typeOf(obj: Obj): { apiVersion: string; kind: string } {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  return { apiVersion, kind };
}

/**
 * The protobuf body of OBJ (magic prefix + Unknown envelope), typed by its own apiVersion and kind.
 * Throws ProtobufUnsupportedError when that kind has no message (custom resources).
 */
export function encodeProtobufObject(obj: Record<string, unknown>): Buffer {
  const { apiVersion, kind } = typeOf(obj);
  return wrapEnvelope(apiVersion, kind, encodeMessage(apiVersion, kind, obj));
}

/**
 * The protobuf body of a list: LIST_KIND (e.g. "ConfigMapList") in APIVERSION with ListMeta
 * LIST_METADATA and ITEMS (their kind/apiVersion are not part of the wire form).
 * Throws ProtobufUnsupportedError when the list kind has no message.
 */
export function encodeProtobufList(listKind: string, apiVersion: string, listMetadata: Record<string, unknown>, items: Record<string, unknown>[]): Buffer {
  return wrapEnvelope(apiVersion, listKind, encodeMessage(apiVersion, listKind, { metadata: listMetadata, items }));
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
  return Buffer.from(out);
}

/**
 * A protobuf list body encoded one item at a time: the same bytes as `encodeProtobufList` for the
 * parsed items, without holding every item's object (or its proto-shaped copy) at once. Each stored
 * item is parsed, converted and encoded in turn; only the encoded bytes are kept, because the
 * envelope states the list's length before its items. `chunks` yields the body in pieces of about
 * 64 KiB. Throws ProtobufUnsupportedError when the list kind has no message.
 */
export class ProtobufListEncoder {
  private readonly parts: Uint8Array[] = [];
  private size = 0;
  private readonly itemsField: ReturnType<typeof planFor>['fields'][number];
  private readonly itemType: protobuf.Type;

  constructor(
    private readonly listKind: string,
    private readonly apiVersion: string,
    listMetadata: Record<string, unknown>,
  ) {
    const name = messageNameForKind(apiVersion, listKind);
    const type = name === undefined ? undefined : lookupMessage(name);
    if (type === undefined) throw new ProtobufUnsupportedError(apiVersion, listKind);
    const plan = planFor(type);
    const items = plan.fields.find((f) => f.jsonName === 'items' && f.repeated);
    const itemType = type.fields.items?.resolvedType;
    if (items === undefined || !(itemType instanceof protobufModule().Type)) throw new ProtobufUnsupportedError(apiVersion, listKind);
    this.itemsField = items;
    this.itemType = itemType;
    this.push(type.encode(jsonToMessage(plan, { metadata: listMetadata })).finish());
  }

  private push(b: Uint8Array): void {
    this.parts.push(b);
    this.size += b.length;
  }

  /** Adds one item (kube's JSON form); items that are not objects are skipped, as the whole-list encoder skips them. */
  add(item: Record<string, unknown>): void {
    const msg = valueToWire(this.itemsField.value, item);
    if (msg === undefined) return;
    const bytes = this.itemType.encode(msg as Record<string, unknown>).finish();
    // Field 2 (items), wire type 2 (length-delimited); the parts are joined once, per chunk.
    this.push(itemHead(bytes.length));
    this.push(bytes);
  }

  /** The body (magic prefix, Unknown envelope around the list message) in pieces; the encoder is spent. */
  *chunks(): Generator<Buffer> {
    const unknown = requireMessage('k8s.io.apimachinery.pkg.runtime.Unknown');
    const typeMeta = unknown.encode({ typeMeta: { apiVersion: this.apiVersion, kind: this.listKind } }).finish();
    // Unknown fields in number order, as wrapEnvelope writes them: typeMeta, raw, then empty contentEncoding and contentType.
    let chunk: Uint8Array[] = [PROTOBUF_MAGIC, typeMeta, Buffer.from([0x12]), varint(this.size)];
    let chunkSize = 0;
    for (let i = 0; i < this.parts.length; i++) {
      chunk.push(this.parts[i]);
      chunkSize += this.parts[i].length;
      this.parts[i] = EMPTY;
      if (chunkSize >= 64 * 1024) {
        yield Buffer.concat(chunk);
        chunk = [];
        chunkSize = 0;
      }
    }
    chunk.push(Buffer.from([0x1a, 0x00, 0x22, 0x00]));
    yield Buffer.concat(chunk);
  }
}

const EMPTY = new Uint8Array(0);

/** The tag (field 2, length-delimited) and length of one list item. */
function itemHead(length: number): Buffer {
  const len = varint(length);
  const out = Buffer.allocUnsafe(len.length + 1);
  out[0] = 0x12;
  len.copy(out, 1);
  return out;
}

/**
 * One frame of a protobuf watch stream: 4-byte big-endian length + `meta.v1.WatchEvent` {type, object}
 * where object.raw is OBJ's full protobuf body (magic prefix + envelope), as kube-apiserver writes it.
 * Throws ProtobufUnsupportedError when OBJ's kind has no message.
 */
export function encodeProtobufWatchFrame(type: string, obj: Record<string, unknown>): Buffer {
  const raw = encodeProtobufObject(obj);
  const event = requireMessage(WATCH_EVENT).encode({ type, object: { raw } }).finish();
  return lengthDelimited(event);
}

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
