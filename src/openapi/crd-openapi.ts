import type { OpenApiContribution } from './openapi-service.js';
import type { JsonObject } from './json-value.js';
import { isObject } from '../api/object-util.js';
import type { CrdModel, CrdNames } from '../crd/crd-model.js';
import { definitionPrefix } from '../crd/crd-model.js';

/**
 * The Swagger 2.0 paths and definitions a CRD's served versions add to /openapi/v2 (and, derived by
 * the OpenAPI service, to /openapi/v3/apis/GROUP/VERSION), after kube's CRD OpenAPI builder: one
 * definition per kind and version named `<reversed group>.<version>.<Kind>` with the version's schema
 * plus apiVersion, kind and metadata, its List, and the resource's collection, item, status and scale paths.
 */

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const API_VERSION_DESCRIPTION =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DESCRIPTION =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const METADATA_DESCRIPTION =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DESCRIPTION =
  'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** Keywords Swagger 2.0 cannot say; kube drops them when publishing a CRD schema in v2. */
const V3_ONLY = new Set(['nullable', 'oneOf', 'anyOf', 'not', 'allOf', 'default']);

function mapSchemas(v: unknown, f: (s: unknown) => unknown): unknown {
  return isObject(v) ? Object.fromEntries(Object.entries(v).map(([name, s]) => [name, f(s)])) : v;
}

/**
 * The schema as kube publishes it in Swagger 2.0 (ToStructuralOpenAPIV2): no allOf/oneOf/anyOf/not
 * or defaults; a nullable or unknown-preserving node loses its items and properties, and its type
 * when that cannot hold null or unknown fields; required fields that may be null are not required.
 */
function toV2Schema(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) {
    if (V3_ONLY.has(k)) continue;
    if (k === 'properties' || k === 'patternProperties' || k === 'definitions') out[k] = mapSchemas(v, toV2Schema);
    else if (k === 'items') out[k] = Array.isArray(v) ? v.map(toV2Schema) : toV2Schema(v);
    else if (k === 'additionalProperties') out[k] = toV2Schema(v);
    else out[k] = v;
  }
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  if (schema.nullable === true) {
    delete out.type;
    delete out.items;
    delete out.properties;
  }
  if (preserve) {
    delete out.items;
    delete out.properties;
  }
  if (out.items === undefined && out.type === 'array') delete out.type;
  if (preserve && out.type === 'object') delete out.type;
  if (Array.isArray(out.required)) {
    const props = isObject(schema.properties) ? schema.properties : {};
    const additional = schema.additionalProperties;
    if (isObject(additional) && additional.nullable === true) delete out.required;
    else out.required = out.required.filter((f) => !(typeof f === 'string' && isObject(props[f]) && props[f].nullable === true));
  }
  return out;
}

const EMBEDDED_API_VERSION =
  'apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const EMBEDDED_KIND =
  'kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** The schema as kube publishes it in OpenAPI v3: as written, with embedded resources' apiVersion, kind and metadata spelled out. */
function toV3Schema(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'properties' || k === 'patternProperties' || k === 'definitions') out[k] = mapSchemas(v, toV3Schema);
    else if (k === 'items') out[k] = Array.isArray(v) ? v.map(toV3Schema) : toV3Schema(v);
    else if (k === 'additionalProperties' || k === 'not') out[k] = toV3Schema(v);
    else if (k === 'allOf' || k === 'oneOf' || k === 'anyOf') out[k] = Array.isArray(v) ? v.map(toV3Schema) : v;
    else out[k] = v;
  }
  if (schema['x-kubernetes-embedded-resource'] === true) {
    const props = isObject(out.properties) ? out.properties : {};
    out.required = [...new Set([...(Array.isArray(out.required) ? (out.required as unknown[]) : []), 'kind', 'apiVersion'])];
    out.properties = {
      ...props,
      apiVersion: { description: EMBEDDED_API_VERSION, type: 'string' },
      kind: { description: EMBEDDED_KIND, type: 'string' },
      metadata: { description: METADATA_DESCRIPTION, allOf: [{ $ref: `#/components/schemas/${META}.ObjectMeta` }] },
    };
  }
  return out;
}

