import { ApiError, badRequest } from '../api/errors.js';
import { BODY_MEDIA_TYPES, decodeBody, readBody } from '../codec/request-body.js';
import { PROTOBUF_MEDIA_TYPE } from '../codec/protobuf/protobuf-codec.js';
import { schemaForDefinition } from '../schema/openapi-schema.js';
import { pruneUnknownFields } from '../strategy/unknown-fields.js';
import { isObject, type Obj } from './object-util.js';
import type { ResourceRequest } from './context.js';

const FIELD_VALIDATION = new Set(['Ignore', 'Warn', 'Strict']);

/** The request's `fieldValidation` (kube's default is Warn); 400 for other values, as kube answers. */
export function fieldValidationOf(r: ResourceRequest): 'Ignore' | 'Warn' | 'Strict' {
  const v = r.query.get('fieldValidation') ?? 'Warn';
  if (v === '') return 'Warn';
  if (!FIELD_VALIDATION.has(v)) {
    throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got ${JSON.stringify(v)}`);
  }
  return v as 'Ignore' | 'Warn' | 'Strict';
}

/**
 * Drops fields the type does not declare, as typed decoding does: with fieldValidation=Strict they
 * fail the request (400 `strict decoding error: unknown field "..."`, prefixed by `prefix`), with Warn
 * each becomes a `Warning` header, with Ignore they vanish silently. Types without a schema (custom
 * resources, virtual types) are left alone.
 */
export function handleUnknownFields(r: ResourceRequest, obj: Obj, definition: string, prefix: string): void {
  const mode = fieldValidationOf(r);
  if (r.info.custom === true || definition === '') return;
  const schema = schemaForDefinition(definition);
  if (!schema) return;
  const unknown = pruneUnknownFields(obj, schema);
  if (unknown.length === 0) return;
  if (mode === 'Strict') {
    throw new ApiError(400, 'BadRequest', `${prefix}strict decoding error: ${unknown.map((f) => `unknown field ${JSON.stringify(f)}`).join(', ')}`);
  }
  if (mode === 'Warn' && !r.res.headersSent) {
    for (const f of unknown) r.res.append('Warning', `299 - ${JSON.stringify(`unknown field ${JSON.stringify(f)}`)}`);
  }
}

const SCALE_DEFINITION = 'io.k8s.api.autoscaling.v1.Scale';

/** The OpenAPI definition a write's body is decoded as (Scale for the scale subresource). */
export function bodyDefinition(r: ResourceRequest): string {
  return r.ri.subresource === 'scale' ? SCALE_DEFINITION : r.info.definition;
}

/**
 * Reads and decodes a create/update body for the request's type: it must be an object whose
 * `apiVersion` and `kind`, when present, name the served version and kind (400 otherwise, with
 * kube-apiserver's messages). Missing `apiVersion`/`kind` default to the path's.
 */
export async function decodeObject(r: ResourceRequest, expectedKind = r.info.kind, expectedApiVersion = r.apiVersion): Promise<Obj> {
  const body = await readBody(r.req);
  const accepted = r.info.custom === true ? BODY_MEDIA_TYPES.filter((t) => t !== PROTOBUF_MEDIA_TYPE) : BODY_MEDIA_TYPES;
  const value = decodeBody(r.req.headers['content-type'], body, expectedKind, accepted, expectedApiVersion);
  if (!isObject(value)) {
    throw badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`);
  }
  const kind = value.kind;
  const apiVersion = value.apiVersion;
  if (kind !== undefined && typeof kind !== 'string') throw badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): kind must be a string`);
  if (apiVersion !== undefined && typeof apiVersion !== 'string') throw badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): apiVersion must be a string`);
  if (apiVersion && apiVersion !== expectedApiVersion) {
    if (kind && kind !== expectedKind) {
      throw badRequest(`${kind} in version "${versionOf(apiVersion)}" cannot be handled as a ${expectedKind}: no kind "${kind}" is registered for version "${apiVersion}" in scheme "capstan"`);
    }
    throw badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (${expectedApiVersion})`);
  }
  if (kind && kind !== expectedKind) {
    throw badRequest(`${kind} in version "${versionOf(expectedApiVersion)}" cannot be handled as a ${expectedKind}: converting (${kind}) to (${expectedKind}): unknown conversion`);
  }
  const definition = expectedKind === 'Scale' ? SCALE_DEFINITION : expectedKind === r.info.kind ? r.info.definition : '';
  handleUnknownFields(r, value, definition, `${expectedKind} in version "${versionOf(expectedApiVersion)}" cannot be handled as a ${expectedKind}: `);
  return value;
}

function versionOf(apiVersion: string): string {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? apiVersion : apiVersion.slice(i + 1);
}
