import type { Response } from 'express';
import { objectWithoutTypeMeta, typeMetaEnd, withoutTypeMeta } from './untyped-list-items.js';
import { Utf8Pieces } from './utf8-pieces.js';
import { asApiError, WriteTimeoutError, type ApiError } from '../api/errors.js';
import { RouteNotAcceptableError, type OutputFormat } from './negotiation.js';
import { encodeCborDocument, encodeCborJson, writeCborList } from './cbor/cbor-response.js';
import { parseAccept } from './media-type.js';
import { tableParts, toPartialObjectMetadata, toTable, type IncludeObject } from './representations.js';
import { cachedProtobufObject, encodeProtobufObject, ProtobufListEncoder, ProtobufUnsupportedError, type ItemView } from './protobuf/protobuf-codec.js';
import { toYaml, yamlPieces } from './yaml-writer.js';
import { recorderOf } from './exchange-recorder.js';
import { BODY_CHUNK_BYTES, ITEMS_PER_TURN, Pacer } from './paced-writes.js';
import { writeJsonArrayBody, type JsonArrayBody } from './json-array-body.js';
import type { Obj } from '../api/object-util.js';

/** Sends `value` as Protobuf; false (nothing sent) when its kind has no protobuf message. */
function sendProtobuf(res: Response, format: OutputFormat, encode: () => Buffer): boolean {
  let bytes: Buffer;
  try {
    bytes = encode();
  } catch (err) {
    if (err instanceof ProtobufUnsupportedError) return false;
    throw err;
  }
  res.setHeader('Content-Type', format.contentType);
  res.end(bytes);
  return true;
}

function asJson(format: OutputFormat): OutputFormat {
  const contentType =
    format.representation === 'object' ? 'application/json' : format.contentType.replace('application/vnd.kubernetes.protobuf', 'application/json');
  return { ...format, encoding: 'json', contentType };
}

/** Serialises a value in the negotiated encoding. */
function encode(value: unknown, format: OutputFormat): string {
  if (format.encoding === 'yaml') return toYaml(value);
  return format.pretty ? `${JSON.stringify(value, null, 2)}\n` : `${JSON.stringify(value)}\n`;
}

/**
 * Writes one object. `json` is the stored JSON text (sent as is for plain JSON, so the common path
 * never re-serialises) or an already-built value.
 */
export function writeObject(res: Response, status: number, json: string | Obj, format: OutputFormat, includeObject: IncludeObject = 'Metadata'): void {
  if (recorderOf(res) !== undefined) auditObject(res, json);
  res.status(status);
  res.setHeader('Content-Type', format.contentType);
  if (format.representation === 'object' && format.encoding === 'json' && !format.pretty && typeof json === 'string') {
    res.end(`${json}\n`);
    return;
  }
  if (format.encoding === 'cbor') {
    if (format.representation === 'object') res.end(typeof json === 'string' ? encodeCborJson(json) : encodeCborDocument(json));
    else res.end(encodeCborDocument(toPartialObjectMetadata(typeof json === 'string' ? (JSON.parse(json) as Obj) : json)));
    return;
  }
  if (format.encoding === 'protobuf' && format.representation === 'object' && typeof json === 'string') {
    const cached = cachedProtobufObject(json);
    if (cached !== undefined) {
      res.end(cached);
      return;
    }
  }
  const obj = typeof json === 'string' ? (JSON.parse(json) as Obj) : json;
  if (format.encoding === 'protobuf') {
    const value = format.representation === 'PartialObjectMetadata' ? toPartialObjectMetadata(obj) : obj;
    if (sendProtobuf(res, format, () => encodeProtobufObject(value))) return;
    format = asJson(format);
    res.setHeader('Content-Type', format.contentType);
  }
  let out: unknown = obj;
  if (format.representation === 'PartialObjectMetadata') out = toPartialObjectMetadata(obj);
  else if (format.representation === 'Table') {
    const meta = (obj.metadata ?? {}) as Obj;
    out = toTable([obj], { resourceVersion: meta.resourceVersion ?? '' }, includeObject, format.printer);
  }
  res.end(encode(out, format));
}

/** Notes a response object for the request's audit event (a Status also as the event's responseStatus). */
function auditObject(res: Response, json: string | Obj): void {
  const read = (): Obj => (typeof json === 'string' ? (JSON.parse(json) as Obj) : json);
  const isStatus = typeof json === 'string' ? json.startsWith('{"kind":"Status"') : json.kind === 'Status';
  recorderOf(res)?.noteResponse(isStatus ? read() : undefined, read);
}

/**
 * A list as kube's audit log records it: items of built-in kinds without their kind and apiVersion
 * (Go's typed lists carry none), custom resources' items as stored.
 */
