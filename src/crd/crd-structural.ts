import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { patternError } from './cr-pattern.js';
import { forbiddenField, invalidField, requiredField } from '../validation/field-errors.js';
import { asString } from '../api/values.js';

/**
 * kube's structural-schema rules for a CRD version's `openAPIV3Schema` (apiextensions-apiserver's
 * schema.ValidateStructural), read from the v1 JSON: every node says its type (except int-or-string
 * and unknown-preserving nodes), arrays have items, `metadata` may only restrict name and
 * generateName, additionalProperties is not at the root, value validations (allOf, anyOf, oneOf,
 * not) only restrict what the structure already declares, and patterns compile as Go's regexp.
 * Findings are sorted as kube sorts them (by their text).
 */

type Level = 'root' | 'item' | 'field';

/** Fields a structural schema cannot be built with at all (kube's NewStructural fails on them). */
const UNCONVERTIBLE: [string, string][] = [
  ['id', 'id'],
  ['$schema', 'schema'],
  ['$ref', '$ref'],
  ['patternProperties', 'patternProperties'],
  ['dependencies', 'dependencies'],
  ['additionalItems', 'additionalItems'],
  ['definitions', 'definitions'],
];

const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const;

function schemas(v: unknown): Obj[] {
  return Array.isArray(v) ? v.map((s) => (isObject(s) ? s : {})) : [];
}

function props(node: Obj): [string, Obj][] {
  return isObject(node.properties) ? Object.entries(node.properties).map(([k, v]) => [k, isObject(v) ? v : {}]) : [];
}

