import { goQuote } from '../codec/go-quote.js';
import { badRequest, invalid, unsupportedMediaType } from '../api/errors.js';
import { ForbiddenKeyError, type DuplicateField } from '../codec/json-text.js';
import { decodeInto, TypedDecodeError } from '../codec/typed-decode.js';
import { parseMediaType } from '../codec/media-type.js';
import { assertPlainJsonValue, NestingDepthError } from '../codec/value-limits.js';
import {
  APPLY_CBOR_PATCH_TYPE,
  applyPatch,
  BUILTIN_PATCH_TYPES,
  CUSTOM_RESOURCE_PATCH_TYPES,
  decodePatchBody,
  STRATEGIC_MERGE_PATCH_TYPE,
} from '../patch/apply-patch.js';
import { goFormat } from '../codec/json-value.js';
import { schemaForDefinition } from '../schema/openapi-schema.js';
import { pruneCustomResourceBody } from '../strategy/custom-resources.js';
import { decodeConversionProblem } from '../strategy/resource-strategy.js';
import type { ResourceRequest } from './context.js';
import { addWarnings, fieldValidationOf } from './decode-object.js';
import { SCALE_DEFINITION } from '../api/scale-kind.js';

/** PATCH media types kube-apiserver accepts (server-side apply has its own issue). */
export const PATCH_MEDIA_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];

/** A patch body read once per request and applied on every retry of the update loop. */
export interface RequestPatch {
  type: string;
  patch: unknown;
  /** Keys the body repeats, reported with the patched object's findings. */
  duplicates: DuplicateField[];
}

/**
 * The patch types the PATCH handler lists in its 415, as kube's: custom resources have no strategic
 * merge patch, and `application/apply-patch+cbor` is listed when CBORServingAndStorage is on.
 */
function handlerPatchTypes(r: ResourceRequest): string[] {
  const types = [...(r.info.custom === true ? CUSTOM_RESOURCE_PATCH_TYPES : BUILTIN_PATCH_TYPES)];
  if (r.server.featureGates.CBORServingAndStorage === true) types.push(APPLY_CBOR_PATCH_TYPE);
  return types;
}

/**
 * Reads the request's patch body: 415 (before the object is read) for media types other than the
 * patch types the resource takes, which for custom resources excludes strategic merge patch; the body
 * is decoded under the request limits (nesting, forbidden keys).
 */
export function readPatch(r: ResourceRequest, contentTypeHeader: string, body: Buffer): RequestPatch {
  const type = parseMediaType(contentTypeHeader).type;
  const supported = handlerPatchTypes(r);
  if (!PATCH_MEDIA_TYPES.includes(type) || !supported.includes(type)) throw unsupportedMediaType(type, supported);
  const { patch, duplicates } = decodePatchBody(body, type, fieldValidationOf(r), r.server.limits.maxNestingDepth);
  return { type, patch, duplicates };
}

/** kube's 422 for a patch whose result cannot be decoded: the field is `patch`, the value the patch or its result. */
function patchInvalid(value: string, detail: string): Error {
  return invalid('', '', '', [{ reason: 'FieldValueInvalid', field: 'patch', message: `Invalid value: ${JSON.stringify(value)}: ${detail}` }]);
}

/** The name `encoding/json` gives a JSON value's type in "cannot unmarshal X" errors. */
function jsonTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'object';
  return typeof value === 'boolean' ? 'bool' : typeof value;
}

/**
 * Why a JSON or merge patch that rewrote `apiVersion` or `kind` cannot be decoded, in kube's words,
 * or undefined when the patched object keeps its type (a version of the same group that serves the
 * kind is accepted: kube converts it). Strategic merge patches never change the type: they are
 * applied field by field to the typed object.
 */