function auditedList(envelope: ListEnvelope, items: string[]): Obj {
  const objects = items.map((i) => {
    const o = JSON.parse(i) as Obj;
    return envelope.typedItems === true ? o : objectWithoutTypeMeta(o);
  });
  return { kind: envelope.kind, apiVersion: envelope.apiVersion, metadata: envelope.metadata, items: objects };
}

const METADATA_VIEW: ItemView = { name: 'PartialObjectMetadata', project: toPartialObjectMetadata };

/**
 * Writes a protobuf list item by item (see ProtobufListEncoder): each stored item is parsed and
 * encoded in turn (or taken from the encoded-item cache), `pacer` giving the event loop its turns,
 * then the body is copied and sent a piece at a time (see paced-writes.ts). False (nothing sent)
 * when the list kind has no protobuf message.
 */
async function writeProtobufList(res: Response, envelope: ListEnvelope, items: string[], format: OutputFormat, pacer: Pacer): Promise<boolean> {
  const metadataOnly = format.representation === 'PartialObjectMetadataList';
  let encoder: ProtobufListEncoder;
  try {
    encoder = metadataOnly
      ? new ProtobufListEncoder('PartialObjectMetadataList', 'meta.k8s.io/v1', envelope.metadata)
      : new ProtobufListEncoder(envelope.kind, envelope.apiVersion, envelope.metadata);
  } catch (err) {
    if (err instanceof ProtobufUnsupportedError) return false;
    throw err;
  }
  const view = metadataOnly ? METADATA_VIEW : undefined;
  for (let i = 0; i < items.length; i++) {
    await pacer.turnAt(i);
    encoder.addStored(items[i], view);
  }
  res.setHeader('Content-Type', format.contentType);
  // Each piece is written once the next exists, and the last one ends the response: a list of one
  // piece is one write.
  let previous: Buffer | undefined;
  for (const piece of encoder.chunks()) {
    if (previous !== undefined && !(await pacer.write(res, previous))) return true;
    previous = piece;
  }
  res.end(previous);
  return true;
}

export interface ListEnvelope {
  kind: string;
  apiVersion: string;
  metadata: Obj;
  /** Items keep their `kind` and `apiVersion` (custom resources); built-in types' items are written without. */
  typedItems?: boolean;
}

/**
 * Writes a collection. Plain JSON is streamed in pieces from the stored JSON texts; every other
 * form is built item by item; large bodies are written in pieces with the event loop served between
 * them (see paced-writes.ts), so memory per request stays bounded by one piece and other requests
 * are answered meanwhile, whatever the collection size.
 */
export async function writeList(
  res: Response,
  envelope: ListEnvelope,
  items: string[],
  format: OutputFormat,
  includeObject: IncludeObject = 'Metadata',
): Promise<void> {
  recorderOf(res)?.noteResponse(undefined, () => auditedList(envelope, items));
  res.status(200);
  res.setHeader('Content-Type', format.contentType);
  const typed = envelope.typedItems === true;
  const pacer = new Pacer();
  if (format.representation === 'object' && format.encoding === 'json' && !format.pretty) {
    const head = `{"kind":${JSON.stringify(envelope.kind)},"apiVersion":${JSON.stringify(envelope.apiVersion)},"metadata":${JSON.stringify(envelope.metadata)},"items":[`;
    const body = new Utf8Pieces(BODY_CHUNK_BYTES);
    body.append(head);
    for (let i = 0; i < items.length; i++) {
      if (i > 0) body.append(',');
      appendListItem(body, items[i], typed);
      if (body.length >= BODY_CHUNK_BYTES) {
        if (!(await pacer.write(res, body.take()))) return;
      }
    }
    body.append(']}\n');
    res.end(body.take());
    return;
  }
  if (format.encoding === 'cbor') {
    const { kind, apiVersion, metadata } = envelope;
    await writeCborList(
      res,
      { kind, apiVersion, metadata },
      items,
      format.representation === 'PartialObjectMetadataList',
      (piece) => pacer.write(res, piece),
      typed,
    );
    return;
  }
  if (format.encoding === 'protobuf') {
    if (await writeProtobufList(res, envelope, items, format, pacer)) return;
    format = asJson(format);
    res.setHeader('Content-Type', format.contentType);
  }
  const objects = await pacer.map(items, (i) => JSON.parse(i) as Obj);
  let body: JsonArrayBody;
  if (format.representation === 'Table') {
    const table = tableParts(objects, envelope.metadata, includeObject, format.printer);
    body = { head: table.head, key: 'rows', count: table.ordered.length, element: (i) => table.row(table.ordered[i]), pretty: format.pretty };
  } else if (format.representation === 'PartialObjectMetadataList') {
    const head = { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: envelope.metadata };
    body = { head, key: 'items', count: objects.length, element: (i) => toPartialObjectMetadata(objects[i]), pretty: format.pretty };
  } else {
    const head = { kind: envelope.kind, apiVersion: envelope.apiVersion, metadata: envelope.metadata };
    body = { head, key: 'items', count: objects.length, element: (i) => (typed ? objects[i] : objectWithoutTypeMeta(objects[i])), pretty: format.pretty };
  }
  if (format.encoding === 'yaml') await writeYamlArrayBody(res, body, pacer);
  else await writeJsonArrayBody(res, body, pacer);
}

