import type { SchemaNode } from '../schema/openapi-schema.js';

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const RAW_EXTENSION = 'io.k8s.apimachinery.pkg.runtime.RawExtension';

/**
 * Defaults kube's own OpenAPI models declare for list-map keys (`+default=`) that the published
 * v2 document leaves out; structured-merge-diff names an item that omits such a key by its default.
 */
const KEY_DEFAULTS: ReadonlyMap<string, unknown> = new Map([
  ['io.k8s.api.core.v1.ContainerPort.protocol', 'TCP'],
  ['io.k8s.api.core.v1.ServicePort.protocol', 'TCP'],
]);

/** How structured-merge-diff treats one position of an object (kube-openapi's schemaconv rules). */
export type SmdType =
  | { readonly kind: 'scalar' }
  /** An object: struct fields and/or map values; `atomic` when `x-kubernetes-map-type: atomic`. */
  | {
      readonly kind: 'map';
      readonly atomic: boolean;
      /** True when fields it does not name are not declared (custom resources' closed objects). */
      readonly closed?: boolean;
      field(name: string): SmdType;
      named(name: string): boolean;
    }
  /**
   * A list: `atomic` ones are one leaf; associative ones are keyed by `keys` (a list map) or by
   * the item's value (a set, `keys` empty and `set` true).
   */
  | {
      readonly kind: 'list';
      readonly atomic: boolean;
      readonly set: boolean;
      readonly keys: readonly string[];
      elem(): SmdType;
      keyDefault(name: string): unknown;
    }
  /** No schema: maps are walked field by field ("deduced"), lists and scalars are leaves; `atomic` makes maps leaves too. */
  | { readonly kind: 'untyped'; readonly atomic: boolean };

/** The deduced type kube gives unknown and schemaless positions. */
export const DEDUCED: SmdType = { kind: 'untyped', atomic: false };
const UNTYPED_ATOMIC: SmdType = { kind: 'untyped', atomic: true };
const SCALAR: SmdType = { kind: 'scalar' };

/**
 * The structured-merge-diff type of `node`, as kube's schemaconv derives it from the OpenAPI
 * schema: `x-kubernetes-map-type` (on the reference or the definition), `x-kubernetes-list-type`
 * and `-list-map-keys`, else the patch strategy and merge key, else atomic lists; int-or-string,
 * quantities, dates and unknown formats are scalars; RawExtension is atomic; no schema is deduced.
 */
export function smdTypeOf(node: SchemaNode | undefined): SmdType {
  if (node === undefined) return DEDUCED;
  if (node.definition === QUANTITY) return SCALAR;
  if (node.definition === RAW_EXTENSION) return UNTYPED_ATOMIC;
  const type = node.type();
  if (type === 'object') return objectType(node);
  if (type === 'array') return listType(node);
  if (type === undefined) {
    if (node.isIntOrString()) return SCALAR;
    if (node.propertyNames().length > 0 || node.additionalProperties() !== undefined) return objectType(node);
    return node.preservesUnknownFields() ? DEDUCED : DEDUCED;
  }
  return SCALAR;
}

function objectType(node: SchemaNode): SmdType {
  const props = new Set(node.propertyNames());
  const extra = node.additionalProperties();
  return {
    kind: 'map',
    atomic: node.mapType() === 'atomic',
    named: (name: string): boolean => props.has(name),
    field(name: string): SmdType {
      if (props.has(name)) return smdTypeOf(node.property(name));
      if (extra !== undefined) return smdTypeOf(extra);
      return DEDUCED;
    },
  };
}

function listType(node: SchemaNode): SmdType {
  let atomic = true;
  let set = false;
  let keys: string[] = [];
  const declared = node.listType();
  if (declared !== undefined) {
    if (declared === 'set') {
      atomic = false;
      set = true;
    } else if (declared === 'map') {
      atomic = false;
      keys = node.listMapKeys();
    }
  } else {
    const strategies = node.patchStrategies();
    if (strategies.includes('merge')) {
      atomic = false;
      const key = node.patchMergeKey();
      if (key !== undefined) keys = [key];
      else set = true;
    }
  }
  const items = node.items();
  return {
    kind: 'list',
    atomic,
    set,
    keys,
    elem: () => smdTypeOf(items),
    keyDefault(name: string): unknown {
      const prop = items?.property(name);
      if (prop === undefined) return undefined;
      const declared = 'default' in prop.own ? prop.own.default : prop.resolved.default;
      if (declared !== undefined) return declared;
      return items === undefined ? undefined : KEY_DEFAULTS.get(`${items.definition}.${name}`);
    },
  };
}
