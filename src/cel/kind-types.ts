/**
 * CEL types of built-in kinds, from Capstan's OpenAPI v2 definitions (schema/openapi-v2.json), for
 * declaring `object`, `oldObject` or `params` of admission policies and match conditions: the same
 * mapping as custom resources' schemas (types.ts), with `$ref`s followed, IntOrString as dyn and
 * recursive definitions cut to dyn.
 */
import { schemaForKind, type SchemaNode } from '../schema/openapi-schema.js';
import { DYN, escapeFieldName, listOf, mapOf, objectOf, STRING, typeFromSchema, type CelType } from './types.js';

const byDefinition = new Map<string, CelType>();

function typeOfNode(node: SchemaNode, stack: Set<string>): CelType {
  const def = node.definition;
  if (def !== undefined) {
    const hit = byDefinition.get(def);
    if (hit !== undefined) return hit;
    if (stack.has(def) || def.endsWith('.JSONSchemaProps') || def.endsWith('.JSON')) return DYN;
  }
  if (node.format() === 'int-or-string') return DYN;
  const type = node.type();
  let out: CelType;
  if (type === 'array') {
    const items = node.items();
    out = listOf(items === undefined ? DYN : typeOfNode(items, withDef(stack, def)));
  } else if (type === 'object' || node.propertyNames().length > 0) {
    const names = node.propertyNames();
    if (names.length === 0) {
      const ap = node.additionalProperties();
      out = ap === undefined ? DYN : mapOf(STRING, typeOfNode(ap, withDef(stack, def)));
    } else {
      const fields = new Map<string, CelType>();
      for (const name of names) {
        const escaped = escapeFieldName(name);
        const sub = node.property(name);
        if (escaped !== undefined && sub !== undefined) fields.set(escaped, typeOfNode(sub, withDef(stack, def)));
      }
      out = objectOf(def ?? 'object', fields);
    }
  } else {
    out = typeFromSchema({ type, format: node.format() });
  }
  if (def !== undefined) byDefinition.set(def, out);
  return out;
}

function withDef(stack: Set<string>, def: string | undefined): Set<string> {
  return def === undefined ? stack : new Set([...stack, def]);
}

/** The CEL type of objects of GROUP/VERSION KIND (dyn when Capstan has no schema for it). */
export function typeForKind(group: string, version: string, kind: string): CelType {
  const node = schemaForKind(group, version, kind);
  if (node === undefined) return DYN;
  const t = typeOfNode(node, new Set());
  if (t.kind === 'object' && t.fields !== undefined && !t.fields.has('metadata')) t.fields.set('metadata', DYN);
  return t;
}
