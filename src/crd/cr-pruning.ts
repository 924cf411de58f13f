import { isObject, type Obj } from '../api/object-util.js';
import { additionalPropertiesOf, isEmbeddedResource, itemsOf, OBJECT_META_FIELDS, preservesUnknown, propertiesOf } from './cr-schema-nodes.js';

/**
 * kube's pruning of custom resources (apiextensions' structural pruning): fields the schema does not
 * declare are removed in place, unless a node preserves unknown fields. At the resource root and in
 * embedded resources, `apiVersion` and `kind` are kept and `metadata` is pruned to ObjectMeta's fields.
 * Returns the removed fields' paths (`spec.foo`, `spec.items[0].bar`), sorted as kube reports them.
 */
export function pruneCustomResource(obj: Obj, schema: Obj): string[] {
  const pruned: string[] = [];
  pruneObject(obj, schema, '', true, pruned);
  return pruned.sort();
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function pruneValue(value: unknown, node: Obj | undefined, path: string, pruned: string[]): void {
  if (node === undefined) return;
  if (Array.isArray(value)) {
    const items = itemsOf(node);
    if (items === undefined) return;
    value.forEach((v, i) => pruneValue(v, items, `${path}[${i}]`, pruned));
  } else if (isObject(value)) {
    pruneObject(value, node, path, isEmbeddedResource(node), pruned);
  }
}

function pruneMetadata(meta: unknown, path: string, pruned: string[]): void {
  if (!isObject(meta)) return;
  for (const key of Object.keys(meta)) {
    if (OBJECT_META_FIELDS.has(key)) continue;
    delete meta[key];
    pruned.push(join(path, key));
  }
}

function pruneObject(obj: Obj, node: Obj, path: string, resource: boolean, pruned: string[]): void {
  const properties = propertiesOf(node);
  const additional = additionalPropertiesOf(node);
  const preserve = preservesUnknown(node);
  for (const key of Object.keys(obj)) {
    const field = join(path, key);
    if (resource && (key === 'apiVersion' || key === 'kind')) continue;
    if (resource && key === 'metadata') {
      pruneMetadata(obj[key], field, pruned);
      continue;
    }
    const declared = properties[key] ?? additional;
    if (declared !== undefined) pruneValue(obj[key], declared, field, pruned);
    else if (!preserve) {
      delete obj[key];
      pruned.push(field);
    }
  }
}

/** Prunes VALUE (any JSON value) in place by schema NODE as kube prunes a default; returns the removed fields' paths. */
export function pruneBySchema(value: unknown, node: Obj): string[] {
  const pruned: string[] = [];
  pruneValue(value, node, '', pruned);
  return pruned;
}
