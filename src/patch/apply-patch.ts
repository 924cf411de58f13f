import { badRequest, internalError, unsupportedMediaType } from '../api/errors.js';
import { DEFAULT_LIMITS, type Limits } from '../api/limits.js';
import { ForbiddenKeyError, JsonSyntaxError, readJson, type DuplicateField } from '../codec/json-text.js';
import type { SchemaNode } from '../schema/openapi-schema.js';
import { applyJsonPatch } from './json-patch.js';
import { PatchDepthError } from '../codec/json-value.js';
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
  /** Nesting, JSON patch operation and copy limits (defaults: DEFAULT_LIMITS). */
  limits?: Pick<Limits, 'maxNestingDepth' | 'maxJsonPatchOperations' | 'maxJsonPatchCopyBytes'>;
  /**
   * `original` is the caller's own copy, which it drops once patched: JSON and merge patches change
   * it in place instead of a clone (a failed patch may leave it half changed).
   */
  inPlace?: boolean;
}

/** A patch body read from its bytes. */
export interface DecodedPatch {
  patch: unknown;
  /** Keys repeated within one object of the body, for strict field validation. */
  duplicates: DuplicateField[];
}

/**
 * Reads a patch body (JSON for every patch type) under the nesting limit, with the error wording
 * kube-apiserver uses for each patch type and validation level: 400 in every case.
 */
export function decodePatchBody(body: Uint8Array, type: string, fieldValidation: string | undefined, maxDepth = DEFAULT_LIMITS.maxNestingDepth): DecodedPatch {
  const strict = fieldValidation === 'Strict' || fieldValidation === 'Warn';
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  try {
    const parsed = readJson(text, { maxDepth });
    return { patch: parsed.value, duplicates: parsed.duplicates };
  } catch (err) {
    if (err instanceof ForbiddenKeyError) throw badRequest(err.message);
    if (!(err instanceof JsonSyntaxError)) throw err;
    const detail = err.message;
    if (type === MERGE_PATCH_TYPE && !strict) throw patchBadRequest('Invalid JSON Patch');
    if (type === JSON_PATCH_TYPE && strict) throw patchBadRequest(`error decoding patch: ${detail}`);
    if (type === MERGE_PATCH_TYPE) throw patchBadRequest(`error decoding patch: ${detail}`);
    throw patchBadRequest(detail);
  }
}

function parseBody(body: unknown, type: string, options: ApplyPatchOptions): unknown {
  if (!(body instanceof Uint8Array)) return body;
  return decodePatchBody(body, type, options.fieldValidation, options.limits?.maxNestingDepth).patch;
}

/**
 * Applies a PATCH body to `original` according to `contentType` and returns the patched object; the
 * inputs are never modified (`original` may be, with `inPlace`). `body` is either the parsed JSON
 * value or the raw request bytes (a Uint8Array/Buffer). `schema` is the kind's OpenAPI definition; undefined means a type without
 * schema (a custom resource), for which strategic merge patch is refused with 415 as kube does.
 * Server-side apply types are accepted by the media type check but must be handled by the caller.
 * Throws ApiError with kube-apiserver's status for every failure.
 */
export function applyPatch(contentType: string, original: unknown, body: unknown, schema: SchemaNode | undefined, options: ApplyPatchOptions = {}): unknown {
  const supported = options.supportedTypes ?? (schema ? BUILTIN_PATCH_TYPES : CUSTOM_RESOURCE_PATCH_TYPES);
  const type = patchTypeFromContentType(contentType, supported);
  const strict = options.fieldValidation === 'Strict' || options.fieldValidation === 'Warn';
  const limits = options.limits ?? DEFAULT_LIMITS;
  try {
    switch (type) {
      case JSON_PATCH_TYPE:
        return applyJsonPatch(original, parseBody(body, type, options), {
          strictDecoding: strict,
          maxOperations: limits.maxJsonPatchOperations,
          maxCopyBytes: limits.maxJsonPatchCopyBytes,
          inPlace: options.inPlace,
        });
      case MERGE_PATCH_TYPE:
        return applyMergePatch(original, parseBody(body, type, options), { strictDecoding: strict, inPlace: options.inPlace });
      case STRATEGIC_MERGE_PATCH_TYPE:
        return applyStrategicMergePatch(original, parseBody(body, type, options), schema, { strictDecoding: strict });
      default:
        throw internalError(new Error(`${type}: unimplemented patch type`));
    }
  } catch (err) {
    if (err instanceof PatchDepthError) throw badRequest(`the patched object is nested too deeply: ${err.message}`);
    throw err;
  }
}
