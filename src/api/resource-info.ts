import { storageResourceOf } from './cohabitation.js';

/** Static description of one served resource of one group/version (from schema/resources.json). */
export interface SubresourceInfo {
  /** Kind of the subresource's body (e.g. `Scale`). */
  kind: string;
  group: string;
  version: string;
  verbs: string[];
}

/** One column a CRD version declares (`additionalPrinterColumns`). */
export interface PrinterColumn {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
  jsonPath: string;
}

/** Where a custom resource keeps what its Scale shows (a CRD version's `subresources.scale`). */
export interface ScalePaths {
  specReplicasPath: string;
  statusReplicasPath: string;
  /** Absent: the Scale's status.selector is empty. */
  labelSelectorPath?: string;
}

export interface ResourceInfo {
  group: string;
  version: string;
  /** Plural lowercase name used in paths. */
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
  singularName: string;
  shortNames: string[];
  categories: string[];
  /** OpenAPI definition name of the kind (e.g. `io.k8s.api.core.v1.Pod`), or '' for virtual types. */
  definition: string;
  subresources: Record<string, SubresourceInfo>;
  /** True for types defined by a CustomResourceDefinition. */
  custom?: boolean;
  /** The kind of lists (`<kind>List` when unset; a CRD may name another). */
  listKind?: string;
  /** For custom types: the CRD's storage version (discovery's storageVersionHash names it). */
  storageVersion?: string;
  /** For custom types: the version's `selectableFields` (`.spec.color`), selectable by field selectors. */
  selectableFields?: string[];
  /** For custom types: the CRD is being deleted, so no new objects are created. */
  terminating?: boolean;
  /** For custom types: the version is deprecated; every request on it is answered with this warning. */
  warning?: string;
  /**
   * For custom types with a scale subresource: this version's scale paths, and every served
   * version's specReplicasPath by apiVersion (kube's ResourcePathMappings for managedFields).
   */
  scale?: ScalePaths & { replicasPaths: Record<string, string> };
  /** For custom types: the version's `additionalPrinterColumns` (none: the Age column). */
  printerColumns?: PrinterColumn[];
}

export interface GroupInfo {
  name: string;
  /** Served versions, preferred first. */
  versions: string[];
}

/** `group/version` as it appears in `apiVersion` (`v1` for the core group). */
export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/**
 * Identifies a stored resource type: group + resource, across versions and namespaces. One
 * resourceVersion counter and one change history exist per storage type. A resource kube serves
 * from another's store (events.k8s.io events: core events) has that resource's type.
 */
export function storageTypeOf(info: { group: string; resource: string }): string {
  const { group, resource } = storageResourceOf(info.group, info.resource);
  return group ? `${resource}.${group}` : resource;
}
