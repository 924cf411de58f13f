import { compareKubeVersions } from '../crd/crd-model.js';
import type { DiscoveryExtension } from '../discovery/discovery-extension.js';
import type { APIGroup, APIGroupDiscovery, APIVersionDiscovery } from '../discovery/discovery-types.js';
import type { ApiServiceRegistry } from './api-service-registry.js';
import type { RemoteDiscovery } from './remote-discovery.js';

/** kube lists apiregistration.k8s.io first (its discovery manager gives it 20001, above any APIService). */
const APIREGISTRATION = 'apiregistration.k8s.io';
const APIREGISTRATION_PRIORITY = 20001;
/** What kube's CRD autoregistration gives a custom resource group version (Capstan registers no APIService for them). */
const CRD_GROUP_PRIORITY = 1000;
const CRD_VERSION_PRIORITY = 100;

/** Byte-order comparison, as Go's. */
function byName(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Merges the group versions of APIServices with a service reference into the discovery documents
 * as kube-aggregator orders them: groups by their highest `groupPriorityMinimum` (then by name),
 * versions by `versionPriority` (then kube's version order). A group version an APIService sends
 * elsewhere replaces a local one of the same name. The legacy documents list every such APIService;
 * the aggregated document lists those whose discovery was fetched (empty and `Stale` when the fetch
 * failed), as kube's discovery manager does. Local groups keep their order among themselves when
 * no APIService names a service.
 */
export class AggregatedGroups implements DiscoveryExtension {
  constructor(
    private readonly registry: ApiServiceRegistry,
    private readonly discovery: RemoteDiscovery,
  ) {}

  generation(): number {
    return this.registry.generation + this.discovery.generation;
  }

  /** The priority kube sorts a group by: the highest groupPriorityMinimum of its APIServices. */
  private groupPriority(group: string): number {
    if (group === APIREGISTRATION) return APIREGISTRATION_PRIORITY;
    let best: number | undefined;
    for (const info of this.registry.all())
      if (info.group === group && (best === undefined || info.groupPriorityMinimum > best)) best = info.groupPriorityMinimum;
    return best ?? CRD_GROUP_PRIORITY;
  }

  private versionPriority(group: string, version: string): number {
    return this.registry.get(`${version}.${group}`)?.versionPriority ?? CRD_VERSION_PRIORITY;
  }

  private compareVersions(group: string): (a: string, b: string) => number {
    return (a, b) => this.versionPriority(group, b) - this.versionPriority(group, a) || compareKubeVersions(a, b);
  }

  /** Groups in kube's order (stable: equal keys keep their order). */
  private sortGroups<T>(groups: T[], nameOf: (g: T) => string): T[] {
    const priority = new Map<string, number>();
    for (const g of groups) priority.set(nameOf(g), this.groupPriority(nameOf(g)));
    return [...groups].sort((a, b) => (priority.get(nameOf(b)) ?? 0) - (priority.get(nameOf(a)) ?? 0) || byName(nameOf(a), nameOf(b)));
  }

  /** Remote versions by group. */
  private remoteVersions(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const info of this.registry.remotes()) out.set(info.group, [...(out.get(info.group) ?? []), info.version]);
    return out;
  }

  private apiGroup(name: string, versions: string[]): APIGroup {
    const sorted = [...new Set(versions)].sort(this.compareVersions(name));
    const entries = sorted.map((version) => ({ groupVersion: `${name}/${version}`, version }));
    return { name, versions: entries, preferredVersion: entries[0] };
  }

  groupList(local: APIGroup[]): APIGroup[] {
    const remote = this.remoteVersions();
    if (remote.size === 0) return local;
    const merged = local.map((g) => {
      const extra = remote.get(g.name);
      return extra === undefined ? g : this.apiGroup(g.name, [...g.versions.map((v) => v.version), ...extra]);
    });
    const localNames = new Set(local.map((g) => g.name));
    for (const [name, versions] of remote) if (!localNames.has(name)) merged.push(this.apiGroup(name, versions));
    return this.sortGroups(merged, (g) => g.name);
  }

  group(name: string, local: APIGroup | undefined): APIGroup | undefined {
    const extra = this.remoteVersions().get(name);
    if (extra === undefined) return local;
    const merged = this.apiGroup(name, [...(local?.versions.map((v) => v.version) ?? []), ...extra]);
    return { kind: 'APIGroup', apiVersion: 'v1', ...merged };
  }

  aggregatedItems(local: APIGroupDiscovery[]): APIGroupDiscovery[] {
    const remotes = this.registry.remotes();
    if (remotes.length === 0) return local;
    const fetched = new Map<string, APIVersionDiscovery[]>();
    for (const info of remotes) {
      const version = this.discovery.versionOf(info.name);
      if (version !== undefined) fetched.set(info.group, [...(fetched.get(info.group) ?? []), version]);
    }
    const nameOf = (g: APIGroupDiscovery): string => g.metadata.name ?? '';
    const merged: APIGroupDiscovery[] = [];
    const seen = new Set<string>();
    for (const g of local) {
      const name = nameOf(g);
      seen.add(name);
      const extra = fetched.get(name);
      merged.push(extra === undefined ? g : this.groupDiscovery(name, [...(g.versions ?? []), ...extra]));
    }
    for (const [name, versions] of fetched) if (!seen.has(name)) merged.push(this.groupDiscovery(name, versions));
    return this.sortGroups(merged, nameOf);
  }

  /** A group of version entries, a later entry replacing an earlier one of the same version. */
  private groupDiscovery(name: string, versions: APIVersionDiscovery[]): APIGroupDiscovery {
    const byVersion = new Map<string, APIVersionDiscovery>();
    for (const v of versions) byVersion.set(v.version, v);
    const compare = this.compareVersions(name);
    return { metadata: { name }, versions: [...byVersion.values()].sort((a, b) => compare(a.version, b.version)) };
  }
}
