import type { Request } from 'express';
import { type ApiError, badRequest, tooLarge, unsupportedMediaType } from '../api/errors.js';
import { ForbiddenKeyError, JsonSyntaxError, readJson, type DuplicateField, type ParsedJson } from './json-text.js';
import { parseMediaType } from './media-type.js';
import { decodeProtobufObject, PROTOBUF_MEDIA_TYPE } from './protobuf/protobuf-codec.js';
import { DEFAULT_LIMITS, type Limits } from '../api/limits.js';
import { assertPlainJsonValue } from './value-limits.js';
import { readYaml, yamlBodyText, YamlDecodeError } from './yaml-text.js';
import { CborDecodeError, decodeCborDocument, unknownFieldFinding } from './cbor/cbor-decoder.js';
import { fieldKindsFor } from './cbor/field-kinds.js';
import { noteInt64Overflows } from './int64-overflow.js';
import { requestRecorderOf } from './exchange-recorder.js';

/** The CBOR media type, accepted for bodies with the CBORServingAndStorage gate on. */
export const CBOR_MEDIA_TYPE = 'application/cbor';

/**
 * The one decoder for request bodies: reads the bytes under the body size limit and turns them into a
 * JSON value by media type (JSON, YAML, Protobuf), enforcing the decode limits for every media type
 * (nesting depth, YAML alias expansion, forbidden keys) before any other work sees the value. Errors are
 * 400/413/415 `Status` answers worded as kube-apiserver words them.
 */

/** Media types accepted for create and update bodies of built-in types. */
export const BODY_MEDIA_TYPES = ['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE];

/**
 * Reads the whole request body, failing with 413 as soon as it exceeds `limit` bytes, so a huge body
 * never sits in memory. A request that ends early (the client went away) fails as a stream read by
 * `for await` would, with `ERR_STREAM_PREMATURE_CLOSE`. Listens for the stream's events itself: an
 * async iterator over the request cost a create about 10 µs more.
 */
export function readBody(req: Request, limit = DEFAULT_LIMITS.maxRequestBodyBytes): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge(`limit is ${limit}`));
  if (req.readableEnded) return Promise.resolve(noteBody(req, Buffer.alloc(0)));
  if (req.destroyed) return Promise.reject(prematureClose());
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer | string): void => {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      size += buf.length;
      if (size > limit) {
        stop();
        req.resume();
        reject(tooLarge(`limit is ${limit}`));
        return;
      }
      chunks.push(buf);
    };
    const onEnd = (): void => {
      stop();
      resolve(noteBody(req, Buffer.concat(chunks, size)));
    };
    const onError = (err: Error): void => {
      stop();
      reject(err);
    };
    const onClose = (): void => {
      stop();
      reject(prematureClose());
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function noteBody(req: Request, body: Buffer): Buffer {
  requestRecorderOf(req)?.noteBody(body);
  return body;
}

function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/**
 * Summarises a body for decode errors as kube's summarizeData does: `<empty>`, the first bytes of a
 * JSON object as text, anything else as hex, with " ..." when cut.
 */
export function summarizeBody(body: Buffer, max = 30): string {
  if (body.length === 0) return '<empty>';
  const head = body.subarray(0, max);
  const shown = body[0] === 0x7b ? head.toString('utf8') : head.toString('hex');
  return body.length > max ? `${shown} ...` : shown;
}

/** A decoded body and what strict field validation needs to know about how it was written. */
export interface DecodedBody {
  value: unknown;
  format: 'json' | 'yaml' | 'protobuf' | 'cbor';
  /** JSON bodies: keys repeated in one object, in document order. */
  jsonDuplicates: DuplicateField[];
  /** YAML bodies: repeated keys in go-yaml's strict wording (`line 5: key "x" already set in map`). */
  yamlDuplicates: string[];
  /**
   * JSON bodies: literal text of numbers JavaScript cannot hold as written; undefined when the body has
   * none (always for YAML and Protobuf), which lets typed decoding take its schema fast path.
   */
  numberLiteral: ((container: object, key: string | number) => string | undefined) | undefined;
  /** The body as text (JSON and YAML), for locating fields in rare strict-validation reports. */
  text: string;
  /** CBOR bodies: kube's strict-decoding finding for an unknown field at a path (see cbor-decoder.ts). */
  cborUnknownField?: (path: string) => string | undefined;
}

function literalLookup(parsed: ParsedJson): DecodedBody['numberLiteral'] {
  const table = parsed.numberLiterals;
  if (table === undefined) return undefined;
  noteInt64Overflows(table);
  return (container, key) => table.get(container)?.get(key);
}

function forbidden(err: ForbiddenKeyError): ApiError {
  return badRequest(err.message);
}

/**
 * Decodes JSON text with the decode limits: 400 with Go's syntax error in kube's "couldn't get
 * version/kind" wording for malformed input (as kube's first decoding step reports it).
 */
export function decodeJsonText(text: string, body: Buffer, intoKind: string, limits: Limits): ParsedJson {
  try {
    return readJson(text, { maxDepth: limits.maxNestingDepth });
  } catch (err) {
    if (err instanceof ForbiddenKeyError) throw forbidden(err);
    if (err instanceof JsonSyntaxError) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${intoKind}): couldn't get version/kind; json parse error: ${err.message} (${summarizeBody(body)})`,
      );
    }
    throw err;
  }
}

