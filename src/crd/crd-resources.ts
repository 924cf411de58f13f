import type { ResourceInfo } from '../registry/resource-types.js';
import { storageVersionName, type CrdModel, type CrdNames, type CrdVersion } from './crd-model.js';
import { definitionPrefix } from './crd-openapi.js';

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
  };
}

/** Every served version's resource, storage version first. */
export function servedResources(crd: CrdModel, names: CrdNames): ResourceInfo[] {
  return crd.versions.filter((v) => v.served && v.name !== '').map((v) => resourceInfoOf(crd, names, v));
}
