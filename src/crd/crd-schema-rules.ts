import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { forbiddenField, goJson, invalidField, notSupportedField, requiredField } from '../validation/field-errors.js';
import { asString } from '../api/values.js';

/**
 * kube's rules for the fields of a CRD schema (ValidateCustomResourceDefinitionOpenAPISchema with
 * the v1 create options), node by node: unsupported JSON Schema keywords (`$ref`, `id`,
 * `patternProperties`, `uniqueItems: true`, ...), `additionalProperties` beside `properties`,
 * defaults where pruning could not keep them (top-level apiVersion, kind and metadata, inside
 * metadata maps), and the consistency of the x-kubernetes-* extensions (list types, list map keys
 * that are required or defaulted scalars, map types). CEL rules are checked elsewhere.
 */

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

/** Where a node sits, as kube's specStandardValidator tracks it. */
interface Context {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
}

function set(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function nonEmpty(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return false;
}

/** kube's specStandardValidatorV3.validate: keywords a CRD schema may not use anywhere. */
function standard(node: Obj, path: string, ctx: Context, out: StatusCause[]): void {
  const type = asString(node.type);
  if (type !== '' && !OPENAPI_V3_TYPES.includes(type)) out.push(notSupportedField(`${path}.type`, type, OPENAPI_V3_TYPES));
  if (set(node.default) && !ctx.allowDefaults) {
    const reason = ctx.disallowDefaultsReason;
    out.push(forbiddenField(`${path}.default`, reason === '' ? 'must not be set' : `must not be set ${reason}`));
  }
  if (asString(node.id) !== '') out.push(forbiddenField(`${path}.id`, 'id is not supported'));
  if (set(node.additionalItems)) out.push(forbiddenField(`${path}.additionalItems`, 'additionalItems is not supported'));
  if (nonEmpty(node.patternProperties)) out.push(forbiddenField(`${path}.patternProperties`, 'patternProperties is not supported'));
  if (nonEmpty(node.definitions)) out.push(forbiddenField(`${path}.definitions`, 'definitions is not supported'));
  if (isObject(node.dependencies)) out.push(forbiddenField(`${path}.dependencies`, 'dependencies is not supported'));
  if (set(node.$ref)) out.push(forbiddenField(`${path}.$ref`, '$ref is not supported'));
  if (type === 'null') out.push(forbiddenField(`${path}.type`, 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(node.items) && node.items.length > 0) out.push(forbiddenField(`${path}.items`, 'items must be a schema object and not an array'));
  if (ctx.insideResourceMeta && node['x-kubernetes-embedded-resource'] === true)
    out.push(forbiddenField(`${path}.x-kubernetes-embedded-resource`, 'must not be used inside of resource meta'));
}

function withoutDefaults(ctx: Context, reason: string): Context {
  return { ...ctx, allowDefaults: false, disallowDefaultsReason: reason };
}

/** kube's validateMapListKeysMapSet: set and map items are not nullable; map keys are required or defaulted, never nullable. */
function mapListKeysMapSet(node: Obj, path: string, out: StatusCause[]): void {
  const items = node.items;
  const listType = node['x-kubernetes-list-type'];
  if (!isObject(items) || (listType !== 'set' && listType !== 'map')) return;
  if (items.nullable === true) out.push(forbiddenField(`${path}.items.nullable`, `cannot be nullable when x-kubernetes-list-type is ${listType}`));
  if (listType !== 'map') return;
  const required = new Set(Array.isArray(items.required) ? items.required : []);
  const properties = isObject(items.properties) ? items.properties : {};
  for (const k of Array.isArray(node['x-kubernetes-list-map-keys']) ? node['x-kubernetes-list-map-keys'] : []) {
    const p = typeof k === 'string' ? properties[k] : undefined;
    if (!isObject(p)) continue;
    if (!required.has(k) && !set(p.default))
      out.push(
        requiredField(
          `${path}.items.properties[${k}].default`,
          'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
        ),
      );
    if (p.nullable === true)
      out.push(forbiddenField(`${path}.items.properties[${k}].nullable`, 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable'));
  }
}

/** The list and map type extensions of NODE. */
function collectionExtensions(node: Obj, path: string, out: StatusCause[]): void {
  const type = asString(node.type);
  const mapType = node['x-kubernetes-map-type'];
  const listType = node['x-kubernetes-list-type'];
  const keys = node['x-kubernetes-list-map-keys'];
  if (set(mapType) && type !== 'object') {
    if (type === '') out.push(requiredField(`${path}.type`, 'must be object if x-kubernetes-map-type is specified'));
    else out.push(invalidField(`${path}.type`, type, 'must be object if x-kubernetes-map-type is specified'));
  }
  if (set(mapType) && mapType !== 'atomic' && mapType !== 'granular')
    out.push(notSupportedField(`${path}.x-kubernetes-map-type`, asString(mapType), ['atomic', 'granular']));
  if (set(listType) && type !== 'array') {
    if (type === '') out.push(requiredField(`${path}.type`, 'must be array if x-kubernetes-list-type is specified'));
    else out.push(invalidField(`${path}.type`, type, 'must be array if x-kubernetes-list-type is specified'));
  } else if (listType === 'set' && isObject(node.items)) {
    const items = node.items;
    const itemListType = items['x-kubernetes-list-type'];
    if (items.type === 'array' && set(itemListType) && itemListType !== 'atomic')
      out.push(
        invalidField(`${path}.items.x-kubernetes-list-type`, asString(itemListType), 'must be atomic as item of a list with x-kubernetes-list-type=set'),
      );
    // kube prints the items' list type here (unset for an object), whatever the map type says.
    if (items.type === 'object' && items['x-kubernetes-map-type'] !== 'atomic')
      out.push(
        invalidField(
          `${path}.items.x-kubernetes-map-type`,
          set(itemListType) ? asString(itemListType) : null,
          'must be atomic as item of a list with x-kubernetes-list-type=set',
        ),
      );
  }
  if (set(listType) && listType !== 'atomic' && listType !== 'set' && listType !== 'map')
    out.push(notSupportedField(`${path}.x-kubernetes-list-type`, asString(listType), ['atomic', 'set', 'map']));
  const keyList = Array.isArray(keys) ? keys : [];
  if (keyList.length > 0) {
    if (!set(listType)) out.push(requiredField(`${path}.x-kubernetes-list-type`, 'must be map if x-kubernetes-list-map-keys is non-empty'));
    else if (listType !== 'map')
      out.push(invalidField(`${path}.x-kubernetes-list-type`, asString(listType), 'must be map if x-kubernetes-list-map-keys is non-empty'));
  }
  if (listType === 'map') {
    if (keyList.length === 0) out.push(requiredField(`${path}.x-kubernetes-list-map-keys`, 'must not be empty if x-kubernetes-list-type is map'));
    const items = node.items;
    if (items === undefined || items === null) out.push(requiredField(`${path}.items`, 'must have a schema if x-kubernetes-list-type is map'));
    else if (Array.isArray(items)) out.push(invalidField(`${path}.items`, goJson(items), 'must only have a single schema if x-kubernetes-list-type is map'));
    else if (isObject(items) && items.type !== 'object')
      out.push(invalidField(`${path}.items.type`, asString(items.type), "must be object if parent array's x-kubernetes-list-type is map"));
    else if (isObject(items)) {
      const properties = isObject(items.properties) ? items.properties : {};
      const seen = new Set<unknown>();
      for (const k of keyList) {
        const p = typeof k === 'string' ? properties[k] : undefined;
        if (isObject(p)) {
          if (p.type === 'array' || p.type === 'object')
            out.push(
              invalidField(`${path}.items.properties[${String(k)}].type`, 'object', "must be a scalar type if parent array's x-kubernetes-list-type is map"),
            );
        } else out.push(invalidField(`${path}.x-kubernetes-list-map-keys`, goJson(keyList), 'entries must all be names of item properties'));
        if (seen.has(k)) out.push(invalidField(`${path}.x-kubernetes-list-map-keys`, goJson(keyList), 'must not contain duplicate entries'));
        seen.add(k);
      }
    }
  }
  mapListKeysMapSet(node, path, out);
}

function walk(node: Obj, path: string, ctx: Context, isRoot: boolean, out: StatusCause[]): void {
  standard(node, path, ctx, out);
  if (node.uniqueItems === true)
    out.push(forbiddenField(`${path}.uniqueItems`, 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));
  const properties = isObject(node.properties) ? node.properties : {};
  const additional = node.additionalProperties;
  if (set(additional)) {
    if (Object.keys(properties).length > 0 && (additional === false || isObject(additional)))
      out.push(forbiddenField(`${path}.additionalProperties`, 'additionalProperties and properties are mutual exclusive'));
    const sub = ctx.insideResourceMeta ? withoutDefaults(ctx, 'inside additionalProperties applying to object metadata') : ctx;
    if (isObject(additional)) walk(additional, `${path}.additionalProperties`, sub, false, out);
  }
  for (const k of Object.keys(properties).sort()) {
    let sub = ctx;
    if ((isRoot || node['x-kubernetes-embedded-resource'] === true) && META_FIELDS.has(k)) {
      sub = { ...sub, insideResourceMeta: true };
      if (isRoot) sub = withoutDefaults(sub, `in top-level ${k}`);
    }
    const p = properties[k];
    walk(isObject(p) ? p : {}, `${path}.properties[${k}]`, sub, false, out);
  }
  if (isObject(node.not)) walk(node.not, `${path}.not`, ctx, false, out);
  for (const j of ['allOf', 'oneOf', 'anyOf'] as const) {
    const list = node[j];
    if (Array.isArray(list)) list.forEach((s, i) => walk(isObject(s) ? s : {}, `${path}.${j}[${i}]`, ctx, false, out));
  }
  if (isObject(node.definitions))
    for (const k of Object.keys(node.definitions).sort()) {
      const d = node.definitions[k];
      walk(isObject(d) ? d : {}, `${path}.definitions[${k}]`, ctx, false, out);
    }
  if (isObject(node.items)) walk(node.items, `${path}.items`, ctx, false, out);
  else if (Array.isArray(node.items)) node.items.forEach((s, i) => walk(isObject(s) ? s : {}, `${path}.items[${i}]`, ctx, false, out));
  if (isObject(node.dependencies))
    for (const [k, d] of Object.entries(node.dependencies)) if (isObject(d)) walk(d, `${path}.dependencies[${k}]`, ctx, false, out);
  if (node['x-kubernetes-preserve-unknown-fields'] === false)
    out.push(invalidField(`${path}.x-kubernetes-preserve-unknown-fields`, false, 'must be true or undefined'));
  collectionExtensions(node, path, out);
}

/** The findings of kube's schema field rules for a CRD version's SCHEMA at PATH (`...openAPIV3Schema`). */
export function validateSchemaRules(schema: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  walk(schema, path, { allowDefaults: true, disallowDefaultsReason: '', insideResourceMeta: false }, true, out);
  return out;
}
