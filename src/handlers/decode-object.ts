import { ApiError, badRequest } from '../api/errors.js';
import { goQuote, warningHeaderValue } from '../codec/go-quote.js';
import { readJson } from '../codec/json-text.js';
import { BODY_MEDIA_TYPES, CBOR_MEDIA_TYPE, decodeBody, readBody, type DecodedBody } from '../codec/request-body.js';
import { PROTOBUF_MEDIA_TYPE } from '../codec/protobuf/protobuf-codec.js';
import { decodeInto, TypedDecodeError } from '../codec/typed-decode.js';
import { schemaForDefinition, schemaForKind, type SchemaNode } from '../schema/openapi-schema.js';
import { isObject, type Obj } from '../api/object-util.js';
import { pruneCustomResourceBody } from '../strategy/custom-resources.js';
import { decodeConversionProblem } from '../strategy/resource-strategy.js';
import { writeOptionsOf, type ResourceRequest } from './context.js';
import type { FieldValidation } from '../api/request-options.js';
import { SCALE_DEFINITION } from '../api/scale-kind.js';

/** The request's `fieldValidation` (kube's default is Warn; other values fail the options with 422). */
export function fieldValidationOf(r: ResourceRequest): FieldValidation {
  return writeOptionsOf(r).fieldValidation;
}

/** Adds `warnings` as `Warning: 299 - "..."` headers, as kube-apiserver sends them. */
export function addWarnings(r: ResourceRequest, warnings: string[]): void {
  if (r.res.headersSent) return;
  for (const w of warnings) r.res.append('Warning', warningHeaderValue(w));
}

/**
 * Reports what strict decoding found (repeated keys, undeclared fields): with fieldValidation=Strict
 * they fail the request (400 `strict decoding error: ...`, after `prefix`), with Warn each becomes a
 * `Warning` header, with Ignore they vanish. JSON findings come in document order, YAML's repeated keys
 * first (as go-yaml reports them in one error), as kube-apiserver orders them; with `unknownLast` (custom
 * resources, whose unknown fields come from pruning after the decode) repeated keys come first.
 */
export function reportStrictFindings(r: ResourceRequest, decoded: DecodedBody | undefined, unknownFields: string[], prefix: string, unknownLast = false): void {
  const mode = fieldValidationOf(r);
  if (mode === 'Ignore') return;
  const unknown = unknownFields.map((f) => `unknown field ${goQuote(f)}`);
  let findings: string[];
  let strictItems: string[];
  if (decoded !== undefined && decoded.yamlDuplicates.length > 0) {
    findings = [...decoded.yamlDuplicates, ...unknown];
    strictItems = [`yaml: unmarshal errors:\n  ${decoded.yamlDuplicates.join('\n  ')}`, ...unknown];
  } else if (decoded !== undefined && decoded.jsonDuplicates.length > 0) {
    const dups = decoded.jsonDuplicates.map((d) => ({ offset: d.offset, text: `duplicate field ${goQuote(d.path)}` }));
    let located = unknownFields.map((f) => ({ offset: Number.MAX_SAFE_INTEGER, text: `unknown field ${goQuote(f)}` }));
    if (unknownFields.length > 0 && !unknownLast) {
      // Rare: both kinds of findings. Read the text once more to put them in document order.
      const offsets = new Map<string, number>();
      readJson(decoded.text, { maxDepth: Number.MAX_SAFE_INTEGER, keyOffsets: offsets });
      located = unknownFields.map((f) => ({ offset: offsets.get(f) ?? Number.MAX_SAFE_INTEGER, text: `unknown field ${goQuote(f)}` }));
    }
    findings = [...dups, ...located].sort((a, b) => a.offset - b.offset).map((x) => x.text);
    strictItems = findings;
  } else if (decoded?.cborUnknownField !== undefined && unknownFields.length > 0) {
    // kube's CBOR decoder stops at the first unknown field and names it by its map element index.
    const first = decoded.cborUnknownField(unknownFields[0]);
    findings = first === undefined ? unknown : [first];
    strictItems = findings;
  } else {
    findings = unknown;
    strictItems = unknown;
  }
  if (findings.length === 0) return;
  if (mode === 'Strict') throw new ApiError(400, 'BadRequest', `${prefix}strict decoding error: ${strictItems.join(', ')}`);
  addWarnings(r, findings);
}

