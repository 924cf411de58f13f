import type protobuf from 'protobufjs';
import type { dump as yamlDump } from 'js-yaml';
import { readSchemaJson } from '../schema/schema-files.js';
import { type JsonObject } from './json-value.js';
import { isObject, objectElements } from '../api/values.js';

/**
 * The gnostic protobuf form of an OpenAPI v2 (Swagger 2.0) document: `openapi.v2.Document`, what
 * kube-apiserver serves on /openapi/v2 for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`.
 *
 * The conversion follows gnostic's rules (openapi_v2.ParseDocument): every `x-` member becomes a
 * `NamedAny` whose `yaml` holds the member's value as YAML; `default`, `example` and `enum` values are
 * `Any` YAML too; named maps (paths, definitions, properties, responses, ...) become repeated `Named*`
 * entries in document order; a parameter is a body parameter or one of the four non-body sub-schemas
 * chosen by its `in`; `$ref` members become `_ref` or a `JsonReference`.
 */

type Pb = { [field: string]: unknown };

let documentType: protobuf.Type | undefined;
let dump: typeof yamlDump | undefined;

/**
 * Loads protobufjs, js-yaml and the descriptor on first use: they cost start-up time that a server
 * which is never asked for the protobuf form should not pay.
 */
async function documentMessage(): Promise<protobuf.Type> {
  if (documentType === undefined) {
    const [{ default: pb }, yaml] = await Promise.all([import('protobufjs'), import('js-yaml')]);
    dump = yaml.dump;
    documentType = pb.Root.fromJSON(readSchemaJson('openapi-v2-protobuf.json') as protobuf.INamespace).lookupType('openapi.v2.Document');
  }
  return documentType;
}

/** YAML texts by the JSON text of their value: extension values repeat a lot (`atomic`, GVKs). */
let yamlMemo: Map<string, string> | undefined;

/** Encodes the Swagger 2.0 document DOC as gnostic's `openapi.v2.Document` message bytes. */
export async function encodeOpenApiV2Protobuf(doc: JsonObject): Promise<Uint8Array> {
  const type = await documentMessage();
  // Synchronous from here on, so the memo cannot be shared with a concurrent encoding.
  yamlMemo = new Map();
  try {
    return type.encode(toDocument(doc)).finish();
  } finally {
    yamlMemo = undefined;
  }
}

/** The protobufjs type of `openapi.v2.Document`, for callers that decode what this module encodes. */
export function openApiV2DocumentType(): Promise<protobuf.Type> {
  return documentMessage();
}

/** YAML text of a value, as gnostic stores extension and default values (`Any.yaml`). */
function yamlOf(value: unknown): string {
  const key = JSON.stringify(value);
  const known = yamlMemo?.get(key);
  if (known !== undefined) return known;
  if (dump === undefined) throw new Error('js-yaml is not loaded');
  const text = dump(value, { lineWidth: -1, noRefs: true, quoteStyle: 'double' });
  yamlMemo?.set(key, text);
  return text;
}

function toAny(value: unknown): Pb {
  return { yaml: yamlOf(value) };
}

/** Field copy rules: [json member, protobuf field, kind]. Defaults are left unset, as proto3 omits them. */
type Kind = 'string' | 'bool' | 'number' | 'strings' | 'any' | 'anys';
type Rule = readonly [string, string, Kind];

function copy(src: JsonObject, rules: readonly Rule[], out: Pb = {}): Pb {
  for (const [json, field, kind] of rules) {
    const v = src[json];
    if (v === undefined) continue;
    switch (kind) {
      case 'string':
        if (typeof v === 'string' && v !== '') out[field] = v;
        break;
      case 'bool':
        if (v === true) out[field] = true;
        break;
      case 'number':
        if (typeof v === 'number' && v !== 0) out[field] = v;
        break;
      case 'strings':
        if (Array.isArray(v)) out[field] = v.filter((s): s is string => typeof s === 'string');
        break;
      case 'any':
        out[field] = toAny(v);
        break;
      case 'anys':
        if (Array.isArray(v)) out[field] = v.map(toAny);
        break;
    }
  }
  return out;
}

function vendorExtensions(src: JsonObject): Pb[] {
  const out: Pb[] = [];
  for (const [k, v] of Object.entries(src)) if (k.startsWith('x-')) out.push({ name: k, value: toAny(v) });
  return out;
}

/** Adds `vendor_extension` to OUT when SRC has `x-` members. */
function withExtensions(src: JsonObject, out: Pb): Pb {
  const ext = vendorExtensions(src);
  if (ext.length > 0) out['vendor_extension'] = ext;
  return out;
}

