import type { Request } from 'express';
import { load as yamlLoad } from 'js-yaml';
import { ApiError, badRequest, tooLarge, unsupportedMediaType } from '../api/errors.js';
import { parseMediaType } from './media-type.js';
import { parseJsonSafely } from './safe-json.js';
import { decodeProtobufObject, PROTOBUF_MEDIA_TYPE } from './protobuf/protobuf-codec.js';

/** kube-apiserver's limit on request bodies (3 MiB). */
export const MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024;

/** Media types accepted for create and update bodies of built-in types. */
export const BODY_MEDIA_TYPES = ['application/json', 'application/yaml', PROTOBUF_MEDIA_TYPE];

/**
 * Reads the whole request body, failing with 413 as soon as it exceeds `limit` bytes, so a huge body
 * never sits in memory.
 */
export async function readBody(req: Request, limit = MAX_REQUEST_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(`limit is ${limit}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > limit) {
      req.resume();
      throw tooLarge(`limit is ${limit}`);
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

function assertNoForbiddenKeys(value: unknown): void {
  if (Array.isArray(value)) {
    for (const v of value) assertNoForbiddenKeys(v);
  } else if (typeof value === 'object' && value !== null) {
    for (const k of Object.keys(value)) {
      if (k === '__proto__' || k === 'constructor' || k === 'prototype') throw new ApiError(400, 'BadRequest', `invalid field name "${k}"`);
      assertNoForbiddenKeys((value as Record<string, unknown>)[k]);
    }
  }
}

/**
 * Summarises a body for decode errors as kube's summarizeData does: `<empty>`, the first bytes of a
 * JSON object as text, anything else as hex, with " ..." when cut.
 */
function summarize(body: Buffer, max = 30): string {
  if (body.length === 0) return '<empty>';
  const head = body.subarray(0, max);
  const shown = body[0] === 0x7b ? head.toString('utf8') : head.toString('hex');
  return body.length > max ? `${shown} ...` : shown;
}

/**
 * Decodes a create/update body by its Content-Type (JSON when absent). `intoKind` names the
 * expected kind for error messages. Returns the parsed value (not yet checked to be an object).
 */
export function decodeBody(contentTypeHeader: string | undefined, body: Buffer, intoKind: string, accepted = BODY_MEDIA_TYPES, intoApiVersion?: string): unknown {
  const type = contentTypeHeader ? parseMediaType(contentTypeHeader).type : 'application/json';
  if (type === PROTOBUF_MEDIA_TYPE && accepted.includes(PROTOBUF_MEDIA_TYPE)) {
    return decodeProtobufObject(body, { apiVersion: intoApiVersion, kind: intoKind }).object;
  }
  const text = body.toString('utf8');
  if (type === 'application/json' || type === '*/*') {
    try {
      return parseJsonSafely(text);
    } catch (err) {
      if (err instanceof ApiError) throw err;
      const detail = err instanceof Error ? err.message : String(err);
      throw badRequest(`the object provided is unrecognized (must be of type ${intoKind}): couldn't get version/kind; json parse error: ${detail} (${summarize(body)})`);
    }
  }
  if (type === 'application/yaml' || type === 'text/yaml' || type === 'application/x-yaml') {
    let value: unknown;
    try {
      value = yamlLoad(text);
    } catch (err) {
      const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw badRequest(`the object provided is unrecognized (must be of type ${intoKind}): yaml: ${detail} (${summarize(body)})`);
    }
    assertNoForbiddenKeys(value);
    return toJsonValue(value);
  }
  throw unsupportedMediaType(type, accepted);
}

/** YAML values JSON cannot carry (dates, binary) become their JSON form, as sigs.k8s.io/yaml converts. */
function toJsonValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString().replace('.000Z', 'Z');
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonValue(v);
    return out;
  }
  return value;
}
