import { type JsonObject } from './json-value.js';
import { isObject } from '../api/values.js';

/**
 * Derives kube-apiserver's per-group-version OpenAPI 3.0 documents from the Swagger 2.0 document.
 *
 * kube-apiserver builds one v3 document per web service root: `api`, `api/v1`, `apis`, `apis/GROUP`,
 * `apis/GROUP/VERSION`, plus non-resource roots such as `version` or `.well-known/openid-configuration`.
 * Each holds that root's paths and only the schemas they reference (transitively). Parameters are
 * inlined (clients such as kubectl read `parameters[].name` to detect `fieldValidation` support), body
 * parameters become `requestBody` with one content entry per consumed media type, responses carry one
 * content entry per produced media type, and a `$ref` with sibling members is wrapped in `allOf`, as
 * kube-openapi's builder3 does, since OpenAPI 3.0 ignores the siblings of a `$ref`.
 */

const V2_DEFINITION_PREFIX = '#/definitions/';
const V3_SCHEMA_PREFIX = '#/components/schemas/';
const V2_PARAMETER_PREFIX = '#/parameters/';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'] as const;

/** Descriptions kube-openapi gives responses (net/http's status texts); the schema facts have none. */
const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No Content',
  '401': 'Unauthorized',
};

/**
 * The v3 document key (web service root, no leading slash) serving the v2 path PATH, e.g.
 * `/apis/apps/v1/namespaces/{namespace}/deployments` -> `apis/apps/v1`, `/apis/apps/` -> `apis/apps`,
 * `/logs/{logpath}` -> `logs`.
 */
export function v3KeyOfPath(path: string): string {
  const segments = path.split('/').filter((s) => s !== '');
  const [first, second, third] = segments;
  if (first === 'api') return second === undefined ? 'api' : `api/${second}`;
  if (first === 'apis') {
    if (second === undefined) return 'apis';
    return third === undefined ? `apis/${second}` : `apis/${second}/${third}`;
  }
  const fixed: string[] = [];
  for (const s of segments) {
    if (s.startsWith('{')) break;
    fixed.push(s);
  }
  return fixed.join('/');
}

