import { invalid, type StatusCause } from '../api/errors.js';
import { validateConfigMap, validateSecret } from '../validation/config-data.js';
import { validateLease } from '../validation/lease.js';
import { validatePriorityClass } from '../validation/priority-class.js';
import { validateClusterRole, validateClusterRoleBinding, validateRole, validateRoleBinding } from '../validation/rbac.js';
import { validateStorageClass } from '../validation/storage-class.js';
import { validateIngressClass } from '../validation/ingress-class.js';
import { validateNetworkPolicy } from '../validation/network-policy.js';
import { validateIngress } from '../validation/ingress.js';
import { validatePersistentVolumeClaim } from '../validation/persistent-volume-claim.js';
import { validatePersistentVolume } from '../validation/persistent-volume.js';
import { validateEndpoints } from '../validation/endpoints.js';
import { validateEndpointSlice } from '../validation/endpoint-slice.js';
import { validateNode } from '../validation/node.js';
import { validateCronJob, validateJob } from '../validation/jobs.js';
import { validatePodDisruptionBudget, validatePodDisruptionBudgetStatus } from '../validation/disruption-budget.js';
import { validateHorizontalPodAutoscaler, validateHorizontalPodAutoscalerStatus } from '../validation/autoscaler.js';
import { validateLimitRange } from '../validation/limit-range.js';
import { validateResourceQuota, validateResourceQuotaStatus } from '../validation/resource-quota.js';
import { validateNamespace, validateNamespaceStatus } from '../validation/namespace.js';
import { validateCoreEvent, validateEventsEvent } from '../validation/event.js';
import { validatePod } from '../validation/pod-spec.js';
import { validateService } from '../validation/service.js';
import {
  validateDaemonSet,
  validateDeployment,
  validatePodTemplate,
  validateReplicaSet,
  validateReplicationController,
  validateStatefulSet,
} from '../validation/workloads.js';
import { generateNameFrom } from '../validation/generate-name.js';
import { nameRuleFor } from '../validation/name-rules.js';
import { repeatedUpdateCauses, validateObjectMeta, type UpdateMetaPasses } from '../validation/object-meta.js';
import type { ResourceTarget } from './resource-target.js';
import { metadataOf, stringField, type Obj } from '../api/object-util.js';

/**
 * The kind's own checks by `group/resource` (so far these); other kinds have only their metadata
 * checked. `subresource` names the subresource a write goes to ('' for the object itself).
 */
const KIND_VALIDATORS: Record<string, (obj: Obj, old: Obj | undefined, subresource: string) => StatusCause[]> = {
  '/configmaps': validateConfigMap,
  '/secrets': validateSecret,
  'scheduling.k8s.io/priorityclasses': validatePriorityClass,
  'coordination.k8s.io/leases': (obj) => validateLease(obj),
  'rbac.authorization.k8s.io/roles': (obj) => validateRole(obj),
  'rbac.authorization.k8s.io/clusterroles': (obj) => validateClusterRole(obj),
  'rbac.authorization.k8s.io/rolebindings': validateRoleBinding,
  'rbac.authorization.k8s.io/clusterrolebindings': validateClusterRoleBinding,
  'storage.k8s.io/storageclasses': validateStorageClass,
  'networking.k8s.io/ingressclasses': validateIngressClass,
  '/pods': validatePod,
  '/services': validateService,
  '/podtemplates': (obj) => validatePodTemplate(obj),
  '/replicationcontrollers': (obj) => validateReplicationController(obj),
  'apps/deployments': validateDeployment,
  'apps/replicasets': validateReplicaSet,
  'apps/statefulsets': validateStatefulSet,
  'apps/daemonsets': validateDaemonSet,
  'batch/jobs': validateJob,
  'batch/cronjobs': validateCronJob,
  'policy/poddisruptionbudgets': (obj, _old, sub) => (sub === 'status' ? validatePodDisruptionBudgetStatus(obj) : validatePodDisruptionBudget(obj)),
  'autoscaling/horizontalpodautoscalers': (obj, old, sub) =>
    sub === 'status' ? validateHorizontalPodAutoscalerStatus(obj) : validateHorizontalPodAutoscaler(obj, old),
  '/limitranges': (obj) => validateLimitRange(obj),
  '/resourcequotas': (obj, old, sub) => (sub === 'status' ? validateResourceQuotaStatus(obj) : validateResourceQuota(obj, old)),
  '/namespaces': (obj, _old, sub) => (sub === 'status' ? validateNamespaceStatus(obj) : validateNamespace(obj, sub)),
  '/events': (obj) => validateCoreEvent(obj),
  'events.k8s.io/events': validateEventsEvent,
  'networking.k8s.io/networkpolicies': validateNetworkPolicy,
  'networking.k8s.io/ingresses': validateIngress,
  '/persistentvolumeclaims': validatePersistentVolumeClaim,
  '/persistentvolumes': validatePersistentVolume,
  '/endpoints': validateEndpoints,
  'discovery.k8s.io/endpointslices': validateEndpointSlice,
  '/nodes': validateNode,
};

