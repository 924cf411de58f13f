import { createHash } from 'node:crypto';
import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import { apiVersionOf, type ResourceInfo } from '../api/resource-info.js';
import { storageVersionOf } from '../conversion/version-conversion.js';
import type {
  APIGroup,
  APIGroupDiscovery,
  APIGroupDiscoveryList,
  APIGroupList,
  APIResource,
  APIResourceDiscovery,
  APIResourceList,
  APISubresourceDiscovery,
  APIVersions,
  GroupVersionKind,
  ServerAddressByClientCIDR,
} from './discovery-types.js';

/**
 * Builds the discovery documents from the registry. Pure functions of the registry's current state:
 * callers cache the results by `registry.generation`.
 */

/** Tells custom resources apart: kube fills `responseKind` group/version for them, not for built-ins. */
export type IsCustomResource = (info: ResourceInfo) => boolean;

const builtIn: IsCustomResource = () => false;

/**
 * kube's `StorageVersionHash`: base64 of the first 8 bytes of sha256("group/version/kind"). Stable
 * across restarts and identical to kube-apiserver's value for the same storage version.
 */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

/** Only persisted types carry a hash; virtual ones (reviews, bindings, componentstatuses) cannot be watched. */
function isPersisted(info: ResourceInfo): boolean {
  return info.verbs.includes('watch');
}

/**
 * The storage version of a resource: the one its conversion names (events.k8s.io events are stored
 * as core v1 Events), otherwise the most preferred version of its group that serves a resource of
 * the same name, so every served version reports one hash, as in kube.
 */
function storageHashOf(catalog: ResourceCatalog, info: ResourceInfo): string | undefined {
  if (!isPersisted(info)) return undefined;
  if (info.storageVersion !== undefined) return storageVersionHash(info.group, info.storageVersion, info.kind);
  const converted = storageVersionOf(info);
  if (converted !== undefined) {
    const slash = converted.lastIndexOf('/');
    return storageVersionHash(slash < 0 ? '' : converted.slice(0, slash), converted.slice(slash + 1), info.kind);
  }
  const versions = catalog.group(info.group)?.versions ?? [info.version];
  for (const v of versions) {
    const stored = catalog.get(info.group, v, info.resource);
    if (stored) return storageVersionHash(stored.group, stored.version, stored.kind);
  }
  return storageVersionHash(info.group, info.version, info.kind);
}

/** Byte-order comparison, as Go's sort.Strings (never locale-dependent). */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function nonEmpty(values: string[]): string[] | undefined {
  return values.length > 0 ? [...values] : undefined;
}

/** `/api`: the legacy root, listing the core versions. */
export function apiVersionsDocument(catalog: ResourceCatalog, serverAddress: string): APIVersions {
  const addresses: ServerAddressByClientCIDR[] = [{ clientCIDR: '0.0.0.0/0', serverAddress }];
  return { kind: 'APIVersions', versions: [...(catalog.group('')?.versions ?? [])], serverAddressByClientCIDRs: addresses };
}

/** `/apis/GROUP`, or undefined when the group is not served (or is the core group). */
export function apiGroupDocument(catalog: ResourceCatalog, name: string, topLevel = true): APIGroup | undefined {
  if (name === '') return undefined;
  const g = catalog.group(name);
  const preferred = g?.versions[0];
  if (!g || preferred === undefined) return undefined;
  const versions = g.versions.map((version) => ({ groupVersion: `${name}/${version}`, version }));
  const body = { name, versions, preferredVersion: { groupVersion: `${name}/${preferred}`, version: preferred } };
  return topLevel ? { kind: 'APIGroup', apiVersion: 'v1', ...body } : body;
}

