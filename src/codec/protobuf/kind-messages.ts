import { schemaForKind } from '../../schema/openapi-schema.js';
import { messageNameForDefinition } from './openapi-definitions.js';
import { lookupMessage } from './proto-runtime.js';

/**
 * Which proto message carries a given apiVersion and kind.
 *
 * First choice is the OpenAPI definition that declares the group/version/kind
 * (`x-kubernetes-group-version-kind`), renamed to its proto package. Kinds the document does not list
 * are looked up by package: the meta.k8s.io kinds (PartialObjectMetadata, Table options, ...) and the
 * option kinds every group registers (DeleteOptions, ListOptions, Status, WatchEvent) in meta/v1, other
 * kinds in the package of their group and version. Custom resources have no message.
 */

const META_V1 = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Kinds that every group version registers from meta/v1. */
const SHARED_META_KINDS = new Set(['Status', 'WatchEvent', 'DeleteOptions', 'CreateOptions', 'UpdateOptions', 'PatchOptions', 'GetOptions', 'ListOptions']);

const cache = new Map<string, string | null>();

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The proto package of the built-in types of GROUP/VERSION. */
function packageFor(group: string, version: string): string | undefined {
  if (group === 'meta.k8s.io') return `k8s.io.apimachinery.pkg.apis.meta.${version}`;
  if (group === '') return `k8s.io.api.core.${version}`;
  if (group === 'apiextensions.k8s.io') return `k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.${version}`;
  if (group === 'apiregistration.k8s.io') return `k8s.io.kube_aggregator.pkg.apis.apiregistration.${version}`;
  if (group === 'internal.apiserver.k8s.io') return `k8s.io.api.apiserverinternal.${version}`;
  if (!group.includes('.') || group.endsWith('.k8s.io')) return `k8s.io.api.${group.split('.')[0] ?? group}.${version}`;
  return undefined;
}

function resolve(apiVersion: string, kind: string): string | undefined {
  const { group, version } = splitApiVersion(apiVersion);
  if (kind === '' || version === '') return undefined;
  const def = schemaForKind(group, version, kind)?.definition;
  if (def !== undefined) {
    const name = messageNameForDefinition(def);
    if (lookupMessage(name)) return name;
  }
  if (SHARED_META_KINDS.has(kind) && lookupMessage(`${META_V1}.${kind}`)) return `${META_V1}.${kind}`;
  const pkg = packageFor(group, version);
  if (pkg !== undefined && lookupMessage(`${pkg}.${kind}`)) return `${pkg}.${kind}`;
  return undefined;
}

/** The fully-qualified proto message name for APIVERSION and KIND, or undefined (custom resources, Table). */
export function messageNameForKind(apiVersion: string, kind: string): string | undefined {
  const key = `${apiVersion}\n${kind}`;
  const hit = cache.get(key);
  if (hit !== undefined) return hit ?? undefined;
  const name = resolve(apiVersion, kind);
  cache.set(key, name ?? null);
  return name;
}