/** Every v2 path of DOC grouped by its v3 document key; keys and paths sorted. */
export function groupPathsByV3Key(doc: JsonObject): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  const paths = isObject(doc['paths']) ? Object.keys(doc['paths']) : [];
  for (const path of paths.sort()) {
    if (!path.startsWith('/')) continue;
    const key = v3KeyOfPath(path);
    if (key === '') continue;
    const list = groups.get(key);
    if (list) list.push(path);
    else groups.set(key, [path]);
  }
  return new Map([...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function rewriteRef(ref: string): string {
  return ref.startsWith(V2_DEFINITION_PREFIX) ? V3_SCHEMA_PREFIX + ref.slice(V2_DEFINITION_PREFIX.length) : ref;
}

/** Converts one v2 schema to v3: refs rewritten, refs with siblings wrapped in allOf; a fresh object. */
export function convertSchema(src: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(src)) {
    if (key.startsWith('x-')) out[key] = value;
    else if (key === '$ref' && typeof value === 'string') out[key] = rewriteRef(value);
    else if (key === 'properties' && isObject(value)) {
      const props: JsonObject = {};
      for (const [name, prop] of Object.entries(value)) props[name] = isObject(prop) ? convertSchema(prop) : prop;
      out[key] = props;
    } else if ((key === 'items' || key === 'additionalProperties' || key === 'not') && isObject(value)) {
      out[key] = convertSchema(value);
    } else if ((key === 'items' || key === 'allOf' || key === 'anyOf' || key === 'oneOf') && Array.isArray(value)) {
      out[key] = value.map((s: unknown) => (isObject(s) ? convertSchema(s) : s));
    } else out[key] = value;
  }
  const ref = out['$ref'];
  if (typeof ref === 'string' && Object.keys(out).length > 1) {
    delete out['$ref'];
    const existing = Array.isArray(out['allOf']) ? (out['allOf'] as unknown[]) : [];
    return { allOf: [{ $ref: ref }, ...existing], ...withoutKey(out, 'allOf') };
  }
  return out;
}

function withoutKey(obj: JsonObject, key: string): JsonObject {
  const copy: JsonObject = { ...obj };
  delete copy[key];
  return copy;
}

/** Looks up a `#/parameters/NAME` reference of the v2 document. */
function resolveParameter(doc: JsonObject, param: JsonObject): JsonObject | undefined {
  const ref = param['$ref'];
  if (typeof ref !== 'string') return param;
  if (!ref.startsWith(V2_PARAMETER_PREFIX)) return undefined;
  const defs = doc['parameters'];
  const found = isObject(defs) ? defs[ref.slice(V2_PARAMETER_PREFIX.length)] : undefined;
  return isObject(found) ? found : undefined;
}

const SIMPLE_SCHEMA_KEYS = [
  'type',
  'format',
  'items',
  'collectionFormat',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'enum',
  'multipleOf',
] as const;

/** A v2 non-body parameter as a v3 parameter object: its simple-schema members move under `schema`. */
function convertParameter(param: JsonObject): JsonObject {
  const out: JsonObject = { name: param['name'], in: param['in'] };
  if (typeof param['description'] === 'string') out['description'] = param['description'];
  if (param['required'] === true) out['required'] = true;
  if (param['allowEmptyValue'] === true) out['allowEmptyValue'] = true;
  const schema: JsonObject = {};
  for (const key of SIMPLE_SCHEMA_KEYS) {
    const value = param[key];
    if (value === undefined || key === 'collectionFormat') continue;
    schema[key] = key === 'items' && isObject(value) ? convertSchema(value) : value;
  }
  out['schema'] = isObject(param['schema']) ? convertSchema(param['schema']) : schema;
  for (const [key, value] of Object.entries(param)) if (key.startsWith('x-')) out[key] = value;
  return out;
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : undefined;
}

function mediaContent(types: readonly string[], schema: JsonObject): JsonObject {
  const content: JsonObject = {};
  for (const type of types) content[type] = { schema: convertSchema(schema) };
  return content;
}

function convertResponse(response: JsonObject, code: string, produces: readonly string[]): JsonObject {
  const ref = response['$ref'];
  if (typeof ref === 'string') return { $ref: ref.replace('#/responses/', '#/components/responses/') };
  const description = typeof response['description'] === 'string' ? response['description'] : (STATUS_TEXT[code] ?? '');
  const out: JsonObject = { description };
  const schema = response['schema'];
  if (isObject(schema)) out['content'] = mediaContent(produces.length > 0 ? produces : ['application/json'], schema);
  for (const [key, value] of Object.entries(response)) if (key.startsWith('x-')) out[key] = value;
  return out;
}

function convertOperation(doc: JsonObject, op: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of ['tags', 'summary', 'description'] as const) if (op[key] !== undefined) out[key] = op[key];
  if (isObject(op['externalDocs'])) out['externalDocs'] = op['externalDocs'];
  if (typeof op['operationId'] === 'string') out['operationId'] = op['operationId'];
  const consumes = stringList(op['consumes']) ?? stringList(doc['consumes']) ?? ['*/*'];
  const produces = stringList(op['produces']) ?? stringList(doc['produces']) ?? [];
  const parameters: JsonObject[] = [];
  for (const raw of Array.isArray(op['parameters']) ? op['parameters'] : []) {
    if (!isObject(raw)) continue;
    const param = resolveParameter(doc, raw);
    if (param === undefined) continue;
    if (param['in'] === 'body') {
      const schema = isObject(param['schema']) ? param['schema'] : {};
      const body: JsonObject = { content: mediaContent(consumes, schema) };
      if (typeof param['description'] === 'string') body['description'] = param['description'];
      if (param['required'] === true) body['required'] = true;
      out['requestBody'] = body;
    } else parameters.push(convertParameter(param));
  }
  if (parameters.length > 0) out['parameters'] = parameters;
  // Key order as kube-openapi marshals an operation: requestBody after parameters, then responses.
  const body = out['requestBody'];
  if (body !== undefined) {
    delete out['requestBody'];
    out['requestBody'] = body;
  }
  const responses: JsonObject = {};
  if (isObject(op['responses'])) {
    for (const [code, response] of Object.entries(op['responses'])) {
      if (isObject(response)) responses[code] = convertResponse(response, code, produces);
    }
  }
  out['responses'] = responses;
  if (op['deprecated'] === true) out['deprecated'] = true;
  if (Array.isArray(op['security'])) out['security'] = op['security'];
  for (const [key, value] of Object.entries(op)) if (key.startsWith('x-')) out[key] = value;
  return out;
}

