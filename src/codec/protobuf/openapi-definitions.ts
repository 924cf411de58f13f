import { definitionNames, schemaForDefinition, type SchemaNode } from '../../schema/openapi-schema.js';

/**
 * Maps proto message names to the OpenAPI definitions that describe their JSON form.
 *
 * The OpenAPI name is the proto name with `io.` in front and the Go module's dashes restored
 * (`k8s.io.apiextensions_apiserver...` -> `io.k8s.apiextensions-apiserver...`). Versions that the
 * document does not publish (most alpha and beta versions) fall back to the same type in another
 * version of the group, whose JSON field names match in practice.
 */

const VERSION = /^v\d+((alpha|beta)\d+)?$/;

/** The OpenAPI definition name a proto message name corresponds to. */
export function definitionNameForMessage(message: string): string {
  return `io.${message}`
    .replace(/^io\.k8s\.io\./, 'io.k8s.')
    .replace('.apiextensions_apiserver.', '.apiextensions-apiserver.')
    .replace('.kube_aggregator.', '.kube-aggregator.');
}

/** The proto message name an OpenAPI definition name corresponds to (inverse of the above). */
export function messageNameForDefinition(definition: string): string {
  return definition
    .replace(/^io\.k8s\./, 'k8s.io.')
    .replace('.apiextensions-apiserver.', '.apiextensions_apiserver.')
    .replace('.kube-aggregator.', '.kube_aggregator.');
}

function withoutVersion(name: string): string {
  return name
    .split('.')
    .filter((seg) => !VERSION.test(seg))
    .join('.');
}

let byUnversioned: Map<string, string[]> | undefined;

function versionFallback(name: string): SchemaNode | undefined {
  if (!byUnversioned) {
    const index = new Map<string, string[]>();
    for (const def of definitionNames()) {
      const key = withoutVersion(def);
      const list = index.get(key);
      if (list) list.push(def);
      else index.set(key, [def]);
    }
    // Prefer the most stable version: v1 before v1beta2 before v1alpha1.
    for (const list of index.values()) list.sort((a, b) => stability(b) - stability(a));
    byUnversioned = index;
  }
  const candidate = byUnversioned.get(withoutVersion(name))?.[0];
  return candidate === undefined ? undefined : schemaForDefinition(candidate);
}

function stability(def: string): number {
  const v = def.split('.').find((seg) => VERSION.test(seg)) ?? '';
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return 0;
  const tier = m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0;
  return tier * 1e6 + Number(m[1]) * 1e3 + Number(m[3] ?? 0);
}

/** The OpenAPI schema of proto message MESSAGE, or of the same type in another version; undefined if none. */
export function schemaForMessage(message: string): SchemaNode | undefined {
  const name = definitionNameForMessage(message);
  return schemaForDefinition(name) ?? versionFallback(name);
}
