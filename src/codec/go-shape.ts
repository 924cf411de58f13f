import { readFileSync } from 'node:fs';
import { schemaForKind, type SchemaNode } from '../schema/openapi-schema.js';
import { schemaPath } from '../schema/schema-files.js';
import type { Obj } from '../api/object-util.js';
import { isObject } from '../api/values.js';

/**
 * Puts a decoded built-in object in the shape kube-apiserver stores it, which is the shape Go's JSON
 * encoder gives the API's Go types (schema/go-shape.txt, generated from them by tools/goldens):
 * - an `omitempty` string, number, bool, list or map holding its zero value ("", 0, false, [], {},
 *   null) is dropped (`globalDefault: false` is not stored);
 * - a struct field is always written (`resources: {}`, `status: {}`, template `metadata: {}`);
 * - a scalar without `omitempty` is written with its zero value when unset (`desiredReplicas: 0`),
 *   a list or map without it as null.
 * Fields whose types encode themselves (times, quantities, int-or-strings, raw objects) are left as
 * they are. Runs on the object about to be stored, after the typed decoder (so every value has its
 * declared type), the defaults and the strategy.
 */

type Code = 'z' | 's' | 'a' | 'n';
let table: Map<string, Map<string, Code>> | undefined;

function shapeTable(): Map<string, Map<string, Code>> {
  if (table !== undefined) return table;
  table = new Map();
  for (const line of readFileSync(schemaPath('go-shape.txt'), 'utf8').split('\n')) {
    const [definition, ...fields] = line.split(' ');
    if (definition === undefined || definition === '') continue;
    const codes = new Map<string, Code>();
    for (const f of fields) {
      const at = f.lastIndexOf(':');
      codes.set(f.slice(0, at), f.slice(at + 1) as Code);
    }
    table.set(definition, codes);
  }
  return table;
}

function isZero(v: unknown): boolean {
  if (v === null || v === '' || v === false || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObject(v) && Object.keys(v).length === 0;
}

/** The zero value Go writes for a non-omitempty scalar of this schema. */
function zeroOf(schema: SchemaNode | undefined): unknown {
  switch (schema?.type()) {
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    default:
      return '';
  }
}

/** Applies Go's shape to `value` (described by `schema`) in place, recursively. */
export function applyGoShape(value: unknown, schema: SchemaNode | undefined, depth = 0): void {
  if (schema === undefined || depth > 200) return;
  if (Array.isArray(value)) {
    const items = schema.items();
    for (const item of value) applyGoShape(item, items, depth + 1);
    return;
  }
  if (!isObject(value)) return;
  const codes = schema.definition === undefined ? undefined : shapeTable().get(schema.definition);
  if (codes !== undefined) {
    for (const [field, code] of codes) {
      const v = value[field];
      if (code === 'z') {
        if (v !== undefined && isZero(v)) delete value[field];
      } else if (code === 's') {
        if (!isObject(v)) value[field] = {};
      } else if (code === 'a') {
        if (v === undefined || v === null) value[field] = zeroOf(schema.property(field));
      } else if (v === undefined) {
        value[field] = null;
      }
    }
  }
  const values = schema.propertyNames().length === 0 ? schema.additionalProperties() : undefined;
  for (const [key, child] of Object.entries(value)) {
    if (child === null || typeof child !== 'object') continue;
    applyGoShape(child, values ?? schema.property(key), depth + 1);
  }
}

/** Applies Go's shape to an object about to be stored as `kind` of group/version (built-in kinds only). */
export function shapeStoredObject(obj: Obj, info: { group: string; version: string; kind: string; custom?: boolean }): void {
  if (info.custom === true) return;
  applyGoShape(obj, schemaForKind(info.group, info.version, info.kind));
}
