import { isObject, type Obj } from '../api/object-util.js';
import { additionalPropertiesOf, isEmbeddedResource, isIntOrString, itemsOf, preservesUnknown, propertiesOf } from '../crd/cr-schema-nodes.js';
import { schemaForDefinition } from '../schema/openapi-schema.js';
import { DEDUCED, smdTypeOf, type SmdType } from './smd-type.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const SCALAR: SmdType = { kind: 'scalar' };
const UNTYPED_ATOMIC: SmdType = { kind: 'untyped', atomic: true };

let objectMetaType: SmdType | undefined;
function objectMeta(): SmdType {
  objectMetaType ??= smdTypeOf(schemaForDefinition(OBJECT_META));
  return objectMetaType;
}

/**
 * The structured-merge-diff type of a custom resource whose CRD version has `schema` (its
 * `openAPIV3Schema`; undefined: none), as kube-apiserver builds it for the CRD's field manager
 * (apiextensions' OpenAPI builder, then kube-openapi's schemaconv): the root and every embedded
 * resource get `apiVersion`, `kind` and ObjectMeta `metadata`; `x-kubernetes-list-type` and
 * `-list-map-keys` make lists sets or list maps (else atomic); `x-kubernetes-map-type: atomic`
 * makes an object a leaf; `x-kubernetes-preserve-unknown-fields` opens a node and all its
 * descendants to undeclared fields, which are deduced; an object that declares no properties is
 * open too; int-or-string and other untyped nodes are scalars (their maps deduced). An object
 * that declares properties and is not opened is `closed`: other fields are not declared.
 */
export function customResourceType(schema: Obj | undefined): SmdType {
  if (schema === undefined) return DEDUCED;
  return nodeType(schema, false, true);
}

function nodeType(node: Obj, inheritedPreserve: boolean, isRoot = false): SmdType {
  const preserve = inheritedPreserve || preservesUnknown(node);
  const type = typeof node.type === 'string' ? node.type : '';
  if (type === 'array') return listType(node, preserve);
  if (type === 'object' || isRoot || isEmbeddedResource(node)) return objectType(node, preserve, isRoot || isEmbeddedResource(node));
  if (type === '') {
    if (isIntOrString(node)) return SCALAR;
    // An untyped node (preserve-unknown-fields without a type): maps are walked, lists are leaves.
    return Object.keys(propertiesOf(node)).length > 0 ? objectType(node, preserve, false) : DEDUCED;
  }
  return SCALAR;
}

function objectType(node: Obj, preserve: boolean, resource: boolean): SmdType {
  const props = propertiesOf(node);
  const names = new Set(Object.keys(props));
  if (resource) for (const n of ['apiVersion', 'kind', 'metadata']) names.add(n);
  const extra = additionalPropertiesOf(node);
  const open = extra !== undefined || preserve || names.size === 0;
  const cache = new Map<string, SmdType>();
  return {
    kind: 'map',
    atomic: node['x-kubernetes-map-type'] === 'atomic',
    closed: !open,
    named: (name: string): boolean => names.has(name),
    field(name: string): SmdType {
      const cached = cache.get(name);
      if (cached !== undefined) return cached;
      let t: SmdType;
      if (resource && name === 'metadata') t = objectMeta();
      else if (resource && (name === 'apiVersion' || name === 'kind')) t = SCALAR;
      else if (props[name] !== undefined) t = nodeType(props[name], preserve);
      else if (extra !== undefined) t = nodeType(extra, preserve);
      else t = DEDUCED;
      cache.set(name, t);
      return t;
    },
  };
}

function listType(node: Obj, preserve: boolean): SmdType {
  const declared = node['x-kubernetes-list-type'];
  const keys = Array.isArray(node['x-kubernetes-list-map-keys']) ? node['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string') : [];
  const items = itemsOf(node);
  const elem = items === undefined ? UNTYPED_ATOMIC : nodeType(items, preserve);
  return {
    kind: 'list',
    atomic: declared !== 'set' && declared !== 'map',
    set: declared === 'set',
    keys: declared === 'map' ? keys : [],
    elem: () => elem,
    keyDefault(name: string): unknown {
      const prop = items === undefined ? undefined : propertiesOf(items)[name];
      return prop === undefined ? undefined : prop.default;
    },
  };
}

/**
 * The fields of `value` a closed object of `type` does not declare, as structured-merge-diff
 * reports them (`.spec.bogus: field not declared in schema`), in the value's order.
 */
export function undeclaredFields(value: unknown, type: SmdType, path = ''): string[] {
  const out: string[] = [];
  if (type.kind === 'map' && isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const p = `${path}.${k}`;
      if (type.closed === true && !type.named(k)) {
        out.push(`${p}: field not declared in schema`);
        continue;
      }
      out.push(...undeclaredFields(v, type.field(k), p));
    }
  } else if (type.kind === 'list' && Array.isArray(value)) {
    const elem = type.elem();
    value.forEach((v, i) => out.push(...undeclaredFields(v, elem, `${path}[${i}]`)));
  }
  return out;
}