/**
 * kube's addEmbeddedProperties for Swagger 2.0: each embedded resource (outside nodes that keep
 * unknown fields, whose properties v2 drops) lists apiVersion, kind and metadata and requires kind
 * and apiVersion.
 */
function addEmbeddedPropertiesV2(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  if (isObject(schema.properties)) for (const v of Object.values(schema.properties)) addEmbeddedPropertiesV2(v);
  if (isObject(schema.items)) addEmbeddedPropertiesV2(schema.items);
  if (isObject(schema.additionalProperties)) addEmbeddedPropertiesV2(schema.additionalProperties);
  if (schema['x-kubernetes-preserve-unknown-fields'] === true || schema['x-kubernetes-embedded-resource'] !== true) return schema;
  schema.properties = {
    ...(isObject(schema.properties) ? schema.properties : {}),
    apiVersion: { description: EMBEDDED_API_VERSION, type: 'string' },
    kind: { description: EMBEDDED_KIND, type: 'string' },
    metadata: { $ref: `#/definitions/${META}.ObjectMeta`, description: METADATA_DESCRIPTION },
  };
  const required = Array.isArray(schema.required) ? (schema.required as unknown[]) : [];
  schema.required = [...required, ...['kind', 'apiVersion'].filter((k) => !required.includes(k))];
  return schema;
}

/**
 * The OpenAPI v3 schema of the CR kind of VERSION of CRD, as kube serves it in
 * /openapi/v3/apis/GROUP/VERSION (the derived v2 form loses v3-only keywords).
 */
export function crdV3KindSchema(crd: CrdModel, names: CrdNames, version: string): JsonObject | undefined {
  const v = crd.versions.find((x) => x.name === version && x.served);
  if (v === undefined) return undefined;
  const converted = toV3Schema(structuredClone(v.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }));
  const def: JsonObject = isObject(converted) ? converted : {};
  const properties = isObject(def.properties) ? def.properties : {};
  def.properties = {
    apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
    kind: { description: KIND_DESCRIPTION, type: 'string' },
    metadata: { description: METADATA_DESCRIPTION, allOf: [{ $ref: `#/components/schemas/${META}.ObjectMeta` }] },
    ...Object.fromEntries(Object.entries(properties).filter(([k]) => k !== 'apiVersion' && k !== 'kind' && k !== 'metadata')),
  };
  def.type = 'object';
  def['x-kubernetes-group-version-kind'] = [{ group: crd.group, kind: names.kind, version }];
  return def;
}

/** The name of the definition of KIND in VERSION of GROUP. */
export function definitionName(group: string, version: string, kind: string): string {
  return `${definitionPrefix(group)}.${version}.${kind}`;
}

/** A parameter the built-in document shares under `#/parameters/` (schema/openapi-v2.json). */
const shared = (id: string): JsonObject => ({ $ref: `#/parameters/${id}` });
const query = (name: string): JsonObject => ({ in: 'query', name, type: 'string', uniqueItems: true });
const LIST_PARAMETERS = [
  'allowWatchBookmarks-HC2hJt-J',
  'continue-QfD61s0i',
  'fieldSelector-xIcQKXFG',
  'labelSelector-5Zw57w4C',
  'limit-1NfNmdNH',
  'resourceVersion-5WAnf1kx',
  'resourceVersionMatch-t8XhRHeC',
  'sendInitialEvents-rLXlEK_k',
  'shardSelector-Kgyki_3_',
  'timeoutSeconds-yvYezaOC',
  'watch-XNNPZGbK',
].map(shared);
const DELETE_OPTIONS = [
  'gracePeriodSeconds--K5HaBOS',
  'ignoreStoreReadErrorWithClusterBreakingPotential-QbNkfIqj',
  'orphanDependents-uRB25kX5',
  'propagationPolicy-6jk3prlO',
].map(shared);

/**
 * The query (and body) parameters of each action, as kube's CRD OpenAPI builder declares them from
 * the options types (and as the built-in kinds list them): `dryRun`, `fieldManager` and
 * `fieldValidation` on writes (kubectl leaves validation to the server when it finds the latter),
 * list options on list and deletecollection, delete options on deletes.
 */