function set(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function nonEmptyList(v: unknown): boolean {
  return Array.isArray(v) && v.length > 0;
}

/**
 * Why kube cannot build a structural schema from NODE (its NewStructural error), or undefined. The
 * CRD's own schema rules report these fields first; the error only shows when they did not.
 */
export function unconvertibleReason(node: Obj): string | undefined {
  for (const [key, name] of UNCONVERTIBLE) {
    const v = node[key];
    if (key === '$ref' ? set(v) : key === 'dependencies' ? isObject(v) : nonEmptyField(v)) return `OpenAPIV3Schema '${name}' is not supported`;
  }
  if (node['x-kubernetes-preserve-unknown-fields'] === false) return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined";
  if (Array.isArray(node.items)) return "OpenAPIV3Schema 'items' must be a schema, but is an array";
  const children: Obj[] = [...props(node).map(([, v]) => v), ...JUNCTORS.flatMap((j) => schemas(node[j]))];
  if (isObject(node.items)) children.push(node.items);
  if (isObject(node.not)) children.push(node.not);
  if (isObject(node.additionalProperties)) children.push(node.additionalProperties);
  for (const c of children) {
    const reason = unconvertibleReason(c);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

function nonEmptyField(v: unknown): boolean {
  if (typeof v === 'string') return v !== '';
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return set(v) && v !== false;
}

/** kube's fixed int-or-string alternatives: `anyOf: [{type: integer}, {type: string}]`, nothing else. */
function isIntOrStringAnyOf(anyOf: unknown): boolean {
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return false;
  return ['integer', 'string'].every((t, i) => {
    const a: unknown = anyOf[i];
    return isObject(a) && Object.keys(a).length === 1 && a.type === t;
  });
}

function firstAllOfIsIntOrString(node: Obj): boolean {
  const allOf = schemas(node.allOf);
  return allOf.length >= 1 && isIntOrStringAnyOf(allOf[0]?.anyOf);
}

/** Value validations: the junctors and the pattern of NODE (structural or nested). */
function valueValidation(node: Obj, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, path: string, out: StatusCause[]): void {
  if (!skipAnyOf) schemas(node.anyOf).forEach((s, i) => nested(s, false, `${path}.anyOf[${i}]`, out));
  schemas(node.allOf).forEach((s, i) => nested(s, skipFirstAllOfAnyOf && i === 0, `${path}.allOf[${i}]`, out));
  schemas(node.oneOf).forEach((s, i) => nested(s, false, `${path}.oneOf[${i}]`, out));
  if (isObject(node.not)) nested(node.not, false, `${path}.not`, out);
  const pattern = asString(node.pattern);
  if (pattern !== '') {
    const err = patternError(pattern);
    if (err !== undefined) out.push(invalidField(`${path}.pattern`, pattern, `must be a valid regular expression, but isn't: ${err}`));
  }
}

/** A schema under allOf/anyOf/oneOf/not: it may only restrict values, never say structure. */
function nested(node: Obj, skipAnyOf: boolean, path: string, out: StatusCause[]): void {
  valueValidation(node, skipAnyOf, false, path, out);
  if (isObject(node.items)) nested(node.items, false, `${path}.items`, out);
  for (const [k, v] of props(node)) nested(v, false, `${path}.properties[${k}]`, out);
  if (asString(node.type) !== '') out.push(forbiddenField(`${path}.type`, 'must be empty to be structural'));
  if (isObject(node.additionalProperties) || node.additionalProperties === true)
    out.push(forbiddenField(`${path}.additionalProperties`, 'must be undefined to be structural'));
  if (set(node.default)) out.push(forbiddenField(`${path}.default`, 'must be undefined to be structural'));
  if (asString(node.title) !== '') out.push(forbiddenField(`${path}.title`, 'must be empty to be structural'));
  if (asString(node.description) !== '') out.push(forbiddenField(`${path}.description`, 'must be empty to be structural'));
  if (node.nullable === true) out.push(forbiddenField(`${path}.nullable`, 'must be false to be structural'));
  if (node['x-kubernetes-preserve-unknown-fields'] === true)
    out.push(forbiddenField(`${path}.x-kubernetes-preserve-unknown-fields`, 'must be false to be structural'));
  if (node['x-kubernetes-embedded-resource'] === true) out.push(forbiddenField(`${path}.x-kubernetes-embedded-resource`, 'must be false to be structural'));
  if (node['x-kubernetes-int-or-string'] === true) out.push(forbiddenField(`${path}.x-kubernetes-int-or-string`, 'must be false to be structural'));
  if (nonEmptyList(node['x-kubernetes-list-map-keys'])) out.push(forbiddenField(`${path}.x-kubernetes-list-map-keys`, 'must be empty to be structural'));
  if (set(node['x-kubernetes-list-type'])) out.push(forbiddenField(`${path}.x-kubernetes-list-type`, 'must be undefined to be structural'));
  if (set(node['x-kubernetes-map-type'])) out.push(forbiddenField(`${path}.x-kubernetes-map-type`, 'must be undefined to be structural'));
  if (nonEmptyList(node['x-kubernetes-validations'])) out.push(forbiddenField(`${path}.x-kubernetes-validations`, 'must be empty to be structural'));
  if (isObject(node.properties) && node.properties.metadata !== undefined)
    out.push(forbiddenField(`${path}.properties[metadata]`, 'must not be specified in a nested context'));
}

/** Keys of a metadata schema kube ignores at the root: its type, default, and name/generateName properties. */
const METADATA_IGNORED = new Set(['type', 'default']);

/** Whether a root `metadata` schema says more than name and generateName (after kube drops type and default). */
function metadataSaysMore(node: Obj): boolean {
  for (const [k, v] of Object.entries(node)) {
    if (METADATA_IGNORED.has(k) || v === undefined) continue;
    if (k === 'properties' && isObject(v)) {
      const keys = Object.keys(v);
      const onlyNames = keys.length > 0 && keys.length <= 2 && keys.every((p) => p === 'name' || p === 'generateName');
      if (keys.length === 0 || onlyNames) continue;
      return true;
    }
    if (v === false || v === null || v === '') continue;
    return true;
  }
  return false;
}

const LEVEL_TYPE_DETAIL: Record<Level, string> = {
  root: 'must not be empty at the root',
  item: 'must not be empty for specified array items',
  field: 'must not be empty for specified object fields',
};

function invariants(node: Obj, level: Level, path: string, out: StatusCause[]): void {
  const type = asString(node.type);
  const embedded = node['x-kubernetes-embedded-resource'] === true;
  const preserve = node['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = node['x-kubernetes-int-or-string'] === true;
  const additional = node.additionalProperties;
  if (type === 'array' && !isObject(node.items)) out.push(requiredField(`${path}.items`, 'must be specified'));
  if (isObject(node.items)) invariants(node.items, 'item', `${path}.items`, out);
  for (const [k, v] of props(node)) invariants(v, 'field', `${path}.properties[${k}]`, out);
  if (set(additional)) {
    if (level === 'root') out.push(forbiddenField(`${path}.additionalProperties`, 'must not be used at the root'));
    if (isObject(additional)) invariants(additional, 'field', `${path}.additionalProperties`, out);
  }
  if (intOrString && preserve)
    out.push(invalidField(`${path}.x-kubernetes-preserve-unknown-fields`, true, 'must be false if x-kubernetes-int-or-string is true'));
  if (intOrString && embedded) out.push(invalidField(`${path}.x-kubernetes-embedded-resource`, true, 'must be false if x-kubernetes-int-or-string is true'));
  valueValidation(node, isIntOrStringAnyOf(node.anyOf), firstAllOfIsIntOrString(node), path, out);

  const checkMetadata = level === 'root' || embedded;
  if (embedded && type !== 'object') {
    if (type === '') out.push(requiredField(`${path}.type`, 'must be object if x-kubernetes-embedded-resource is true'));
    else out.push(invalidField(`${path}.type`, type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (type === '' && !intOrString && !preserve) out.push(requiredField(`${path}.type`, LEVEL_TYPE_DETAIL[level]));
  if (embedded && set(additional)) out.push(forbiddenField(`${path}.additionalProperties`, 'must not be used if x-kubernetes-embedded-resource is set'));
  if (level === 'root' && type !== '' && type !== 'object') out.push(invalidField(`${path}.type`, type, 'must be object at the root'));
  const properties = isObject(node.properties) ? node.properties : {};
  for (const key of ['kind', 'apiVersion']) {
    const p = properties[key];
    if (p !== undefined && checkMetadata) {
      const t = isObject(p) ? asString(p.type) : '';
      if (t !== 'string') out.push(invalidField(`${path}.properties[${key}].type`, t, 'must be string'));
    }
  }
  const metadata = properties.metadata;
  if (metadata !== undefined) {
    const meta = isObject(metadata) ? metadata : {};
    const metaPath = `${path}.properties[metadata]`;
    if (checkMetadata && asString(meta.type) !== 'object') out.push(invalidField(`${metaPath}.type`, asString(meta.type), 'must be object'));
    if (level === 'root' && metadataSaysMore(meta))
      out.push(forbiddenField(metaPath, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
  }
  if (embedded && !preserve && Object.keys(properties).length === 0)
    out.push(requiredField(`${path}.properties`, 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'));
}

/** kube's completeness of the root's value validations: what they name must exist in the structure. */
function completeness(v: Obj, s: Obj | undefined, sPath: string, vPath: string, out: StatusCause[]): void {
  if (s === undefined) {
    out.push(requiredField(sPath, `because it is defined in ${vPath}`));
    return;
  }
  if (isObject(v.not)) completeness(v.not, s, sPath, `${vPath}.not`, out);
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const) schemas(v[j]).forEach((n, i) => completeness(n, s, sPath, `${vPath}.${j}[${i}]`, out));
  if (isObject(v.items)) completeness(v.items, isObject(s.items) ? s.items : undefined, `${sPath}.items`, `${vPath}.items`, out);
  const sProps = isObject(s.properties) ? s.properties : {};
  for (const [k, n] of props(v)) {
    const sp = sProps[k];
    if (sp === undefined) out.push(requiredField(`${sPath}.properties[${k}]`, `because it is defined in ${vPath}.properties[${k}]`));
    else completeness(n, isObject(sp) ? sp : {}, `${sPath}.properties[${k}]`, `${vPath}.properties[${k}]`, out);
  }
}

/** The findings of kube's ValidateStructural for SCHEMA at PATH, sorted by their text. */
export function validateStructural(schema: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  invariants(schema, 'root', path, out);
  if (isObject(schema.not)) completeness(schema.not, schema, path, `${path}.not`, out);
  for (const j of ['allOf', 'anyOf', 'oneOf'] as const) schemas(schema[j]).forEach((n, i) => completeness(n, schema, path, `${path}.${j}[${i}]`, out));
  const text = (c: StatusCause): string => `${c.field ?? ''}: ${c.message ?? ''}`;
  return out.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}
