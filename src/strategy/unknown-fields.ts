import type { SchemaNode } from '../schema/openapi-schema.js';

/**
 * Unknown-field pruning of built-in types, as kube-apiserver's typed decoding does it: a field the
 * type's schema does not declare is never stored. Objects whose schema declares no properties (maps,
 * RawExtension, preserve-unknown-fields) are opaque and kept as sent.
 */

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function walk(value: unknown, schema: SchemaNode, path: string, found: string[]): void {
  if (schema.preservesUnknownFields()) return;
  if (Array.isArray(value)) {
    const items = schema.items();
    if (items) value.forEach((v, i) => walk(v, items, `${path}[${i}]`, found));
    return;
  }
  if (!isObject(value)) return;
  const declared = schema.propertyNames();
  if (declared.length === 0) {
    const values = schema.additionalProperties();
    if (values) for (const [k, v] of Object.entries(value)) walk(v, values, path === '' ? k : `${path}.${k}`, found);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    const child = schema.property(k);
    const childPath = path === '' ? k : `${path}.${k}`;
    if (!child) {
      found.push(childPath);
      delete value[k];
      continue;
    }
    walk(v, child, childPath, found);
  }
}

/**
 * Removes from `obj` (in place) every field `schema` does not declare and returns their paths in
 * document order, in the form of Go's strict decoding errors (`spec.containers[0].foo`).
 */
export function pruneUnknownFields(obj: Obj, schema: SchemaNode): string[] {
  const found: string[] = [];
  walk(obj, schema, '', found);
  return found;
}
