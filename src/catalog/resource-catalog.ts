import { setMaxListeners } from 'node:events';
import { readSchemaJson } from '../schema/schema-files.js';
import type { GroupInfo, ResourceInfo } from '../api/resource-info.js';
import { DEFAULT_RUNTIME_CONFIG, servesResource, type RuntimeConfig } from '../config/runtime-config.js';
import { CustomResourceFacts } from './custom-resource-facts.js';

interface ResourcesFile {
  groups: GroupInfo[];
  resources: ResourceInfo[];
}

let builtInFile: ResourcesFile | undefined;

/** schema/resources.json, read once: every built-in group, version and resource. */
function builtInResources(): ResourcesFile {
  builtInFile ??= readSchemaJson('resources.json') as ResourcesFile;
  return builtInFile;
}

/**
 * The set of served API groups, versions and resources. Built-in types come from the generated
 * schema facts; custom resources are added and removed at run time.
 */
export class ResourceCatalog {
  private readonly byPath = new Map<string, ResourceInfo>();
  private readonly groupMap = new Map<string, GroupInfo>();
  /** Increases on every change, so derived documents (discovery, OpenAPI) can be cached by it. */
  generation = 0;
  /** Per served path, the controller whose signal aborts when the path stops being served. */
  private readonly removals = new Map<string, AbortController>();
  /** The run-time facts of the served custom resources (schemas, conversion webhooks), kept by the CRD registrar. */
  readonly customResources = new CustomResourceFacts();

  constructor(groups: GroupInfo[], resources: ResourceInfo[]) {
    for (const g of groups) this.groupMap.set(g.name, { name: g.name, versions: [...g.versions] });
    for (const r of resources) this.add(r);
  }

  /**
   * The registry of the built-in types of the Kubernetes API that `config` serves (by default, as
   * kube-apiserver 1.36: every GA version, no alpha or beta one). Preferred versions keep their order.
   */
  static builtIn(config: RuntimeConfig = DEFAULT_RUNTIME_CONFIG): ResourceCatalog {
    const file = builtInResources();
    // Each registry gets its own copies: nothing served by one server is shared with another.
    const resources = file.resources.filter((r) => servesResource(config, r.group, r.version, r.resource)).map((r) => structuredClone(r));
    const groups = file.groups
      .map((g) => ({ name: g.name, versions: g.versions.filter((v) => resources.some((r) => r.group === g.name && r.version === v)) }))
      .filter((g) => g.versions.length > 0);
    return new ResourceCatalog(groups, resources);
  }

  /** Whether GROUP/VERSION is a built-in group version at all, served or not (for `--runtime-config`). */
  static isBuiltInGroupVersion(group: string, version: string): boolean {
    return builtInResources().groups.some((g) => g.name === group && g.versions.includes(version));
  }

  /** Whether GROUP is a built-in group at all, served or not (for `--runtime-config`). */
  static isBuiltInGroup(group: string): boolean {
    return builtInResources().groups.some((g) => g.name === group);
  }

  /** Adds or replaces a resource (and its group/version when new). */
  add(info: ResourceInfo): void {
    this.generation++;
    this.byPath.set(`${info.group}/${info.version}/${info.resource}`, info);
    const g = this.groupMap.get(info.group);
    if (!g) this.groupMap.set(info.group, { name: info.group, versions: [info.version] });
    else if (!g.versions.includes(info.version)) g.versions.push(info.version);
  }

  /** Stops serving GROUP/VERSION/RESOURCE (and the group/version when nothing is left in it). */
  remove(group: string, version: string, resource: string): void {
    const path = `${group}/${version}/${resource}`;
    if (!this.byPath.delete(path)) return;
    this.generation++;
    this.removals.get(path)?.abort();
    this.removals.delete(path);
    if (this.resourcesOf(group, version).length > 0) return;
    const g = this.groupMap.get(group);
    if (!g) return;
    g.versions = g.versions.filter((v) => v !== version);
    if (g.versions.length === 0) this.groupMap.delete(group);
  }

  /**
   * A signal that aborts when GROUP/VERSION/RESOURCE stops being served (e.g. its CRD is gone), so
   * what serves it (open watches) can end. Already aborted when it is not served now.
   */
  removedSignal(group: string, version: string, resource: string): AbortSignal {
    const path = `${group}/${version}/${resource}`;
    if (!this.byPath.has(path)) return AbortSignal.abort();
    let controller = this.removals.get(path);
    if (controller === undefined) {
      controller = new AbortController();
      // Every open watch of the resource listens (and stops listening when it ends): any number is fine.
      setMaxListeners(0, controller.signal);
      this.removals.set(path, controller);
    }
    return controller.signal;
  }

  /**
   * Reorders GROUP's served versions by `compare` (preferred first), as kube orders a custom
   * resource group's versions by version priority. Nothing happens for an unknown group.
   */
  sortVersions(group: string, compare: (a: string, b: string) => number): void {
    const g = this.groupMap.get(group);
    if (!g) return;
    const sorted = [...g.versions].sort(compare);
    if (sorted.every((v, i) => v === g.versions[i])) return;
    g.versions = sorted;
    this.generation++;
  }

  /** The resource served at /GROUP/VERSION/RESOURCE, if any. */
  get(group: string, version: string, resource: string): ResourceInfo | undefined {
    return this.byPath.get(`${group}/${version}/${resource}`);
  }

  /** Whether GROUP/VERSION is served. */
  hasGroupVersion(group: string, version: string): boolean {
    return this.groupMap.get(group)?.versions.includes(version) ?? false;
  }

  /** Served groups in discovery order (core group first). */
  groups(): GroupInfo[] {
    return [...this.groupMap.values()];
  }

  group(name: string): GroupInfo | undefined {
    return this.groupMap.get(name);
  }

  /** Resources of one group/version, sorted by name. */
  resourcesOf(group: string, version: string): ResourceInfo[] {
    return [...this.byPath.values()].filter((r) => r.group === group && r.version === version).sort((a, b) => a.resource.localeCompare(b.resource));
  }

  /** Every served resource of every version. */
  all(): ResourceInfo[] {
    return [...this.byPath.values()];
  }

  /** The kind-level resource info (storage lookups) for `kind` in group/version. */
  byKind(group: string, version: string, kind: string): ResourceInfo | undefined {
    for (const r of this.byPath.values()) if (r.group === group && r.version === version && r.kind === kind) return r;
    return undefined;
  }
}