/** One item of a JSON list: stored text as it is, or without its type meta (a built-in type's item), sliced rather than copied. */
function appendListItem(body: Utf8Pieces, json: string, typed: boolean): void {
  const end = typed ? undefined : typeMetaEnd(json);
  if (end === undefined) body.append(typed ? json : withoutTypeMeta(json));
  else {
    body.append('{');
    body.append(json.slice(end));
  }
}

/** A list as YAML: short ones in one write, others in pieces (see paced-writes.ts). */
async function writeYamlArrayBody(res: Response, body: JsonArrayBody, pacer: Pacer): Promise<void> {
  if (body.count <= ITEMS_PER_TURN) {
    const elements: unknown[] = [];
    for (let i = 0; i < body.count; i++) elements.push(body.element(i));
    res.end(toYaml({ ...body.head, [body.key]: elements }));
    return;
  }
  // Each piece is written when the next is made, so a body of one piece is still one write.
  let pending: string | undefined;
  for (const piece of yamlPieces(body.head, body.key, body.count, (i) => body.element(i), BODY_CHUNK_BYTES)) {
    if (pending !== undefined && !(await pacer.write(res, pending))) return;
    pending = piece;
  }
  res.end(pending);
}

/** Writes an error as a `Status` object with its headers; logs real server faults. */
export function writeError(res: Response, err: unknown): void {
  const apiError: ApiError = asApiError(err);
  if (apiError.code >= 500 && apiError.code !== 503 && apiError.code !== 504) {
    console.error(JSON.stringify({ level: 'error', msg: 'request failed', error: err instanceof Error ? err.stack : String(err) }));
  }
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [k, v] of Object.entries(apiError.headers)) res.setHeader(k, v);
  res.status(apiError.code);
  const status = apiError.toStatus() as unknown as Obj;
  recorderOf(res)?.noteResponse(status, () => status);
  if (apiError instanceof RouteNotAcceptableError) {
    // go-restful writes its 406 indented, without a trailing newline.
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(status, null, 2));
    return;
  }
  if (apiError instanceof WriteTimeoutError) {
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end(apiError.filterBody());
    return;
  }
  // A 406 is written as JSON: kube answers in the encoding it could not negotiate with its default.
  const cbor = apiError.code !== 406 && (res.locals as { cborServing?: boolean } | undefined)?.cborServing === true;
  const encoding = errorEncoding(res.req?.headers.accept, cbor);
  if (encoding === 'cbor') {
    res.setHeader('Content-Type', 'application/cbor');
    res.end(encodeCborDocument(status));
    return;
  }
  if (
    encoding === 'protobuf' &&
    sendProtobuf(res, { encoding, representation: 'object', contentType: PROTOBUF_TYPE, pretty: false }, () => encodeProtobufObject(status))
  )
    return;
  if (encoding === 'yaml') {
    res.setHeader('Content-Type', 'application/yaml');
    res.end(toYaml(status));
    return;
  }
  res.setHeader('Content-Type', 'application/json');
  res.end(`${JSON.stringify(status)}\n`);
}

const PROTOBUF_TYPE = 'application/vnd.kubernetes.protobuf';

/**
 * The encoding of an error `Status`, negotiated as kube-apiserver negotiates it: the client's most
 * preferred of JSON, YAML, Protobuf and (CBORServingAndStorage on) CBOR (representation parameters
 * such as `as=Table` ignored), JSON when it accepts none of them.
 */
function errorEncoding(accept: string | undefined, cbor: boolean): 'json' | 'yaml' | 'protobuf' | 'cbor' {
  for (const m of parseAccept(accept)) {
    if (m.type === 'application/json' || m.type === '*/*' || m.type === 'application/*') return 'json';
    if (m.type === 'application/yaml') return 'yaml';
    if (m.type === PROTOBUF_TYPE) return 'protobuf';
    if (m.type === 'application/cbor' && cbor) return 'cbor';
  }
  return 'json';
}
