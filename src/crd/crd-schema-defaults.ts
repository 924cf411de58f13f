import type { StatusCause } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import { pruneBySchema } from './cr-pruning.js';
import { validateValueBySchema } from './cr-schema-validation.js';
import { goJson, invalidField } from '../validation/field-errors.js';

/**
 * kube's checks of the `default` values in a structural CRD schema (structuraldefaulting's
 * ValidateDefaults, pruned defaults required): a default must survive pruning unchanged ("must not
 * have unknown fields") and be valid by the schema it sits in, reported under `<node>.default`. The
 * root counts as an embedded resource, so a root default must carry apiVersion and kind.
 */

const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

/** Go's json.Marshal of a decoded JSON value: map keys sorted. */
function sortedJson(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedJson);
  if (!isObject(v)) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedJson(v[k])]),
  );
}

/** A finding of the default's validation, moved under PATH (`...default`). */
function under(path: string, c: StatusCause): StatusCause {
  const field = c.field ?? '';
  if (field === '<nil>') return c;
  return { ...c, field: field === '' ? path : field.startsWith('[') || field.startsWith('.') ? `${path}${field}` : `${path}.${field}` };
}

function walk(node: Obj, path: string, insideMeta: boolean, out: StatusCause[]): void {
  const embedded = node['x-kubernetes-embedded-resource'] === true;
  const inside = embedded ? false : insideMeta;
  if (node.default !== undefined && node.default !== null) {
    const value = node.default;
    const at = `${path}.default`;
    if (!inside) {
      const pruned = structuredClone(value);
      if (pruneBySchema(pruned, node).length > 0) out.push(invalidField(at, goJson(sortedJson(value)), 'must not have unknown fields'));
    }
    out.push(...validateValueBySchema(structuredClone(value), node).map((c) => under(at, c)));
  }
  if (isObject(node.items)) walk(node.items, `${path}.items`, inside, out);
  const properties = isObject(node.properties) ? node.properties : {};
  for (const k of Object.keys(properties).sort()) {
    const p = properties[k];
    walk(isObject(p) ? p : {}, `${path}.properties[${k}]`, inside || (embedded && META_FIELDS.has(k)), out);
  }
}

/** The findings for the defaults of a structural SCHEMA at PATH (`...openAPIV3Schema`). */
export function validateSchemaDefaults(schema: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  walk({ ...schema, 'x-kubernetes-embedded-resource': true }, path, false, out);
  return out;
}
