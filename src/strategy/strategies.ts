import type { Obj } from '../api/object-util.js';
import type { ResourceInfo } from '../catalog/resource-types.js';
import type { KindStrategy } from './kind-strategy.js';
import { customResourceDefinitions } from '../crd/crd-strategy.js';
import { customResources } from '../crd/custom-resource-strategy.js';
import * as cluster from './kinds/cluster.js';
import { apiServices } from './kinds/apiservices.js';
import { configMaps, secrets } from './kinds/config.js';
import { limitRanges, namespaces, resourceQuotas, serviceAccounts } from './kinds/namespaces.js';
import { ingressClasses, ingresses, networkPolicies } from './kinds/networking.js';
import { podTemplates, pods } from './kinds/pods.js';
import { horizontalPodAutoscalers, podDisruptionBudgets } from './kinds/policy.js';
import { endpointSlices, endpoints, services } from './kinds/services.js';
import { csiDrivers, persistentVolumeClaims, persistentVolumes, storageClasses } from './kinds/storage.js';
import { cronJobs, daemonSets, deployments, jobs, replicaSets, replicationControllers, statefulSets } from './kinds/workloads.js';

/** Every built-in kind's strategy by `group/resource` (the core group is empty); kinds not listed have the generic behaviour. */
const STRATEGIES: Record<string, KindStrategy> = {
  '/pods': pods,
  '/podtemplates': podTemplates,
  '/replicationcontrollers': replicationControllers,
  'apps/deployments': deployments,
  'apps/replicasets': replicaSets,
  'apps/statefulsets': statefulSets,
  'apps/daemonsets': daemonSets,
  'batch/jobs': jobs,
  'batch/cronjobs': cronJobs,
  '/services': services,
  '/endpoints': endpoints,
  'discovery.k8s.io/endpointslices': endpointSlices,
  '/namespaces': namespaces,
  '/resourcequotas': resourceQuotas,
  '/limitranges': limitRanges,
  '/serviceaccounts': serviceAccounts,
  '/configmaps': configMaps,
  '/secrets': secrets,
  '/persistentvolumes': persistentVolumes,
  '/persistentvolumeclaims': persistentVolumeClaims,
  'storage.k8s.io/storageclasses': storageClasses,
  'storage.k8s.io/csidrivers': csiDrivers,
  'networking.k8s.io/networkpolicies': networkPolicies,
  'networking.k8s.io/ingresses': ingresses,
  'networking.k8s.io/ingressclasses': ingressClasses,
  'policy/poddisruptionbudgets': podDisruptionBudgets,
  'autoscaling/horizontalpodautoscalers': horizontalPodAutoscalers,
  '/nodes': cluster.nodes,
  '/events': cluster.coreEvents,
  'events.k8s.io/events': cluster.eventsEvents,
  'coordination.k8s.io/leases': cluster.leases,
  'scheduling.k8s.io/priorityclasses': cluster.priorityClasses,
  'rbac.authorization.k8s.io/roles': cluster.roles,
  'rbac.authorization.k8s.io/clusterroles': cluster.clusterRoles,
  'rbac.authorization.k8s.io/rolebindings': cluster.roleBindings,
  'rbac.authorization.k8s.io/clusterrolebindings': cluster.clusterRoleBindings,
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': cluster.mutatingWebhookConfigurations,
  'admissionregistration.k8s.io/validatingwebhookconfigurations': cluster.validatingWebhookConfigurations,
  'resource.k8s.io/deviceclasses': cluster.trackedGeneration,
  'certificates.k8s.io/certificatesigningrequests': cluster.certificateSigningRequests,
  'apiregistration.k8s.io/apiservices': apiServices,
  'apiextensions.k8s.io/customresourcedefinitions': customResourceDefinitions,
};

const GENERIC: KindStrategy = {};

/** The strategy of a built-in resource (the generic one for resources without their own facts and for custom resources). */
export function strategyFor(info: Pick<ResourceInfo, 'group' | 'resource' | 'custom'>): KindStrategy {
  if (info.custom === true) return customResources;
  return STRATEGIES[`${info.group}/${info.resource}`] ?? GENERIC;
}

/** Whether Capstan applies kube's defaulting to objects of this resource. */
export function hasDefaults(info: Pick<ResourceInfo, 'group' | 'resource'>): boolean {
  return strategyFor(info).defaults !== undefined;
}

/** Applies kube's defaults for the object's type and version in place (nothing for types without defaults). */
export function applyDefaults(info: Pick<ResourceInfo, 'group' | 'version' | 'resource'>, obj: Obj): void {
  strategyFor(info).defaults?.(obj, info.version);
}
