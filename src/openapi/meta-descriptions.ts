import { readFileSync } from 'node:fs';
import { schemaPath } from '../schema/schema-files.js';
import type { JsonObject } from './json-value.js';
import { isObject, objectFieldOrUndefined } from '../api/values.js';

/**
 * The descriptions kube-apiserver publishes for the meta types every resource's OpenAPI embeds
 * (ObjectMeta, ListMeta and the meta.v1 definitions they reference) and for each kind's `metadata`
 * field, recorded from a reference
 * kube-apiserver by scripts/capture-meta-descriptions.mjs into schema/meta-descriptions.json. The
 * other schema facts carry no descriptions; these make `kubectl explain KIND.metadata` describe the
 * metadata fields of built-in and custom resources alike.
 */
export interface MetaDescriptions {
  /** Per definition name: its own description and those of its properties. */
  definitions: Record<string, { description?: string; properties?: Record<string, string> }>;
  /** Per definition name: the description of its `metadata` field (an ObjectMeta or ListMeta). */
  metadataFields?: Record<string, string>;
}

let loaded: MetaDescriptions | undefined;

/** schema/meta-descriptions.json, read once per process. */
export function metaDescriptions(): MetaDescriptions {
  loaded ??= JSON.parse(readFileSync(schemaPath('meta-descriptions.json'), 'utf8')) as MetaDescriptions;
  return loaded;
}

/** SCHEMA with DESCRIPTION as its first member (where kube-openapi writes it). */
function described(schema: JsonObject, description: string): JsonObject {
  const rest: JsonObject = { ...schema };
  delete rest['description'];
  return { description, ...rest };
}

/**
 * Gives the meta definitions of the Swagger 2.0 document DOC (in place) the descriptions of
 * DESCRIPTIONS: each definition's own and its properties', and each listed definition's `metadata`
 * field its own. Definitions or properties DOC lacks are skipped; nothing else changes.
 */
export function addMetaDescriptions(doc: JsonObject, descriptions: MetaDescriptions = metaDescriptions()): void {
  const definitions = doc['definitions'];
  if (!isObject(definitions)) return;
  for (const [name, entry] of Object.entries(descriptions.definitions)) {
    const def = definitions[name];
    if (!isObject(def)) continue;
    const properties = def['properties'];
    if (isObject(properties)) {
      for (const [field, description] of Object.entries(entry.properties ?? {})) {
        const prop = properties[field];
        if (isObject(prop)) properties[field] = described(prop, description);
      }
    }
    definitions[name] = entry.description === undefined ? def : described(def, entry.description);
  }
  for (const [name, description] of Object.entries(descriptions.metadataFields ?? {})) {
    const properties = objectFieldOrUndefined(definitions[name], 'properties');
    const field = properties?.['metadata'];
    if (properties !== undefined && isObject(field)) properties['metadata'] = described(field, description);
  }
}

/** The built-in Swagger 2.0 document (schema/openapi-v2.json) with the meta descriptions added, as JSON bytes. */
export function describedBaseDocument(): Buffer {
  const doc: unknown = JSON.parse(readFileSync(schemaPath('openapi-v2.json'), 'utf8'));
  if (!isObject(doc)) throw new Error('schema/openapi-v2.json is not a JSON object');
  addMetaDescriptions(doc);
  return Buffer.from(JSON.stringify(doc));
}