function convertPathItem(doc: JsonObject, item: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const method of METHODS) {
    const op = item[method];
    if (isObject(op)) out[method] = convertOperation(doc, op);
  }
  const parameters: JsonObject[] = [];
  for (const raw of Array.isArray(item['parameters']) ? item['parameters'] : []) {
    if (!isObject(raw)) continue;
    const param = resolveParameter(doc, raw);
    if (param !== undefined && param['in'] !== 'body') parameters.push(convertParameter(param));
  }
  if (parameters.length > 0) out['parameters'] = parameters;
  for (const [key, value] of Object.entries(item)) if (key.startsWith('x-')) out[key] = value;
  return out;
}

/** Names of the schemas `#/components/schemas/NAME` referenced anywhere inside VALUE, added to OUT. */
function collectRefs(value: unknown, out: Set<string>): void {
  if (Array.isArray(value)) {
    for (const v of value) collectRefs(v, out);
    return;
  }
  if (!isObject(value)) return;
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string' && v.startsWith(V3_SCHEMA_PREFIX)) out.add(v.slice(V3_SCHEMA_PREFIX.length));
    else if (!key.startsWith('x-')) collectRefs(v, out);
  }
}

function convertSecuritySchemes(defs: unknown): JsonObject | undefined {
  if (!isObject(defs)) return undefined;
  const out: JsonObject = {};
  for (const [name, def] of Object.entries(defs)) {
    if (!isObject(def)) continue;
    const scheme: JsonObject = { type: def['type'] };
    for (const key of ['description', 'name', 'in'] as const) if (def[key] !== undefined) scheme[key] = def[key];
    if (typeof def['flow'] === 'string') {
      const flow: JsonObject = {};
      if (def['authorizationUrl'] !== undefined) flow['authorizationUrl'] = def['authorizationUrl'];
      if (def['tokenUrl'] !== undefined) flow['tokenUrl'] = def['tokenUrl'];
      flow['scopes'] = isObject(def['scopes']) ? def['scopes'] : {};
      scheme['flows'] = { [def['flow']]: flow };
    }
    for (const [key, value] of Object.entries(def)) if (key.startsWith('x-')) scheme[key] = value;
    out[name] = scheme;
  }
  return out;
}

/**
 * The OpenAPI 3.0 document of the v2 paths PATHS of DOC (normally one v3 key's paths): paths
 * converted, plus `components.schemas` holding exactly the definitions they reference, transitively.
 * A reference to a definition DOC lacks is kept as is (it will not resolve).
 */
export function buildV3Document(doc: JsonObject, paths: readonly string[]): JsonObject {
  const v2Paths = isObject(doc['paths']) ? doc['paths'] : {};
  const v3Paths: JsonObject = {};
  for (const path of [...paths].sort()) {
    const item = v2Paths[path];
    if (isObject(item)) v3Paths[path] = convertPathItem(doc, item);
  }
  const definitions = isObject(doc['definitions']) ? doc['definitions'] : {};
  const schemas = new Map<string, JsonObject>();
  const pending = new Set<string>();
  collectRefs(v3Paths, pending);
  while (pending.size > 0) {
    const next = new Set<string>();
    for (const name of pending) {
      if (schemas.has(name)) continue;
      const def = definitions[name];
      if (!isObject(def)) continue;
      const converted = convertSchema(def);
      schemas.set(name, converted);
      collectRefs(converted, next);
    }
    pending.clear();
    for (const name of next) if (!schemas.has(name)) pending.add(name);
  }
  const components: JsonObject = {
    schemas: Object.fromEntries([...schemas.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  };
  const securitySchemes = convertSecuritySchemes(doc['securityDefinitions']);
  if (securitySchemes !== undefined) components['securitySchemes'] = securitySchemes;
  const out: JsonObject = { openapi: '3.0.0' };
  if (isObject(doc['info'])) out['info'] = doc['info'];
  out['paths'] = v3Paths;
  out['components'] = components;
  return out;
}
