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
import { validatePod } from '../validation/pod-spec.js';
import {
  validateDaemonSet, validateDeployment, validatePodTemplate, validateReplicaSet, validateReplicationController, validateStatefulSet,
} from '../validation/workloads.js';
import { generateNameFrom } from '../validation/generate-name.js';
import { nameRuleFor } from '../validation/name-rules.js';
import { validateObjectMeta } from '../validation/object-meta.js';
import type { ResourceRequest } from './context.js';
import { metadataOf, stringField, type Obj } from './object-util.js';

/** The kind's own checks by `group/resource` (so far these); other kinds have only their metadata checked. */
const KIND_VALIDATORS: Record<string, (obj: Obj, old: Obj | undefined) => StatusCause[]> = {
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
  '/podtemplates': (obj) => validatePodTemplate(obj),
  '/replicationcontrollers': (obj) => validateReplicationController(obj),
  'apps/deployments': validateDeployment,
  'apps/replicasets': validateReplicaSet,
  'apps/statefulsets': validateStatefulSet,
  'apps/daemonsets': validateDaemonSet,
  'batch/jobs': validateJob,
  'batch/cronjobs': validateCronJob,
  'networking.k8s.io/networkpolicies': validateNetworkPolicy,
  'networking.k8s.io/ingresses': validateIngress,
  '/persistentvolumeclaims': validatePersistentVolumeClaim,
  '/persistentvolumes': validatePersistentVolume,
  '/endpoints': validateEndpoints,
  'discovery.k8s.io/endpointslices': validateEndpointSlice,
  '/nodes': validateNode,
};

function validateKind(info: ResourceRequest['info'], obj: Obj, old: Obj | undefined): StatusCause[] {
  return KIND_VALIDATORS[`${info.group}/${info.resource}`]?.(obj, old) ?? [];
}

/** The validation step of writes: 422 Invalid with one cause per field error. */
function check(r: ResourceRequest, obj: Obj, isCreate: boolean, old?: Obj): void {
  const causes = [
    ...validateObjectMeta(obj.metadata, {
      namespaced: r.info.namespaced,
      nameRule: nameRuleFor(r.info.group, r.info.resource),
      isCreate,
      old: old?.metadata,
      object: obj,
    }),
    ...validateKind(r.info, obj, old),
  ];
  if (causes.length > 0) {
    const meta = metadataOf(obj);
    throw invalid(r.info.kind, r.info.group, stringField(meta, 'name') || stringField(meta, 'generateName'), causes);
  }
}

export function validateCreate(r: ResourceRequest, obj: Obj): void {
  check(r, obj, true);
}

export function validateUpdate(r: ResourceRequest, obj: Obj, old: Obj): void {
  check(r, obj, false, old);
}

/** A name from `generateName`, as kube's SimpleNameGenerator makes it. */
export function generateName(prefix: string): string {
  return generateNameFrom(prefix);
}