/**
 * Decodes a create/update body by its Content-Type (JSON when absent). `intoKind` names the
 * expected kind for error messages. Returns the parsed value (not yet checked to be an object).
 */
export function decodeBody(
  contentTypeHeader: string | undefined,
  body: Buffer,
  intoKind: string,
  accepted = BODY_MEDIA_TYPES,
  intoApiVersion?: string,
  limits: Limits = DEFAULT_LIMITS,
): DecodedBody {
  const type = contentTypeHeader ? parseMediaType(contentTypeHeader).type : 'application/json';
  if (type === PROTOBUF_MEDIA_TYPE && accepted.includes(PROTOBUF_MEDIA_TYPE)) {
    const value = decodeProtobufObject(body, { apiVersion: intoApiVersion, kind: intoKind }).object;
    try {
      assertPlainJsonValue(value, limits.maxNestingDepth);
    } catch (err) {
      if (err instanceof ForbiddenKeyError) throw forbidden(err);
      throw badRequest(`the object provided is unrecognized (must be of type ${intoKind}): ${err instanceof Error ? err.message : String(err)}`);
    }
    return { value, format: 'protobuf', jsonDuplicates: [], yamlDuplicates: [], numberLiteral: undefined, text: '' };
  }
  if (type === CBOR_MEDIA_TYPE && accepted.includes(CBOR_MEDIA_TYPE)) return decodeCborBody(body, intoKind, intoApiVersion, limits);
  if (type === 'application/json' || type === '*/*') {
    const text = body.toString('utf8');
    const parsed = decodeJsonText(text, body, intoKind, limits);
    return { value: parsed.value, format: 'json', jsonDuplicates: parsed.duplicates, yamlDuplicates: [], numberLiteral: literalLookup(parsed), text };
  }
  if (type === 'application/yaml' || type === 'text/yaml' || type === 'application/x-yaml') {
    let text = '';
    try {
      text = yamlBodyText(body);
      const parsed = readYaml(text, { maxDepth: limits.maxNestingDepth });
      return { value: parsed.value, format: 'yaml', jsonDuplicates: [], yamlDuplicates: parsed.duplicates, numberLiteral: undefined, text };
    } catch (err) {
      if (err instanceof ForbiddenKeyError) throw forbidden(err);
      if (err instanceof YamlDecodeError) {
        throw badRequest(`the object provided is unrecognized (must be of type ${intoKind}): ${err.kubeMessage} (${summarizeBody(body)})`);
      }
      throw err;
    }
  }
  throw unsupportedMediaType(type, accepted);
}

/**
 * A CBOR body as kube-apiserver's CBOR decoder reads it (src/codec/cbor/cbor-decoder.ts). Refusals
 * answer 400 in kube's words: input it cannot even read the type metadata of as "the object provided
 * is unrecognized (must be of type X): unable to determine group/version/kind: ... (hex)", the rest as
 * "X in version "v" cannot be handled as a X: ...". A null document is an empty object, as in kube.
 */
function decodeCborBody(body: Buffer, intoKind: string, intoApiVersion: string | undefined, limits: Limits): DecodedBody {
  const fields = intoApiVersion === undefined ? undefined : fieldKindsFor(intoApiVersion, intoKind);
  const version = intoApiVersion?.slice(intoApiVersion.indexOf('/') + 1) ?? '';
  try {
    const doc = decodeCborDocument(body, { maxDepth: limits.maxNestingDepth, fields, goType: `${version}.${intoKind}`, indexKeys: true });
    const table = doc.numberLiterals;
    noteInt64Overflows(table);
    return {
      value: doc.value === null ? {} : doc.value,
      format: 'cbor',
      jsonDuplicates: [],
      yamlDuplicates: [],
      numberLiteral: table ? (c, k) => table.get(c)?.get(k) : undefined,
      text: '',
      cborUnknownField: (path) => unknownFieldFinding(doc, path),
    };
  } catch (err) {
    if (err instanceof ForbiddenKeyError) throw forbidden(err);
    if (err instanceof CborDecodeError) {
      if (err.typeMeta) {
        throw badRequest(
          `the object provided is unrecognized (must be of type ${intoKind}): unable to determine group/version/kind: ${err.message} (${summarizeBody(body)})`,
        );
      }
      throw badRequest(`${intoKind} in version "${version}" cannot be handled as a ${intoKind}: ${err.message}`);
    }
    throw err;
  }
}
