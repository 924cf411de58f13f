import { randomUUID } from 'node:crypto';
import { canonicalize, isObject, jsonEqual, metadataOf, nowTimestamp, type Obj } from '../api/object-util.js';
import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import { type Storage } from '../storage/storage.js';
import { StorageError } from '../api/storage-error.js';

const API_SERVICES = 'apiservices.apiregistration.k8s.io';
const AUTOMANAGED = 'kube-aggregator.kubernetes.io/automanaged';

/**
 * kube-apiserver 1.36's APIService priorities ([groupPriorityMinimum, versionPriority]) by
 * `group/version` (core: `/v1`): DefaultGenericAPIServicePriorities merged with kube-apiserver's
 * own table. Group versions not listed get no APIService, as in kube (apiregistration's own, CRDs').
 */
const PRIORITIES: Readonly<Record<string, readonly [number, number]>> = {
  '/v1': [18000, 1],
  'events.k8s.io/v1': [17750, 15],
  'events.k8s.io/v1beta1': [17750, 5],
  'authentication.k8s.io/v1': [17700, 15],
  'authentication.k8s.io/v1beta1': [17700, 9],
  'authentication.k8s.io/v1alpha1': [17700, 1],
  'authorization.k8s.io/v1': [17600, 15],
  'certificates.k8s.io/v1': [17300, 15],
  'certificates.k8s.io/v1beta1': [17300, 9],
  'certificates.k8s.io/v1alpha1': [17300, 1],
  'rbac.authorization.k8s.io/v1': [17000, 15],
  'apiextensions.k8s.io/v1': [16700, 15],
  'admissionregistration.k8s.io/v1': [16700, 15],
  'admissionregistration.k8s.io/v1beta1': [16700, 12],
  'admissionregistration.k8s.io/v1alpha1': [16700, 9],
  'coordination.k8s.io/v1': [16500, 15],
  'coordination.k8s.io/v1beta1': [16500, 13],
  'coordination.k8s.io/v1alpha2': [16500, 12],
  'discovery.k8s.io/v1': [16200, 15],
  'discovery.k8s.io/v1beta1': [16200, 12],
  'flowcontrol.apiserver.k8s.io/v1': [16100, 21],
  'flowcontrol.apiserver.k8s.io/v1beta3': [16100, 18],
  'flowcontrol.apiserver.k8s.io/v1beta2': [16100, 15],
  'flowcontrol.apiserver.k8s.io/v1beta1': [16100, 12],
  'flowcontrol.apiserver.k8s.io/v1alpha1': [16100, 9],
  'internal.apiserver.k8s.io/v1alpha1': [16000, 9],
  'storagemigration.k8s.io/v1beta1': [15800, 9],
  'apps/v1': [17800, 15],
  'autoscaling/v1': [17500, 15],
  'autoscaling/v2': [17500, 30],
  'autoscaling/v2beta1': [17500, 9],
  'autoscaling/v2beta2': [17500, 1],
  'batch/v1': [17400, 15],
  'batch/v1beta1': [17400, 9],
  'batch/v2alpha1': [17400, 9],
  'networking.k8s.io/v1': [17200, 15],
  'networking.k8s.io/v1beta1': [17200, 9],
  'policy/v1': [17100, 15],
  'policy/v1beta1': [17100, 9],
  'storage.k8s.io/v1': [16800, 15],
  'storage.k8s.io/v1beta1': [16800, 9],
  'storage.k8s.io/v1alpha1': [16800, 1],
  'scheduling.k8s.io/v1': [16600, 15],
  'scheduling.k8s.io/v1alpha2': [16600, 2],
  'node.k8s.io/v1': [16300, 15],
  'node.k8s.io/v1alpha1': [16300, 1],
  'node.k8s.io/v1beta1': [16300, 9],
  'resource.k8s.io/v1': [16200, 21],
  'resource.k8s.io/v1beta2': [16200, 15],
  'resource.k8s.io/v1beta1': [16200, 9],
  'resource.k8s.io/v1alpha3': [16200, 1],
};

/** The APIService kube-aggregator's autoregistration makes for one served local group version. */
function localApiService(group: string, version: string, priority: readonly [number, number]): Obj {
  const spec: Obj = { group, version, groupPriorityMinimum: priority[0], versionPriority: priority[1] };
  if (group === '') delete spec.group;
  return canonicalize(
    {
      metadata: { name: `${version}.${group}`, uid: randomUUID(), creationTimestamp: nowTimestamp(), labels: { [AUTOMANAGED]: 'onstart' } },
      spec,
      status: {
        conditions: [
          { type: 'Available', status: 'True', lastTransitionTime: nowTimestamp(), reason: 'Local', message: 'Local APIServices are always available' },
        ],
      },
    },
    'APIService',
    'apiregistration.k8s.io/v1',
  );
}

/**
 * kube-apiserver's `kube-apiserver-autoregistration` post-start hook: one APIService (`VERSION.GROUP`,
 * label `kube-aggregator.kubernetes.io/automanaged: onstart`, status Available/Local) for every group
 * version this server serves that kube's priority table lists; a stored one with another spec gets
 * kube's; ones registered at an earlier start for versions no longer served are deleted. Idempotent
 * and safe from several processes (create-if-absent, compare-and-swap).
 */
export async function ensureLocalApiServices(storage: Storage, catalog: ResourceCatalog): Promise<void> {
  const wanted = new Map<string, Obj>();
  for (const g of catalog.groups()) {
    for (const version of g.versions) {
      const priority = PRIORITIES[`${g.name}/${version}`];
      if (priority !== undefined) wanted.set(`${version}.${g.name}`, localApiService(g.name, version, priority));
    }
  }
  const ignoreRaces = (err: unknown): void => {
    if (!(err instanceof StorageError && ['AlreadyExists', 'Conflict', 'NotFound'].includes(err.code))) throw err;
  };
  for (const [name, service] of wanted) {
    const stored = await storage.get(API_SERVICES, name);
    if (!stored) {
      await storage.create(API_SERVICES, name, service).catch(ignoreRaces);
      continue;
    }
    const current = JSON.parse(stored.json) as Obj;
    if (jsonEqual(current.spec, service.spec)) continue;
    await storage.update(API_SERVICES, name, { ...current, spec: service.spec }, stored.resourceVersion).catch(ignoreRaces);
  }
  const listed = await storage.list(API_SERVICES);
  for (const item of listed.items) {
    if (wanted.has(item.key)) continue;
    const labels = metadataOf(JSON.parse(item.json) as Obj).labels;
    if (!isObject(labels) || labels[AUTOMANAGED] !== 'onstart') continue;
    await storage.delete(API_SERVICES, item.key, item.resourceVersion).then(() => undefined, ignoreRaces);
  }
}