function typeChangeProblem(r: ResourceRequest, patched: Record<string, unknown>): string | undefined {
  const target =
    r.ri.subresource === 'scale'
      ? { apiVersion: 'autoscaling/v1', kind: 'Scale', group: 'autoscaling' }
      : { apiVersion: r.apiVersion, kind: r.info.kind, group: r.info.group };
  for (const field of ['apiVersion', 'kind'] as const) {
    const value = patched[field];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      return `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonTypeName(value)} into Go struct field .${field} of type string`;
    }
  }
  const apiVersion = typeof patched.apiVersion === 'string' && patched.apiVersion !== '' ? patched.apiVersion : target.apiVersion;
  const kind = typeof patched.kind === 'string' && patched.kind !== '' ? patched.kind : target.kind;
  if (apiVersion === target.apiVersion && kind === target.kind) return undefined;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const sameKindInGroup = kind === target.kind && group === target.group;
  return sameKindInGroup ? undefined : `no kind ${goQuote(kind)} is registered for version ${goQuote(apiVersion)} in scheme "pkg/runtime/scheme.go:111"`;
}

/**
 * Decodes a patched object into its kind as kube-apiserver does after applying a patch: type errors
 * answer 422 naming the patch (a strategic merge patch's map in Go's `%+v` form, otherwise the patched
 * JSON) in the converter's or the JSON decoder's words; keys the patch repeated and fields the kind does
 * not declare are dropped and reported per fieldValidation (Warn: warnings; Strict: the same 422 with
 * `strict decoding error: ...`). Types without a schema are left alone.
 */
export function decodePatchedObject(r: ResourceRequest, patch: RequestPatch, patched: Record<string, unknown>): void {
  const mode = fieldValidationOf(r);
  const definition = r.ri.subresource === 'scale' ? SCALE_DEFINITION : r.info.definition;
  const schema = r.info.custom === true || definition === '' ? undefined : schemaForDefinition(definition);
  const smp = patch.type === STRATEGIC_MERGE_PATCH_TYPE;
  const valueText = (): string => (smp ? goFormat(patch.patch) : JSON.stringify(patched));
  const before = mode === 'Strict' && !smp ? valueText() : undefined;
  if (!smp && r.info.custom !== true) {
    const problem = typeChangeProblem(r, patched);
    if (problem !== undefined) throw patchInvalid(JSON.stringify(patched), problem);
  }
  let unknownFields: string[] = [];
  if (schema !== undefined) {
    try {
      unknownFields = decodeInto(patched, schema, undefined, smp ? 'unstructured' : 'json').unknownFields;
    } catch (err) {
      if (err instanceof TypedDecodeError) throw patchInvalid(before ?? valueText(), err.message);
      throw err;
    }
  } else if (r.info.custom === true && r.ri.subresource !== 'scale')
    unknownFields = pruneCustomResourceBody(r.server.catalog.customResources, r.apiVersion, r.info.kind, patched);
  if (r.ri.subresource !== 'scale') {
    // Leaves `patched` unchanged when it fails. kube answers a strategic merge patch's failure with a
    // bare 500 of the converter's message: a 400 with that message here.
    const problem = decodeConversionProblem(r.info, patched);
    if (problem !== undefined) throw smp ? badRequest(problem) : patchInvalid(before ?? valueText(), problem);
  }
  if (mode === 'Ignore') return;
  const findings = [...patch.duplicates.map((d) => `duplicate field ${goQuote(d.path)}`), ...unknownFields.map((f) => `unknown field ${goQuote(f)}`)];
  if (findings.length === 0) return;
  if (mode === 'Strict') throw patchInvalid(before ?? valueText(), `strict decoding error: ${findings.join(', ')}`);
  addWarnings(r, findings);
}

/**
 * Applies the request's patch to `view` (the stored object or its Scale view, the update attempt's
 * own copy, which the patch changes in place) and returns the patched value, checked against the
 * nesting limit and the forbidden keys like any decoded body.
 */
export function patchObject(r: ResourceRequest, patch: RequestPatch, view: unknown): unknown {
  const definition = r.ri.subresource === 'scale' ? SCALE_DEFINITION : r.info.definition;
  const schema = r.info.custom === true || definition === '' ? undefined : schemaForDefinition(definition);
  const limits = r.server.limits;
  const patched = applyPatch(patch.type, view, patch.patch, schema, { fieldValidation: fieldValidationOf(r), limits, inPlace: true });
  try {
    assertPlainJsonValue(patched, limits.maxNestingDepth);
  } catch (err) {
    if (err instanceof ForbiddenKeyError) throw badRequest(err.message);
    if (err instanceof NestingDepthError) throw badRequest(`the patched object is nested too deeply: ${err.message}`);
    throw err;
  }
  return patched;
}
