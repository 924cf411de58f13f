import { isObject, type Obj } from '../api/object-util.js';
import { additionalPropertiesOf, isNullable, itemsOf, propertiesOf } from './cr-schema-nodes.js';

/**
 * kube's structural defaulting of custom resources, in place: a property that is absent (or null
 * where the schema is not nullable) takes a copy of its `default`, then defaults apply inside every
 * value, defaults' own contents included. Afterwards nulls the schema does not allow and no default
 * replaces are removed (kube's PruneNonNullableNullsWithoutDefaults).
 */
export function defaultCustomResource(obj: Obj, schema: Obj): void {
  applyDefaults(obj, schema);
  dropNulls(obj, schema);
}

function applyDefaults(value: unknown, node: Obj): void {
  if (Array.isArray(value)) {
    const items = itemsOf(node);
    if (items !== undefined) for (const v of value) applyDefaults(v, items);
    return;
  }
  if (!isObject(value)) return;
  const properties = propertiesOf(node);
  for (const [key, prop] of Object.entries(properties)) {
    if (prop.default === undefined) continue;
    const current = value[key];
    if (current === undefined || (current === null && !isNullable(prop))) value[key] = structuredClone(prop.default);
  }
  const additional = additionalPropertiesOf(node);
  for (const [key, v] of Object.entries(value)) {
    const prop = properties[key] ?? additional;
    if (prop !== undefined) applyDefaults(v, prop);
  }
}

function dropNulls(value: unknown, node: Obj): void {
  if (Array.isArray(value)) {
    const items = itemsOf(node);
    if (items !== undefined) for (const v of value) dropNulls(v, items);
    return;
  }
  if (!isObject(value)) return;
  const properties = propertiesOf(node);
  const additional = additionalPropertiesOf(node);
  for (const [key, v] of Object.entries(value)) {
    const prop = properties[key] ?? additional;
    if (prop === undefined) continue;
    if (v === null) {
      if (!isNullable(prop) && prop.default === undefined) delete value[key];
    } else dropNulls(v, prop);
  }
}
