import { schemaForKind, type SchemaNode } from '../../schema/openapi-schema.js';

/**
 * Where a built-in kind has fields whose Go type changes their CBOR form, read from the OpenAPI schema:
 * `[]byte` fields (`format: byte`: ConfigMap binaryData, Secret data, CSR request/certificate, webhook
 * caBundles) are CBOR byte strings tagged 22 where JSON has base64 text, and `float64` fields
 * (`type: number`: a CRD schema's minimum, maximum, multipleOf) are CBOR floats even when whole.
 * Everything else follows the value (see cbor-encoder.ts). Custom resources have no such fields: kube
 * holds them as unstructured content.
 */

/**
 * What a position holds: a []byte, a float64, a structure with such fields somewhere below, or
 * (`embedded`) a whole object whose own kind says (a Table row's object).
 */
export type FieldKind = 'bytes' | 'float' | 'embedded' | FieldTree;

/** The positions below a structure that matter: by field name, any map value, any list item. */
export interface FieldTree {
  fields: Map<string, FieldKind>;
  /** Map values (`additionalProperties`) or list items. */
  each?: FieldKind;
}

const byDefinition = new Map<string, FieldTree | null>();
const building = new Set<string>();

function kindOf(node: SchemaNode, depth: number): FieldKind | undefined {
  if (depth > 64) return undefined;
  if (node.format() === 'byte') return 'bytes';
  if (node.type() === 'number') return 'float';
  if (node.isList()) {
    const items = node.items();
    const each = items ? kindOf(items, depth + 1) : undefined;
    return each === undefined ? undefined : { fields: new Map(), each };
  }
  const def = node.definition;
  if (def !== undefined) {
    if (byDefinition.has(def)) return byDefinition.get(def) ?? undefined;
    // A definition that refers to itself (JSONSchemaProps): the tree is shared, filled once.
    if (building.has(def)) return lazyTree(def);
    building.add(def);
    const tree = treeOf(node, depth);
    building.delete(def);
    const shared = pending.get(def);
    if (shared) {
      if (tree) Object.assign(shared, tree);
      pending.delete(def);
      byDefinition.set(def, shared);
      return shared;
    }
    byDefinition.set(def, tree ?? null);
    return tree;
  }
  return treeOf(node, depth);
}

const pending = new Map<string, FieldTree>();

function lazyTree(def: string): FieldTree {
  let tree = pending.get(def);
  if (!tree) {
    tree = { fields: new Map() };
    pending.set(def, tree);
  }
  return tree;
}

function treeOf(node: SchemaNode, depth: number): FieldTree | undefined {
  const fields = new Map<string, FieldKind>();
  for (const name of node.propertyNames()) {
    const child = node.property(name);
    const k = child ? kindOf(child, depth + 1) : undefined;
    if (k !== undefined) fields.set(name, k);
  }
  const ap = node.additionalProperties();
  const each = ap ? kindOf(ap, depth + 1) : undefined;
  if (fields.size === 0 && each === undefined) return undefined;
  return each === undefined ? { fields } : { fields, each };
}

const byKind = new Map<string, FieldTree | null>();

/** meta.k8s.io/v1 Table: each row's object is encoded as its own kind. */
const TABLE: FieldTree = { fields: new Map([['rows', { fields: new Map(), each: { fields: new Map([['object', 'embedded']]) } }]]) };

/**
 * The field tree of a built-in kind (its list kind included: items are the kind's objects), undefined
 * when nothing in it needs more than the value to be encoded.
 */
export function fieldKindsFor(apiVersion: string, kind: string): FieldTree | undefined {
  if (kind === 'Table' && apiVersion === 'meta.k8s.io/v1') return TABLE;
  const key = `${apiVersion}/${kind}`;
  const known = byKind.get(key);
  if (known !== undefined) return known ?? undefined;
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const node = schemaForKind(group, version, kind);
  const k = node ? kindOf(node, 0) : undefined;
  const tree = typeof k === 'object' ? k : undefined;
  byKind.set(key, tree ?? null);
  return tree;
}