/**
 * The core metadata validators each kind's update validation runs, for the kinds whose repeated
 * update causes have been checked against kube (others report each metadata problem once).
 */
const UPDATE_META_PASSES: Record<string, UpdateMetaPasses> = {
  'policy/poddisruptionbudgets': { objectMeta: false, objectMetaUpdate: false },
  'autoscaling/horizontalpodautoscalers': { objectMeta: false, objectMetaUpdate: true },
  '/limitranges': { objectMeta: true, objectMetaUpdate: false },
  '/resourcequotas': { objectMeta: false, objectMetaUpdate: true },
  '/namespaces': { objectMeta: true, objectMetaUpdate: true },
  '/serviceaccounts': { objectMeta: true, objectMetaUpdate: true },
  '/events': { objectMeta: false, objectMetaUpdate: false },
  'events.k8s.io/events': { objectMeta: false, objectMetaUpdate: true },
};

/** Resources served by another group's store: kube names that store's kind in the Invalid status. */
const STORE_GROUP: Record<string, string> = { 'events.k8s.io/events': '' };

function validateKind(r: ResourceTarget, obj: Obj, old: Obj | undefined): StatusCause[] {
  return KIND_VALIDATORS[`${r.info.group}/${r.info.resource}`]?.(obj, old, r.ri.subresource) ?? [];
}

/** The validation step of writes: 422 Invalid with one cause per field error. */
function check(r: ResourceTarget, obj: Obj, isCreate: boolean, old?: Obj): void {
  const metaOptions = {
    namespaced: r.info.namespaced,
    nameRule: nameRuleFor(r.info.group, r.info.resource),
    isCreate,
    old: old?.metadata,
    object: obj,
  };
  const passes = isCreate ? undefined : UPDATE_META_PASSES[`${r.info.group}/${r.info.resource}`];
  const causes = [
    ...validateObjectMeta(obj.metadata, metaOptions),
    ...(passes === undefined ? [] : repeatedUpdateCauses(obj.metadata, metaOptions, passes)),
    ...validateKind(r, obj, old),
  ];
  if (causes.length > 0) {
    const meta = metadataOf(obj);
    throw invalid(
      r.info.kind,
      STORE_GROUP[`${r.info.group}/${r.info.resource}`] ?? r.info.group,
      stringField(meta, 'name') || stringField(meta, 'generateName'),
      causes,
    );
  }
}

export function validateCreate(r: ResourceTarget, obj: Obj): void {
  check(r, obj, true);
}

export function validateUpdate(r: ResourceTarget, obj: Obj, old: Obj): void {
  check(r, obj, false, old);
}

/** A name from `generateName`, as kube's SimpleNameGenerator makes it. */
export function generateName(prefix: string): string {
  return generateNameFrom(prefix);
}
