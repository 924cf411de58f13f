import { internalError, unsupportedMediaType } from '../api/errors.js';
import type { SchemaNode } from '../schema/openapi-schema.js';
import { applyJsonPatch } from './json-patch.js';
import { applyMergePatch } from './merge-patch.js';
import { patchBadRequest } from './patch-errors.js';
import { applyStrategicMergePatch } from './strategic-merge-patch.js';

/**
 * The single entry point for PATCH bodies other than server-side apply: picks the engine from the
 * request's Content-Type exactly as kube-apiserver does and returns the patched object.
 */

export const JSON_PATCH_TYPE = 'application/json-patch+json';
export const MERGE_PATCH_TYPE = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH_TYPE = 'application/strategic-merge-patch+json';
export const APPLY_YAML_PATCH_TYPE = 'application/apply-patch+yaml';
export const APPLY_CBOR_PATCH_TYPE = 'application/apply-patch+cbor';

/** Patch media types kube-apiserver accepts for built-in kinds, in the order its 415 message lists them. */
export const BUILTIN_PATCH_TYPES: readonly string[] = [JSON_PATCH_TYPE, MERGE_PATCH_TYPE, STRATEGIC_MERGE_PATCH_TYPE, APPLY_YAML_PATCH_TYPE];

/** Patch media types for custom resources: strategic merge patch is not among them. */
export const CUSTOM_RESOURCE_PATCH_TYPES: readonly string[] = [JSON_PATCH_TYPE, MERGE_PATCH_TYPE, APPLY_YAML_PATCH_TYPE];

/**
 * The patch type named by a Content-Type header. Like kube, only a `;...` suffix (charset) is removed;
 * case and spaces are significant. Throws 415 UnsupportedMediaType, listing `supported`, for any other type.
 */
export function patchTypeFromContentType(contentType: string, supported: readonly string[]): string {
  const idx = contentType.indexOf(';');
  const type = idx > 0 ? contentType.slice(0, idx) : contentType;
  if (!supported.includes(type)) throw unsupportedMediaType(contentType, [...supported]);
  return type;
}

export interface ApplyPatchOptions {
  /** The request's `fieldValidation` ("Strict", "Warn", "Ignore"); Strict and Warn change decode errors. */
  fieldValidation?: string;
  /** Accepted media types; defaults to BUILTIN_PATCH_TYPES with a schema and CUSTOM_RESOURCE_PATCH_TYPES without. */
  supportedTypes?: readonly string[];
}

/** Go's `encoding/json` wording for a body that does not parse (best effort on V8's message). */
function syntaxErrorMessage(text: string, err: unknown): string {
  if (text.trim() === '') return 'unexpected end of JSON input';
  const msg = err instanceof Error ? err.message : '';
  const pos = /position (\d+)/.exec(msg);
  if (pos?.[1] !== undefined) {
    const ch = text.charAt(Number(pos[1]));
    if (ch !== '') return `invalid character '${ch}' looking for beginning of value`;
  }
  return 'unexpected end of JSON input';
}

function parseBody(body: unknown, type: string, strict: boolean): unknown {
  if (!(body instanceof Uint8Array)) return body;
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const detail = syntaxErrorMessage(text, err);
    if (type === MERGE_PATCH_TYPE && !strict) throw patchBadRequest('Invalid JSON Patch');
    if (type === JSON_PATCH_TYPE && strict) throw patchBadRequest(`error decoding patch: ${detail}`);
    if (type === MERGE_PATCH_TYPE) throw patchBadRequest(`error decoding patch: ${detail}`);
    throw patchBadRequest(detail);
  }
}

/**
 * Applies a PATCH body to `original` according to `contentType` and returns the patched object; the
 * inputs are never modified. `body` is either the parsed JSON value or the raw request bytes
 * (a Uint8Array/Buffer). `schema` is the kind's OpenAPI definition; undefined means a type without
 * schema (a custom resource), for which strategic merge patch is refused with 415 as kube does.
 * Server-side apply types are accepted by the media type check but must be handled by the caller.
 * Throws ApiError with kube-apiserver's status for every failure.
 */
export function applyPatch(
  contentType: string,
  original: unknown,
  body: unknown,
  schema: SchemaNode | undefined,
  options: ApplyPatchOptions = {},
): unknown {
  const supported = options.supportedTypes ?? (schema ? BUILTIN_PATCH_TYPES : CUSTOM_RESOURCE_PATCH_TYPES);
  const type = patchTypeFromContentType(contentType, supported);
  const strict = options.fieldValidation === 'Strict' || options.fieldValidation === 'Warn';
  switch (type) {
    case JSON_PATCH_TYPE:
      return applyJsonPatch(original, parseBody(body, type, strict), { strictDecoding: strict });
    case MERGE_PATCH_TYPE:
      return applyMergePatch(original, parseBody(body, type, strict), { strictDecoding: strict });
    case STRATEGIC_MERGE_PATCH_TYPE:
      return applyStrategicMergePatch(original, parseBody(body, type, strict), schema, { strictDecoding: strict });
    default:
      throw internalError(new Error(`${type}: unimplemented patch type`));
  }
}
