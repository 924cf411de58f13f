import { isObject, type Obj } from '../api/object-util.js';
import { defaultCustomResource } from './cr-defaulting.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';

const HEAD = /^\{"kind":"([^"\\]*)","apiVersion":"([^"\\]*)"/;

/** Whether each cached schema (by cache key) has a `default` anywhere, so reads of the others skip parsing. */
const hasDefaults = new Map<string, boolean>();

function containsDefault(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(containsDefault);
  if (!isObject(node)) return false;
  if (node.default !== undefined) return true;
  return Object.entries(node).some(([k, v]) => k !== 'enum' && k !== 'example' && containsDefault(v));
}

/**
 * Stored JSON of a custom resource with its CRD version's defaults (from `facts`) applied, as kube defaults objects
 * read from storage (a default added to the schema after the object was written shows on read).
 * Answers JSON unchanged, without parsing it, for built-in kinds, schemas without defaults and
 * objects that already hold every default.
 */
export function withReadDefaults(facts: CustomResourceFacts, json: string): string {
  const head = HEAD.exec(json);
  if (head === null) return json;
  return withReadDefaultsOf(facts, json, head[2] ?? '', head[1] ?? '');
}

/** {@link withReadDefaults} of stored JSON whose `apiVersion` and `kind` the caller has read already. */
export function withReadDefaultsOf(facts: CustomResourceFacts, json: string, apiVersion: string, kind: string): string {
  const custom = facts.schemaOf(apiVersion, kind);
  if (custom?.schema === undefined) return json;
  let flagged = hasDefaults.get(custom.cacheKey);
  if (flagged === undefined) {
    flagged = containsDefault(custom.schema);
    if (hasDefaults.size > 1024) hasDefaults.clear();
    hasDefaults.set(custom.cacheKey, flagged);
  }
  if (!flagged) return json;
  const parsed: unknown = JSON.parse(json);
  if (!isObject(parsed)) return json;
  const obj: Obj = parsed;
  defaultCustomResource(obj, custom.schema);
  const out = JSON.stringify(obj);
  return out.length === json.length && out === json ? json : out;
}
