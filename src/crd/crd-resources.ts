import { apiVersionOf, type ResourceInfo } from '../api/resource-info.js';
import { compareKubeVersions, storageVersionName, type CrdModel, type CrdNames, type CrdVersion, definitionPrefix } from './crd-model.js';

/** kube's verbs of a custom resource, in the order its discovery lists them. */
export const CUSTOM_RESOURCE_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

/** The served resource of one version of CRD under NAMES (its accepted names). */
export function resourceInfoOf(crd: CrdModel, names: CrdNames, version: CrdVersion): ResourceInfo {
  const subresources: ResourceInfo['subresources'] = {};
  if (version.status) subresources.status = { kind: names.kind, group: crd.group, version: version.name, verbs: [...SUBRESOURCE_VERBS] };
  if (version.scale !== undefined) subresources.scale = { kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: [...SUBRESOURCE_VERBS] };
  return {
    group: crd.group,
    version: version.name,
    resource: names.plural,
    kind: names.kind,
    ...(names.listKind !== '' && names.listKind !== `${names.kind}List` ? { listKind: names.listKind } : {}),
    namespaced: crd.namespaced,
    verbs: [...CUSTOM_RESOURCE_VERBS],
    singularName: names.singular,
    shortNames: [...names.shortNames],
    categories: [...names.categories],
    definition: `${definitionPrefix(crd.group)}.${version.name}.${names.kind}`,
    subresources,
    custom: true,
    storageVersion: storageVersionName(crd) || version.name,
    ...(version.selectableFields.length > 0 ? { selectableFields: [...version.selectableFields] } : {}),
    ...(crd.deleting ? { terminating: true } : {}),
    ...(version.scale !== undefined ? { scale: { ...version.scale, replicasPaths: replicasPathsOfCrd(crd) } } : {}),
    printerColumns: version.printerColumns.map((c) => ({ ...c })),
    ...(version.deprecated ? { warning: version.deprecationWarning ?? defaultDeprecationWarning(crd, version.name) } : {}),
  };
}

/** Every served version's specReplicasPath by apiVersion, for the versions with a scale subresource. */
function replicasPathsOfCrd(crd: CrdModel): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of crd.versions) if (v.served && v.name !== '' && v.scale !== undefined) out[apiVersionOf(crd.group, v.name)] = v.scale.specReplicasPath;
  return out;
}

/**
 * kube's warning for a deprecated version without its own `deprecationWarning`: `<group>/<version>
 * <Kind> is deprecated`, naming the highest-priority served, undeprecated version above it to use.
 */
function defaultDeprecationWarning(crd: CrdModel, version: string): string {
  const msg = `${crd.group}/${version} ${crd.names.kind} is deprecated`;
  const newer = crd.versions
    .filter((v) => v.served && !v.deprecated && compareKubeVersions(v.name, version) < 0)
    .map((v) => v.name)
    .sort(compareKubeVersions);
  return newer.length === 0 ? msg : `${msg}; use ${crd.group}/${newer[0]} ${crd.names.kind}`;
}

/** Every served version's resource, storage version first. */
export function servedResources(crd: CrdModel, names: CrdNames): ResourceInfo[] {
  return crd.versions.filter((v) => v.served && v.name !== '').map((v) => resourceInfoOf(crd, names, v));
}