function parametersOf(action: string, ref: string): JsonObject[] {
  const body = { in: 'body', name: 'body', required: true, schema: { $ref: ref } };
  switch (action) {
    case 'list':
      return LIST_PARAMETERS;
    case 'post':
    case 'put':
      return [body, query('dryRun'), shared('fieldManager-Qy4HdaTW'), query('fieldValidation')];
    case 'patch':
      return [shared('body-78PwaGsr'), query('dryRun'), shared('fieldManager-7c6nTn1T'), query('fieldValidation'), shared('force-tOGGb0Yi')];
    case 'delete':
      return [shared('body-2Y1dVQaQ'), query('dryRun'), ...DELETE_OPTIONS];
    case 'deletecollection':
      return [
        shared('body-2Y1dVQaQ'),
        ...LIST_PARAMETERS.slice(1, 2),
        query('dryRun'),
        ...LIST_PARAMETERS.slice(2, 3),
        ...DELETE_OPTIONS.slice(0, 2),
        ...LIST_PARAMETERS.slice(3, 5),
        ...DELETE_OPTIONS.slice(2),
        ...LIST_PARAMETERS.slice(5, 10),
      ];
    default:
      return [];
  }
}

function operation(
  action: string,
  id: string,
  ref: string,
  gvk: JsonObject,
  consumes: string[],
  tag: string,
  description: string,
  bodyRef: string,
): JsonObject {
  const parameters = parametersOf(action, bodyRef);
  return {
    consumes,
    description,
    operationId: id,
    ...(parameters.length > 0 ? { parameters } : {}),
    produces: ['application/json', 'application/yaml'],
    responses: { '200': { schema: { $ref: ref } }, '401': {} },
    schemes: ['https'],
    tags: [tag],
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': gvk,
  };
}

/** kube's Go-style name part of a group or version: `zz1.example.com` -> `Zz1ExampleCom`. */
function camel(value: string): string {
  return value
    .split(/[.-]/)
    .filter((p) => p !== '')
    .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
    .join('');
}

const PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];
const BODY_TYPES = ['application/json', 'application/yaml'];

function pathsOf(group: string, version: string, names: CrdNames, namespaced: boolean, status: boolean, scale: boolean, prefix: string): JsonObject {
  const gvk = { group, kind: names.kind, version };
  const ref = `#/definitions/${prefix}.${version}.${names.kind}`;
  const listRef = `#/definitions/${prefix}.${version}.${names.listKind}`;
  const statusRef = `#/definitions/${META}.Status`;
  const scaleRef = '#/definitions/io.k8s.api.autoscaling.v1.Scale';
  const gv = `${camel(group)}${camel(version)}`;
  const scope = namespaced ? 'Namespaced' : '';
  const opKind = `${gv}${scope}${names.kind}`;
  const tag = `${camel(group).charAt(0).toLowerCase()}${camel(group).slice(1)}_${version}`;
  const k = names.kind;
  const describe = (action: string, sub: string): string => {
    const of = sub === '' ? '' : `${sub} of `;
    switch (action) {
      case 'list':
        return `list objects of kind ${k}`;
      case 'post':
        return `create a ${k}`;
      case 'deletecollection':
        return `delete collection of ${k}`;
      case 'delete':
        return `delete a ${k}`;
      case 'put':
        return `replace ${of}the specified ${k}`;
      case 'patch':
        return `partially update ${of}the specified ${k}`;
      default:
        return `read ${of}the specified ${k}`;
    }
  };
  const op = (action: string, id: string, target: string, kind: JsonObject, consumes = BODY_TYPES): JsonObject =>
    operation(action, id, target, kind, consumes, tag, describe(action, id.endsWith('Status') ? 'status' : id.endsWith('Scale') ? 'scale' : ''), target);
  const base = `/apis/${group}/${version}`;
  const scoped = namespaced ? `${base}/namespaces/{namespace}/${names.plural}` : `${base}/${names.plural}`;
  const nameParam = { in: 'path', name: 'name', required: true, type: 'string', uniqueItems: true };
  const pretty = shared('pretty-tJGM1-ng');
  const scopeParams = namespaced ? [shared('namespace-vgWSWtn3'), pretty] : [pretty];
  const paths: JsonObject = {
    [scoped]: {
      get: op('list', `list${opKind}`, listRef, gvk),
      post: op('post', `create${opKind}`, ref, gvk),
      delete: op('deletecollection', `delete${gv}Collection${scope}${names.kind}`, statusRef, gvk),
      parameters: scopeParams,
    },
    [`${scoped}/{name}`]: {
      get: op('get', `read${opKind}`, ref, gvk),
      put: op('put', `replace${opKind}`, ref, gvk),
      patch: op('patch', `patch${opKind}`, ref, gvk, PATCH_TYPES),
      delete: op('delete', `delete${opKind}`, statusRef, gvk),
      parameters: [nameParam, ...scopeParams],
    },
  };
  if (namespaced) paths[`${base}/${names.plural}`] = { get: op('list', `list${gv}${names.kind}ForAllNamespaces`, listRef, gvk), parameters: [pretty] };
  if (status) {
    paths[`${scoped}/{name}/status`] = {
      get: op('get', `read${opKind}Status`, ref, gvk),
      put: op('put', `replace${opKind}Status`, ref, gvk),
      patch: op('patch', `patch${opKind}Status`, ref, gvk, PATCH_TYPES),
      parameters: [nameParam, ...scopeParams],
    };
  }
  if (scale) {
    const scaleGvk = { group: 'autoscaling', kind: 'Scale', version: 'v1' };
    paths[`${scoped}/{name}/scale`] = {
      get: op('get', `read${opKind}Scale`, scaleRef, scaleGvk),
      put: op('put', `replace${opKind}Scale`, scaleRef, scaleGvk),
      patch: op('patch', `patch${opKind}Scale`, scaleRef, scaleGvk, PATCH_TYPES),
      parameters: [nameParam, ...scopeParams],
    };
  }
  return paths;
}

