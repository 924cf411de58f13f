import { isObject, METADATA_ORDER, type Obj } from '../api/object-util.js';

/**
 * Read-only accessors of one node of a CRD version's `openAPIV3Schema`, as pruning, defaulting and
 * validation read it. A field of the wrong type reads as absent, so a malformed stored schema never
 * throws (the CRD's own validation keeps such schemas out of the API).
 */

/** `properties` of NODE (empty when none). */
export function propertiesOf(node: Obj): Record<string, Obj> {
  const out: Record<string, Obj> = {};
  if (!isObject(node.properties)) return out;
  for (const [k, v] of Object.entries(node.properties)) if (isObject(v)) out[k] = v;
  return out;
}

/** `items` of NODE when it is one schema. */
export function itemsOf(node: Obj): Obj | undefined {
  return isObject(node.items) ? node.items : undefined;
}

/** `additionalProperties` of NODE when it is a schema (`true` reads as an empty schema). */
export function additionalPropertiesOf(node: Obj): Obj | undefined {
  if (node.additionalProperties === true) return {};
  return isObject(node.additionalProperties) ? node.additionalProperties : undefined;
}

/** Whether NODE keeps fields it does not declare. */
export function preservesUnknown(node: Obj): boolean {
  return node['x-kubernetes-preserve-unknown-fields'] === true;
}

/** Whether NODE is an embedded resource (apiVersion, kind and ObjectMeta metadata implied). */
export function isEmbeddedResource(node: Obj): boolean {
  return node['x-kubernetes-embedded-resource'] === true;
}

/** Whether NODE takes an integer or a string. */
export function isIntOrString(node: Obj): boolean {
  return node['x-kubernetes-int-or-string'] === true;
}

/** Whether NODE takes null. */
export function isNullable(node: Obj): boolean {
  return node.nullable === true;
}

/** The fields of ObjectMeta, which `metadata` of a resource (and of an embedded resource) is pruned to. */
export const OBJECT_META_FIELDS: ReadonlySet<string> = new Set(METADATA_ORDER);
