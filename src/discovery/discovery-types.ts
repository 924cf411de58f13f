/**
 * Wire shapes of the discovery documents (meta/v1 APIVersions, APIGroupList, APIGroup, APIResourceList
 * and apidiscovery.k8s.io/v2 APIGroupDiscoveryList). Property order in these interfaces is the order
 * the builders write keys in, which is the field order of the Go structs kube-apiserver serialises.
 */

/** `metav1.ServerAddressByClientCIDR`. */
export interface ServerAddressByClientCIDR {
  clientCIDR: string;
  serverAddress: string;
}

/** `metav1.GroupVersionForDiscovery`. */
export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

/** `metav1.APIVersions` as served at `/api` (kind only: kube strips apiVersion for the legacy root). */
export interface APIVersions {
  kind: 'APIVersions';
  versions: string[];
  serverAddressByClientCIDRs: ServerAddressByClientCIDR[];
}

/** `metav1.APIGroup`; `kind`/`apiVersion` are present only when it is the top-level document. */
export interface APIGroup {
  kind?: 'APIGroup';
  apiVersion?: 'v1';
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

/** `metav1.APIGroupList` as served at `/apis`. */
export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroup[];
}

/** `metav1.APIResource`; optional fields are omitted when empty, as Go's `omitempty` does. */
export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

/** `metav1.APIResourceList`; `apiVersion` is absent for the core group (kube keeps it unversioned). */
export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion?: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

/** `metav1.GroupVersionKind` (every field always present). */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** `apidiscovery.k8s.io/v2` APISubresourceDiscovery. */
export interface APISubresourceDiscovery {
  subresource: string;
  responseKind: GroupVersionKind;
  verbs: string[];
}

/** `apidiscovery.k8s.io/v2` APIResourceDiscovery. */
export interface APIResourceDiscovery {
  resource: string;
  responseKind: GroupVersionKind;
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}

/** `apidiscovery.k8s.io/v2` APIVersionDiscovery. */
export interface APIVersionDiscovery {
  version: string;
  resources?: APIResourceDiscovery[];
  freshness: 'Current' | 'Stale';
}

/** `apidiscovery.k8s.io/v2` APIGroupDiscovery (`metadata.name` is absent for the core group). */
export interface APIGroupDiscovery {
  metadata: { name?: string };
  versions?: APIVersionDiscovery[];
}

/** `apidiscovery.k8s.io/v2` APIGroupDiscoveryList. */
export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: 'apidiscovery.k8s.io/v2';
  metadata: Record<string, never>;
  items: APIGroupDiscovery[];
}