/** `/apis`: every named group in the registry's priority order. */
export function apiGroupListDocument(catalog: ResourceCatalog): APIGroupList {
  const groups: APIGroup[] = [];
  for (const g of catalog.groups()) {
    const doc = apiGroupDocument(catalog, g.name, false);
    if (doc) groups.push(doc);
  }
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

function topLevelResource(catalog: ResourceCatalog, info: ResourceInfo): APIResource {
  const r: APIResource = { name: info.resource, singularName: info.singularName, namespaced: info.namespaced, kind: info.kind, verbs: [...info.verbs] };
  const shortNames = nonEmpty(info.shortNames);
  if (shortNames) r.shortNames = shortNames;
  const categories = nonEmpty(info.categories);
  if (categories) r.categories = categories;
  const hash = storageHashOf(catalog, info);
  if (hash) r.storageVersionHash = hash;
  return r;
}

/** status before scale, as kube's CRD handler registers them. */
function customSubresourceOrder(a: string, b: string): number {
  const rank = (n: string): number => (n === 'status' ? 0 : n === 'scale' ? 1 : 2);
  return rank(a) - rank(b) || byName(a, b);
}

function subresourceEntries(info: ResourceInfo, order?: (a: string, b: string) => number): APIResource[] {
  const subs = Object.entries(info.subresources);
  if (order !== undefined) subs.sort(([a], [b]) => order(a, b));
  return subs.map(([name, sub]): APIResource => {
    const head = { name: `${info.resource}/${name}`, singularName: '', namespaced: info.namespaced };
    // kube names the group/version only when the subresource's kind lives elsewhere (Scale, Eviction, TokenRequest).
    const elsewhere = sub.group !== info.group || sub.version !== info.version;
    return elsewhere
      ? { ...head, group: sub.group, version: sub.version, kind: sub.kind, verbs: [...sub.verbs] }
      : { ...head, kind: sub.kind, verbs: [...sub.verbs] };
  });
}

/**
 * `/api/v1` or `/apis/GROUP/VERSION`: one entry per resource and per subresource, sorted by name
 * (`pods`, `pods/attach`, ..., `podtemplates`). Undefined when the group/version is not served.
 */
export function apiResourceListDocument(catalog: ResourceCatalog, group: string, version: string): APIResourceList | undefined {
  if (!catalog.hasGroupVersion(group, version)) return undefined;
  const entries: APIResource[] = [];
  const custom: APIResource[] = [];
  for (const info of catalog.resourcesOf(group, version)) {
    // kube's CRD discovery lists each custom resource followed by its status, then scale, unsorted.
    if (info.custom === true) custom.push(topLevelResource(catalog, info), ...subresourceEntries(info, customSubresourceOrder));
    else entries.push(topLevelResource(catalog, info), ...subresourceEntries(info));
  }
  entries.sort((a, b) => byName(a.name, b.name));
  entries.push(...custom);
  const groupVersion = apiVersionOf(group, version);
  // kube-apiserver serves the core group's documents without apiVersion (a release-1.1 compatibility quirk).
  return group === ''
    ? { kind: 'APIResourceList', groupVersion, resources: entries }
    : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources: entries };
}

function responseKind(host: ResourceInfo, group: string, version: string, kind: string, custom: boolean): GroupVersionKind {
  // Built-in kinds of the hosting group/version are reported with empty group/version, as kube does.
  if (!custom && group === host.group && version === host.version) return { group: '', version: '', kind };
  return { group, version, kind };
}

function resourceDiscovery(info: ResourceInfo, custom: boolean): APIResourceDiscovery {
  const r: APIResourceDiscovery = {
    resource: info.resource,
    responseKind: responseKind(info, info.group, info.version, info.kind, custom),
    scope: info.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: info.singularName,
    verbs: [...info.verbs],
  };
  const shortNames = nonEmpty(info.shortNames);
  if (shortNames) r.shortNames = shortNames;
  const categories = nonEmpty(info.categories);
  if (categories) r.categories = categories;
  const subresources: APISubresourceDiscovery[] = Object.entries(info.subresources)
    .sort(([a], [b]) => (custom ? customSubresourceOrder(a, b) : byName(a, b)))
    .map(([name, sub]) => ({ subresource: name, responseKind: responseKind(info, sub.group, sub.version, sub.kind, custom), verbs: [...sub.verbs] }));
  if (subresources.length > 0) r.subresources = subresources;
  return r;
}

function groupDiscovery(catalog: ResourceCatalog, name: string, isCustom: IsCustomResource): APIGroupDiscovery | undefined {
  const g = catalog.group(name);
  if (!g) return undefined;
  const versions = g.versions
    .map((version) => ({
      version,
      resources: catalog
        .resourcesOf(name, version)
        .sort((a, b) => byName(a.resource, b.resource))
        .map((info) => resourceDiscovery(info, isCustom(info))),
    }))
    .filter((v) => v.resources.length > 0)
    .map((v) => ({ version: v.version, resources: v.resources, freshness: 'Current' as const }));
  if (versions.length === 0) return undefined;
  return { metadata: name === '' ? {} : { name }, versions };
}

/**
 * The aggregated discovery document (apidiscovery.k8s.io/v2) for `/api` (`core` true: the core group
 * only) or `/apis` (every named group, in the registry's priority order).
 */
export function aggregatedDiscoveryDocument(catalog: ResourceCatalog, core: boolean, isCustom: IsCustomResource = builtIn): APIGroupDiscoveryList {
  const names = core
    ? ['']
    : catalog
        .groups()
        .map((g) => g.name)
        .filter((n) => n !== '');
  const items: APIGroupDiscovery[] = [];
  for (const name of names) {
    const item = groupDiscovery(catalog, name, isCustom);
    if (item) items.push(item);
  }
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}
