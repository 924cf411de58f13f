import type { OpenApiContribution } from '../openapi/openapi-service.js';
import type { JsonObject } from '../openapi/json-value.js';
import { isObject } from '../api/object-util.js';
import type { CrdModel, CrdNames } from './crd-model.js';

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
const V3_ONLY = new Set(['nullable', 'oneOf', 'anyOf', 'not', 'allOf', 'x-kubernetes-validations']);

/** kube's definition name prefix of a group: its DNS labels reversed (`example.com` -> `com.example`). */
export function definitionPrefix(group: string): string {
  return group.split('.').reverse().join('.');
}

/** The schema as Swagger 2.0 allows it, recursively. */
function toV2Schema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toV2Schema);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(schema)) {
    if (V3_ONLY.has(k)) continue;
    if (k === 'x-kubernetes-int-or-string' && v === true) {
      out[k] = v;
      continue;
    }
    if (k === 'properties' || k === 'patternProperties' || k === 'definitions') {
      out[k] = isObject(v) ? Object.fromEntries(Object.entries(v).map(([name, s]) => [name, toV2Schema(s)])) : v;
    } else if (k === 'items' || k === 'additionalProperties') out[k] = toV2Schema(v);
    else out[k] = v;
  }
  return out;
}

function operation(action: string, id: string, ref: string, gvk: JsonObject, consumes: string[], tag: string, description: string): JsonObject {
  return {
    consumes,
    description,
    operationId: id,
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
    operation(action, id, target, kind, consumes, tag, describe(action, id.endsWith('Status') ? 'status' : id.endsWith('Scale') ? 'scale' : ''));
  const base = `/apis/${group}/${version}`;
  const scoped = namespaced ? `${base}/namespaces/{namespace}/${names.plural}` : `${base}/${names.plural}`;
  const nameParam = { in: 'path', name: 'name', required: true, type: 'string', uniqueItems: true };
  const nsParam = { in: 'path', name: 'namespace', required: true, type: 'string', uniqueItems: true };
  const scopeParams = namespaced ? [nsParam] : [];
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
  if (namespaced) paths[`${base}/${names.plural}`] = { get: op('list', `list${gv}${names.kind}ForAllNamespaces`, listRef, gvk) };
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
    const schema = toV2Schema(structuredClone(v.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }));
    const def: JsonObject = isObject(schema) ? schema : {};
    const properties = isObject(def.properties) ? def.properties : {};
    def.properties = {
      apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
      kind: { description: KIND_DESCRIPTION, type: 'string' },
      metadata: { $ref: `#/definitions/${META}.ObjectMeta`, description: METADATA_DESCRIPTION },
      ...Object.fromEntries(Object.entries(properties).filter(([k]) => k !== 'apiVersion' && k !== 'kind' && k !== 'metadata')),
    };
    def.type = 'object';
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