function versionOf(apiVersion: string): string {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? apiVersion : apiVersion.slice(i + 1);
}

function groupOf(apiVersion: string): string {
  const i = apiVersion.lastIndexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** The schema a body of `kind` in `apiVersion` decodes into at this endpoint, if Capstan knows it. */
function bodySchema(r: ResourceRequest, kind: string, apiVersion: string): SchemaNode | undefined {
  if (r.info.custom === true) return undefined;
  if (kind === 'Scale') return schemaForDefinition(SCALE_DEFINITION);
  if (kind === r.info.kind && apiVersion === r.apiVersion) return r.info.definition === '' ? undefined : schemaForDefinition(r.info.definition);
  return schemaForKind(groupOf(apiVersion), versionOf(apiVersion), kind);
}

/**
 * Reads and decodes a create/update body for the request's type: it must be an object whose
 * `apiVersion` and `kind`, when present, name the served version and kind (400 otherwise, with
 * kube-apiserver's messages); missing `apiVersion`/`kind` default to the path's. The object is then
 * decoded into its kind (type errors answer 400 as kube's decoder words them; undeclared fields are
 * dropped and reported per fieldValidation).
 */
export async function decodeObject(r: ResourceRequest, expectedKind = r.info.kind, expectedApiVersion = r.apiVersion): Promise<Obj> {
  const limits = r.server.limits;
  const body = await readBody(r.req, limits.maxRequestBodyBytes);
  const types = r.server.featureGates.CBORServingAndStorage === true ? [...BODY_MEDIA_TYPES, CBOR_MEDIA_TYPE] : BODY_MEDIA_TYPES;
  const accepted = r.info.custom === true ? types.filter((t) => t !== PROTOBUF_MEDIA_TYPE) : types;
  const decoded = decodeBody(r.req.headers['content-type'], body, expectedKind, accepted, expectedApiVersion, limits);
  const value = decoded.value;
  if (!isObject(value)) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${expectedKind}): couldn't get version/kind; json parse error: json: cannot unmarshal ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'boolean' ? 'bool' : typeof value} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
    );
  }
  const kind = value.kind;
  const apiVersion = value.apiVersion;
  if (kind !== undefined && typeof kind !== 'string')
    throw badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): kind must be a string`);
  if (apiVersion !== undefined && typeof apiVersion !== 'string')
    throw badRequest(`the object provided is unrecognized (must be of type ${expectedKind}): apiVersion must be a string`);
  if (apiVersion && apiVersion !== expectedApiVersion) {
    if (kind && kind !== expectedKind) {
      throw badRequest(
        `${kind} in version "${versionOf(apiVersion)}" cannot be handled as a ${expectedKind}: no kind "${kind}" is registered for version "${apiVersion}" in scheme "capstan"`,
      );
    }
    throw badRequest(`the API version in the data (${apiVersion}) does not match the expected API version (${expectedApiVersion})`);
  }
  if (kind && kind !== expectedKind) {
    throw badRequest(
      `${kind} in version "${versionOf(expectedApiVersion)}" cannot be handled as a ${expectedKind}: converting (${kind}) to (${expectedKind}): unknown conversion`,
    );
  }
  const prefix = `${expectedKind} in version "${versionOf(expectedApiVersion)}" cannot be handled as a ${expectedKind}: `;
  const schema = bodySchema(r, expectedKind, expectedApiVersion);
  if (schema === undefined) {
    fieldValidationOf(r);
    if (r.info.custom === true)
      reportStrictFindings(r, decoded, pruneCustomResourceBody(r.server.catalog.customResources, expectedApiVersion, expectedKind, value), prefix, true);
    return value;
  }
  let unknownFields: string[];
  try {
    unknownFields = decodeInto(value, schema, decoded.numberLiteral, decoded.format === 'cbor' ? 'cbor' : 'json').unknownFields;
  } catch (err) {
    if (err instanceof TypedDecodeError) throw badRequest(`${prefix}${err.message}`);
    throw err;
  }
  // kube converts the decoded body into its internal object before reporting strict findings.
  if (expectedKind === r.info.kind && expectedApiVersion === r.apiVersion) {
    const problem = decodeConversionProblem(r.info, value);
    if (problem !== undefined) throw badRequest(`${prefix}${problem}`);
  }
  reportStrictFindings(r, decoded, unknownFields, prefix);
  return value;
}