function named(map: unknown, convert: (v: JsonObject) => Pb): Pb[] {
  if (!isObject(map)) return [];
  const out: Pb[] = [];
  for (const [name, v] of Object.entries(map)) if (isObject(v)) out.push({ name, value: convert(v) });
  return out;
}

function setIf(out: Pb, field: string, value: unknown): void {
  if (value !== undefined) out[field] = value;
}

function optionalObject(value: unknown, convert: (v: JsonObject) => Pb): Pb | undefined {
  return isObject(value) ? convert(value) : undefined;
}

const VALIDATION_RULES: readonly Rule[] = [
  ['maximum', 'maximum', 'number'],
  ['exclusiveMaximum', 'exclusive_maximum', 'bool'],
  ['minimum', 'minimum', 'number'],
  ['exclusiveMinimum', 'exclusive_minimum', 'bool'],
  ['maxLength', 'max_length', 'number'],
  ['minLength', 'min_length', 'number'],
  ['pattern', 'pattern', 'string'],
  ['maxItems', 'max_items', 'number'],
  ['minItems', 'min_items', 'number'],
  ['uniqueItems', 'unique_items', 'bool'],
  ['enum', 'enum', 'anys'],
  ['multipleOf', 'multiple_of', 'number'],
];

function externalDocs(src: JsonObject): Pb {
  return withExtensions(
    src,
    copy(src, [
      ['description', 'description', 'string'],
      ['url', 'url', 'string'],
    ]),
  );
}

function xml(src: JsonObject): Pb {
  return withExtensions(
    src,
    copy(src, [
      ['name', 'name', 'string'],
      ['namespace', 'namespace', 'string'],
      ['prefix', 'prefix', 'string'],
      ['attribute', 'attribute', 'bool'],
      ['wrapped', 'wrapped', 'bool'],
    ]),
  );
}

function schema(src: JsonObject): Pb {
  const out = copy(src, [
    ['$ref', '_ref', 'string'],
    ['format', 'format', 'string'],
    ['title', 'title', 'string'],
    ['description', 'description', 'string'],
    ['default', 'default', 'any'],
    ...VALIDATION_RULES,
    ['maxProperties', 'max_properties', 'number'],
    ['minProperties', 'min_properties', 'number'],
    ['required', 'required', 'strings'],
  ]);
  const additional = src['additionalProperties'];
  if (typeof additional === 'boolean') out['additional_properties'] = { boolean: additional };
  else if (isObject(additional)) out['additional_properties'] = { schema: schema(additional) };
  const type = src['type'];
  if (typeof type === 'string') out['type'] = { value: [type] };
  else if (Array.isArray(type)) out['type'] = { value: type.filter((t): t is string => typeof t === 'string') };
  const items = src['items'];
  if (isObject(items)) out['items'] = { schema: [schema(items)] };
  else if (Array.isArray(items)) out['items'] = { schema: objectElements(items).map(schema) };
  if (Array.isArray(src['allOf'])) out['all_of'] = objectElements(src['allOf']).map(schema);
  if (isObject(src['properties'])) out['properties'] = { additional_properties: named(src['properties'], schema) };
  copy(
    src,
    [
      ['discriminator', 'discriminator', 'string'],
      ['readOnly', 'read_only', 'bool'],
      ['example', 'example', 'any'],
    ],
    out,
  );
  setIf(out, 'xml', optionalObject(src['xml'], xml));
  setIf(out, 'external_docs', optionalObject(src['externalDocs'], externalDocs));
  return withExtensions(src, out);
}

function primitivesItems(src: JsonObject): Pb {
  const out = copy(src, [
    ['type', 'type', 'string'],
    ['format', 'format', 'string'],
  ]);
  setIf(out, 'items', optionalObject(src['items'], primitivesItems));
  copy(src, [['collectionFormat', 'collection_format', 'string'], ['default', 'default', 'any'], ...VALIDATION_RULES], out);
  return withExtensions(src, out);
}

/** A non-body parameter sub-schema; ALLOW_EMPTY is true for query and formData parameters. */
function nonBodyParameter(src: JsonObject, allowEmpty: boolean): Pb {
  const out = copy(src, [
    ['required', 'required', 'bool'],
    ['in', 'in', 'string'],
    ['description', 'description', 'string'],
    ['name', 'name', 'string'],
  ]);
  if (allowEmpty) copy(src, [['allowEmptyValue', 'allow_empty_value', 'bool']], out);
  copy(
    src,
    [
      ['type', 'type', 'string'],
      ['format', 'format', 'string'],
    ],
    out,
  );
  setIf(out, 'items', optionalObject(src['items'], primitivesItems));
  copy(src, [['collectionFormat', 'collection_format', 'string'], ['default', 'default', 'any'], ...VALIDATION_RULES], out);
  return withExtensions(src, out);
}

