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

/**
 * What applying the shape needs of one schema position, worked out once per schema object and kept:
 * walking a Pod visits a few hundred positions, and resolving each one's schema again (a `$ref`,
 * the property lookup, the field codes) cost more than the walk itself.
 */
interface ShapePlan {
  /** The definition's fields that have a code, with the code and (for 'a') the zero value to write. */
  readonly fields: string[];
  readonly codes: Code[];
  readonly zeros: unknown[];
  /** Element plan (lists). */
  items: ShapePlan | undefined;
  /** The plan of every value (maps: no declared properties); undefined for structs. */
  values: ShapePlan | undefined;
  /** Declared property plans, made on first use (null: a property without a plan). */
  readonly properties: Map<string, ShapePlan | null>;
  readonly schema: SchemaNode;
}

/** Plans of definitions, by name; of inline schemas, by their schema object. */
const definitionPlans = new Map<string, ShapePlan>();
const inlinePlans = new WeakMap<object, ShapePlan>();

function planOf(schema: SchemaNode): ShapePlan {
  const known = schema.definition === undefined ? inlinePlans.get(schema.resolved) : definitionPlans.get(schema.definition);
  if (known !== undefined) return known;
  const plan: ShapePlan = { fields: [], codes: [], zeros: [], items: undefined, values: undefined, properties: new Map(), schema };
  // Kept before its children are made: the schema graph is recursive (JSONSchemaProps).
  if (schema.definition === undefined) inlinePlans.set(schema.resolved, plan);
  else definitionPlans.set(schema.definition, plan);
  const table = schema.definition === undefined ? undefined : shapeTable().get(schema.definition);
  for (const [field, code] of table ?? []) {
    plan.fields.push(field);
    plan.codes.push(code);
    plan.zeros.push(code === 'a' ? zeroOf(schema.property(field)) : undefined);
  }
  const items = schema.items();
  if (items !== undefined) plan.items = planOf(items);
  const values = schema.propertyNames().length === 0 ? schema.additionalProperties() : undefined;
  if (values !== undefined) plan.values = planOf(values);
  return plan;
}

function propertyPlan(plan: ShapePlan, key: string): ShapePlan | undefined {
  if (plan.values !== undefined) return plan.values;
  let child = plan.properties.get(key);
  if (child === undefined) {
    const schema = plan.schema.property(key);
    child = schema === undefined ? null : planOf(schema);
    plan.properties.set(key, child);
  }
  return child ?? undefined;
}

function shapeWith(value: unknown, plan: ShapePlan, depth: number): void {
  if (depth > 200) return;
  if (Array.isArray(value)) {
    const items = plan.items;
    if (items === undefined) return;
    for (const item of value) if (item !== null && typeof item === 'object') shapeWith(item, items, depth + 1);
    return;
  }
  if (!isObject(value)) return;
  const { fields, codes } = plan;
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    const v = value[field];
    switch (codes[i]) {
      case 'z':
        if (v !== undefined && isZero(v)) delete value[field];
        break;
      case 's':
        if (!isObject(v)) value[field] = {};
        break;
      case 'a':
        if (v === undefined || v === null) value[field] = plan.zeros[i];
        break;
      default:
        if (v === undefined) value[field] = null;
    }
  }
  for (const key in value) {
    const child = value[key];
    if (child === null || typeof child !== 'object') continue;
    const childPlan = propertyPlan(plan, key);
    if (childPlan !== undefined) shapeWith(child, childPlan, depth + 1);
  }
}

/** Applies Go's shape to `value` (described by `schema`) in place, recursively. */
export function applyGoShape(value: unknown, schema: SchemaNode | undefined): void {
  if (schema === undefined) return;
  shapeWith(value, planOf(schema), 0);
}

/** Applies Go's shape to an object about to be stored as `kind` of group/version (built-in kinds only). */
export function shapeStoredObject(obj: Obj, info: { group: string; version: string; kind: string; custom?: boolean }): void {
  if (info.custom === true) return;
  applyGoShape(obj, schemaForKind(info.group, info.version, info.kind));
}