/**
 * The contribution of CRD's served versions, under the names it has been accepted with. A version
 * without a schema gets an object schema that preserves unknown fields.
 */
export function crdOpenApiContribution(crd: CrdModel, names: CrdNames): OpenApiContribution {
  const prefix = definitionPrefix(crd.group);
  const paths: JsonObject = {};
  const definitions: JsonObject = {};
  for (const v of crd.versions) {
    if (!v.served) continue;
    const gvk = [{ group: crd.group, kind: names.kind, version: v.name }];
    const original = v.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    let def: JsonObject;
    if (original['x-kubernetes-preserve-unknown-fields'] === true) {
      // kube publishes a bare object: any property it listed would make kubectl refuse unknown fields.
      def = { type: 'object' };
    } else {
      const schema = addEmbeddedPropertiesV2(toV2Schema(structuredClone(original)));
      def = isObject(schema) ? schema : {};
      const properties = isObject(def.properties) ? def.properties : {};
      def.properties = {
        apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
        kind: { description: KIND_DESCRIPTION, type: 'string' },
        metadata: { $ref: `#/definitions/${META}.ObjectMeta`, description: METADATA_DESCRIPTION },
        ...Object.fromEntries(Object.entries(properties).filter(([k]) => k !== 'apiVersion' && k !== 'kind' && k !== 'metadata')),
      };
      def.type = 'object';
    }
    def['x-kubernetes-group-version-kind'] = gvk;
    definitions[`${prefix}.${v.name}.${names.kind}`] = def;
    definitions[`${prefix}.${v.name}.${names.listKind}`] = {
      description: `${names.kind}List is a list of ${names.kind}`,
      required: ['items'],
      type: 'object',
      properties: {
        apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
        items: {
          description: `List of ${names.plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
          type: 'array',
          items: { $ref: `#/definitions/${prefix}.${v.name}.${names.kind}` },
        },
        kind: { description: KIND_DESCRIPTION, type: 'string' },
        metadata: { $ref: `#/definitions/${META}.ListMeta`, description: LIST_METADATA_DESCRIPTION },
      },
      'x-kubernetes-group-version-kind': [{ group: crd.group, kind: names.listKind, version: v.name }],
    };
    Object.assign(paths, pathsOf(crd.group, v.name, names, crd.namespaced, v.status, v.scale !== undefined, prefix));
  }
  return { paths, definitions };
}