function parameter(src: JsonObject): Pb {
  const where = src['in'];
  if (where === 'body') {
    const body = copy(src, [
      ['description', 'description', 'string'],
      ['name', 'name', 'string'],
      ['in', 'in', 'string'],
      ['required', 'required', 'bool'],
    ]);
    setIf(body, 'schema', optionalObject(src['schema'], schema));
    return { body_parameter: withExtensions(src, body) };
  }
  const subSchema =
    where === 'header'
      ? 'header_parameter_sub_schema'
      : where === 'formData'
        ? 'form_data_parameter_sub_schema'
        : where === 'path'
          ? 'path_parameter_sub_schema'
          : 'query_parameter_sub_schema';
  const allowEmpty = where === 'formData' || subSchema === 'query_parameter_sub_schema';
  return { non_body_parameter: { [subSchema]: nonBodyParameter(src, allowEmpty) } };
}

function jsonReference(src: JsonObject): Pb {
  return copy(src, [
    ['$ref', '_ref', 'string'],
    ['description', 'description', 'string'],
  ]);
}

function parametersItem(src: JsonObject): Pb {
  return typeof src['$ref'] === 'string' ? { json_reference: jsonReference(src) } : { parameter: parameter(src) };
}

function header(src: JsonObject): Pb {
  const out = copy(src, [
    ['type', 'type', 'string'],
    ['format', 'format', 'string'],
  ]);
  setIf(out, 'items', optionalObject(src['items'], primitivesItems));
  copy(src, [['collectionFormat', 'collection_format', 'string'], ['default', 'default', 'any'], ...VALIDATION_RULES], out);
  copy(src, [['description', 'description', 'string']], out);
  return withExtensions(src, out);
}

function fileSchema(src: JsonObject): Pb {
  const out = copy(src, [
    ['format', 'format', 'string'],
    ['title', 'title', 'string'],
    ['description', 'description', 'string'],
    ['default', 'default', 'any'],
    ['required', 'required', 'strings'],
    ['type', 'type', 'string'],
    ['readOnly', 'read_only', 'bool'],
  ]);
  setIf(out, 'external_docs', optionalObject(src['externalDocs'], externalDocs));
  copy(src, [['example', 'example', 'any']], out);
  return withExtensions(src, out);
}

function response(src: JsonObject): Pb {
  const out = copy(src, [['description', 'description', 'string']]);
  const s = src['schema'];
  if (isObject(s)) out['schema'] = s['type'] === 'file' ? { file_schema: fileSchema(s) } : { schema: schema(s) };
  if (isObject(src['headers'])) out['headers'] = { additional_properties: named(src['headers'], header) };
  if (isObject(src['examples'])) {
    out['examples'] = {
      additional_properties: Object.entries(src['examples']).map(([name, v]) => ({ name, value: toAny(v) })),
    };
  }
  return withExtensions(src, out);
}

function responseValue(src: JsonObject): Pb {
  return typeof src['$ref'] === 'string' ? { json_reference: jsonReference(src) } : { response: response(src) };
}

function responses(src: JsonObject): Pb {
  const codes: Pb[] = [];
  for (const [code, v] of Object.entries(src)) {
    if (isObject(v) && (/^[0-9]{3}$/.test(code) || code === 'default')) codes.push({ name: code, value: responseValue(v) });
  }
  return withExtensions(src, { response_code: codes });
}

function securityRequirement(src: JsonObject): Pb {
  const entries: Pb[] = [];
  for (const [name, scopes] of Object.entries(src)) {
    const value = Array.isArray(scopes) ? scopes.filter((s): s is string => typeof s === 'string') : [];
    entries.push({ name, value: { value } });
  }
  return { additional_properties: entries };
}

function operation(src: JsonObject): Pb {
  const out = copy(src, [
    ['tags', 'tags', 'strings'],
    ['summary', 'summary', 'string'],
    ['description', 'description', 'string'],
  ]);
  setIf(out, 'external_docs', optionalObject(src['externalDocs'], externalDocs));
  copy(
    src,
    [
      ['operationId', 'operation_id', 'string'],
      ['produces', 'produces', 'strings'],
      ['consumes', 'consumes', 'strings'],
    ],
    out,
  );
  if (Array.isArray(src['parameters'])) out['parameters'] = objectElements(src['parameters']).map(parametersItem);
  setIf(out, 'responses', optionalObject(src['responses'], responses));
  copy(
    src,
    [
      ['schemes', 'schemes', 'strings'],
      ['deprecated', 'deprecated', 'bool'],
    ],
    out,
  );
  if (Array.isArray(src['security'])) out['security'] = objectElements(src['security']).map(securityRequirement);
  return withExtensions(src, out);
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

function pathItem(src: JsonObject): Pb {
  const out = copy(src, [['$ref', '_ref', 'string']]);
  for (const method of METHODS) setIf(out, method, optionalObject(src[method], operation));
  if (Array.isArray(src['parameters'])) out['parameters'] = objectElements(src['parameters']).map(parametersItem);
  return withExtensions(src, out);
}

function paths(src: JsonObject): Pb {
  const out = withExtensions(src, {});
  out['path'] = Object.entries(src)
    .filter((entry): entry is [string, JsonObject] => entry[0].startsWith('/') && isObject(entry[1]))
    .map(([name, v]) => ({ name, value: pathItem(v) }));
  return out;
}

function oauth2Scopes(src: unknown): Pb {
  const entries: Pb[] = [];
  if (isObject(src)) for (const [name, v] of Object.entries(src)) if (typeof v === 'string') entries.push({ name, value: v });
  return { additional_properties: entries };
}

function securityDefinitionsItem(src: JsonObject): Pb {
  const common = (extra: readonly Rule[]): Pb => {
    const out = copy(src, [
      ['type', 'type', 'string'],
      ['flow', 'flow', 'string'],
    ]);
    out['scopes'] = oauth2Scopes(src['scopes']);
    copy(src, [...extra, ['description', 'description', 'string']], out);
    return withExtensions(src, out);
  };
  const auth: Rule = ['authorizationUrl', 'authorization_url', 'string'];
  const token: Rule = ['tokenUrl', 'token_url', 'string'];
  switch (src['type']) {
    case 'basic':
      return {
        basic_authentication_security: withExtensions(
          src,
          copy(src, [
            ['type', 'type', 'string'],
            ['description', 'description', 'string'],
          ]),
        ),
      };
    case 'apiKey':
      return {
        api_key_security: withExtensions(
          src,
          copy(src, [
            ['type', 'type', 'string'],
            ['name', 'name', 'string'],
            ['in', 'in', 'string'],
            ['description', 'description', 'string'],
          ]),
        ),
      };
    default:
      switch (src['flow']) {
        case 'implicit':
          return { oauth2_implicit_security: common([auth]) };
        case 'password':
          return { oauth2_password_security: common([token]) };
        case 'application':
          return { oauth2_application_security: common([token]) };
        default:
          return { oauth2_access_code_security: common([auth, token]) };
      }
  }
}

function info(src: JsonObject): Pb {
  const out = copy(src, [
    ['title', 'title', 'string'],
    ['version', 'version', 'string'],
    ['description', 'description', 'string'],
    ['termsOfService', 'terms_of_service', 'string'],
  ]);
  setIf(
    out,
    'contact',
    optionalObject(src['contact'], (c) =>
      withExtensions(
        c,
        copy(c, [
          ['name', 'name', 'string'],
          ['url', 'url', 'string'],
          ['email', 'email', 'string'],
        ]),
      ),
    ),
  );
  setIf(
    out,
    'license',
    optionalObject(src['license'], (l) =>
      withExtensions(
        l,
        copy(l, [
          ['name', 'name', 'string'],
          ['url', 'url', 'string'],
        ]),
      ),
    ),
  );
  return withExtensions(src, out);
}

function tag(src: JsonObject): Pb {
  const out = copy(src, [
    ['name', 'name', 'string'],
    ['description', 'description', 'string'],
  ]);
  setIf(out, 'external_docs', optionalObject(src['externalDocs'], externalDocs));
  return withExtensions(src, out);
}

function toDocument(src: JsonObject): Pb {
  const out = copy(src, [['swagger', 'swagger', 'string']]);
  setIf(out, 'info', optionalObject(src['info'], info));
  copy(
    src,
    [
      ['host', 'host', 'string'],
      ['basePath', 'base_path', 'string'],
      ['schemes', 'schemes', 'strings'],
      ['consumes', 'consumes', 'strings'],
      ['produces', 'produces', 'strings'],
    ],
    out,
  );
  setIf(out, 'paths', optionalObject(src['paths'], paths));
  if (isObject(src['definitions'])) out['definitions'] = { additional_properties: named(src['definitions'], schema) };
  if (isObject(src['parameters'])) out['parameters'] = { additional_properties: named(src['parameters'], parameter) };
  if (isObject(src['responses'])) out['responses'] = { additional_properties: named(src['responses'], response) };
  if (Array.isArray(src['security'])) out['security'] = objectElements(src['security']).map(securityRequirement);
  if (isObject(src['securityDefinitions'])) {
    out['security_definitions'] = { additional_properties: named(src['securityDefinitions'], securityDefinitionsItem) };
  }
  if (Array.isArray(src['tags'])) out['tags'] = objectElements(src['tags']).map(tag);
  setIf(out, 'external_docs', optionalObject(src['externalDocs'], externalDocs));
  return withExtensions(src, out);
}
