import { validateCoreEvent, validateEventsEvent } from '../../validation/event.js';
import { validateLease } from '../../validation/lease.js';
import { validateNode } from '../../validation/node.js';
import { validatePriorityClass } from '../../validation/priority-class.js';
import { validateClusterRole, validateClusterRoleBinding, validateRole, validateRoleBinding } from '../../validation/rbac.js';
import { defaultNode, defaultPriorityClass, defaultRoleBinding, defaultWebhooks } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';
import { apiServices } from './apiservices.js';
import { isObject, nowTimestamp, type Obj } from '../../api/object-util.js';
import type { User } from '../../api/user.js';
import { validateWebhookConfiguration } from '../../validation/webhook-configuration.js';
import { bindingPrinter, clusterTrustBundlePrinter, csrPrinter, policyBindingPrinter, policyPrinter, webhookConfigurationPrinter } from '../printers/access.js';
import {
  flowSchemaPrinter,
  leaseCandidatePrinter,
  leasePrinter,
  nameAgePrinter,
  priorityClassPrinter,
  priorityLevelPrinter,
  resourceClaimPrinter,
  resourceSlicePrinter,
  runtimeClassPrinter,
  storageVersionPrinter,
} from '../printers/control-plane.js';
import { componentStatusPrinter, nodePrinter } from '../printers/core.js';
import { eventPrinter } from '../printers/events.js';
import {
  clusterTrustBundleFieldSelectors,
  coreEventFieldSelectors,
  csrFieldSelectors,
  eventsEventFieldSelectors,
  nodeFieldSelectors,
  podCertificateRequestFieldSelectors,
  resourceSliceFieldSelectors,
} from '../field-selectors.js';
import { matchConditionCompiler } from '../../cel/match-conditions.js';

/** Nodes, events, leases, scheduling, RBAC and the other cluster-level kinds. */

export const nodes: KindStrategy = {
  printer: nodePrinter,
  fieldSelectors: nodeFieldSelectors,
  defaults: defaultNode,
  validate: validateNode,
  tracksGeneration: false,
  // A node registers with the status its kubelet reports.
  createStatus: 'keep',
  // kube's node status strategy resets only the spec.
  statusUpdatesMetadata: 'all',
};

/** Events take no part in garbage collection (kube's event strategies). */
export const coreEvents: KindStrategy = {
  garbageCollectionPolicy: () => 'Unsupported',
  printer: eventPrinter,
  fieldSelectors: coreEventFieldSelectors,
  validate: (obj) => validateCoreEvent(obj),
  updateMetadataPasses: { objectMeta: false, objectMetaUpdate: false },
  createOnUpdate: true,
};

/** events.k8s.io Events share core Events' store (src/conversion/event-conversion.ts), whose Invalid status names the core group. */
export const eventsEvents: KindStrategy = {
  garbageCollectionPolicy: () => 'Unsupported',
  printer: eventPrinter,
  fieldSelectors: eventsEventFieldSelectors,
  validate: validateEventsEvent,
  updateMetadataPasses: { objectMeta: false, objectMetaUpdate: true },
  errorGroup: '',
  createOnUpdate: true,
};

export const leases: KindStrategy = { printer: leasePrinter, validate: (obj) => validateLease(obj), createOnUpdate: true };
export const priorityClasses: KindStrategy = { printer: priorityClassPrinter, defaults: defaultPriorityClass, validate: validatePriorityClass };
export const roles: KindStrategy = { validate: (obj) => validateRole(obj) };
export const clusterRoles: KindStrategy = { validate: (obj) => validateClusterRole(obj) };
export const roleBindings: KindStrategy = { printer: bindingPrinter('roleBinding'), defaults: defaultRoleBinding, validate: validateRoleBinding };
export const clusterRoleBindings: KindStrategy = {
  printer: bindingPrinter('clusterRoleBinding'),
  defaults: defaultRoleBinding,
  validate: validateClusterRoleBinding,
};

/** A webhook's matchConditions expression is checked by compiling it as admission will. */
const checkMatchCondition = (expression: string): string | undefined => matchConditionCompiler().check(expression);
export const mutatingWebhookConfigurations: KindStrategy = {
  printer: webhookConfigurationPrinter(),
  defaults: (obj) => defaultWebhooks(obj, true),
  validate: (obj, old) => validateWebhookConfiguration(obj, old, true, checkMatchCondition),
  tracksGeneration: true,
};
export const validatingWebhookConfigurations: KindStrategy = {
  printer: webhookConfigurationPrinter(),
  defaults: (obj) => defaultWebhooks(obj, false),
  validate: (obj, old) => validateWebhookConfiguration(obj, old, false, checkMatchCondition),
  tracksGeneration: true,
};
export const validatingAdmissionPolicies: KindStrategy = {
  printer: policyPrinter('validations', 'Validations', 'Validations indicates the number of validation rules defined in this configuration'),
};
export const mutatingAdmissionPolicies: KindStrategy = {
  printer: policyPrinter('mutations', 'Mutations', 'Mutation indicates the number of mutations rules defined in this configuration'),
};
export const admissionPolicyBindings: KindStrategy = { printer: policyBindingPrinter() };
/** Kinds whose only fact is kube leaving their generation unset although they have a status subresource, or setting it although they have none. */
export const untrackedGeneration: KindStrategy = { tracksGeneration: false };
export const trackedGeneration: KindStrategy = { tracksGeneration: true };
/** CertificateSigningRequests: neither their status nor their approval strategy resets metadata, so writes there change labels, annotations and the rest. */
/**
 * A CSR's conditions get `lastUpdateTime` now when they have none, and `lastTransitionTime` from
 * the stored condition of the same type and status (now when there is none), as kube's strategies.
 */
function stampConditions(csr: Obj, old: Obj): void {
  const conditions = isObject(csr.status) && Array.isArray(csr.status.conditions) ? csr.status.conditions : [];
  const previous = isObject(old.status) && Array.isArray(old.status.conditions) ? old.status.conditions.filter(isObject) : [];
  const now = nowTimestamp();
  for (const c of conditions) {
    if (!isObject(c)) continue;
    if (typeof c.lastUpdateTime !== 'string' || c.lastUpdateTime === '') c.lastUpdateTime = now;
    if (typeof c.lastTransitionTime !== 'string' || c.lastTransitionTime === '') {
      const same = previous.find((p) => p.type === c.type && p.status === c.status && typeof p.lastTransitionTime === 'string' && p.lastTransitionTime !== '');
      c.lastTransitionTime = same?.lastTransitionTime ?? now;
    }
  }
}

/** A CSR's approval changes only the conditions of its status (and metadata), as kube's approval strategy. */
function approve(result: Obj, next: Obj, old: Obj): void {
  const conditions = isObject(next.status) ? next.status.conditions : undefined;
  const status: Obj = isObject(old.status) ? structuredClone(old.status) : {};
  if (conditions === undefined) delete status.conditions;
  else status.conditions = conditions;
  result.status = status;
  stampConditions(result, old);
}

export const certificateSigningRequests: KindStrategy = {
  prepareForStatusUpdate: stampConditions,
  statusLikeSubresources: { approval: approve },
  printer: csrPrinter,
  fieldSelectors: csrFieldSelectors,
  tracksGeneration: false,
  statusUpdatesMetadata: 'all',
  recordRequester: recordCsrRequester,
};

/** kube's CSR PrepareForCreate: spec.username, uid, groups and extra are the requester's, whatever was sent. */
function recordCsrRequester(csr: Obj, user: User): void {
  const spec: Obj = isObject(csr.spec) ? csr.spec : (csr.spec = {});
  delete spec.username;
  delete spec.uid;
  delete spec.groups;
  delete spec.extra;
  if (user.name !== '') spec.username = user.name;
  if (user.uid !== '') spec.uid = user.uid;
  if (user.groups.length > 0) spec.groups = [...user.groups];
  if (Object.keys(user.extra).length > 0) spec.extra = Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]]));
}
export const componentStatuses: KindStrategy = { printer: componentStatusPrinter };
export const clusterTrustBundles: KindStrategy = { printer: clusterTrustBundlePrinter, fieldSelectors: clusterTrustBundleFieldSelectors };
export const podCertificateRequests: KindStrategy = { fieldSelectors: podCertificateRequestFieldSelectors };
export const leaseCandidates: KindStrategy = { printer: leaseCandidatePrinter };
export const flowSchemas: KindStrategy = { printer: flowSchemaPrinter };
export const priorityLevelConfigurations: KindStrategy = { printer: priorityLevelPrinter };
export const storageVersions: KindStrategy = { printer: storageVersionPrinter };
export const runtimeClasses: KindStrategy = { printer: runtimeClassPrinter };
export const deviceClasses: KindStrategy = { ...trackedGeneration, printer: nameAgePrinter };
export const resourceClaims: KindStrategy = { printer: resourceClaimPrinter };
export const resourceClaimTemplates: KindStrategy = { printer: nameAgePrinter };
export const resourceSlices: KindStrategy = { printer: resourceSlicePrinter, fieldSelectors: resourceSliceFieldSelectors };

/** This file's kinds by `group/resource` (the core group is empty). */
export const CLUSTER_KINDS: Readonly<Record<string, KindStrategy>> = {
  '/nodes': nodes,
  '/events': coreEvents,
  'events.k8s.io/events': eventsEvents,
  'coordination.k8s.io/leases': leases,
  'scheduling.k8s.io/priorityclasses': priorityClasses,
  'rbac.authorization.k8s.io/roles': roles,
  'rbac.authorization.k8s.io/clusterroles': clusterRoles,
  'rbac.authorization.k8s.io/rolebindings': roleBindings,
  'rbac.authorization.k8s.io/clusterrolebindings': clusterRoleBindings,
  'admissionregistration.k8s.io/mutatingwebhookconfigurations': mutatingWebhookConfigurations,
  'admissionregistration.k8s.io/validatingwebhookconfigurations': validatingWebhookConfigurations,
  'admissionregistration.k8s.io/validatingadmissionpolicies': validatingAdmissionPolicies,
  'admissionregistration.k8s.io/validatingadmissionpolicybindings': admissionPolicyBindings,
  'admissionregistration.k8s.io/mutatingadmissionpolicies': mutatingAdmissionPolicies,
  'admissionregistration.k8s.io/mutatingadmissionpolicybindings': admissionPolicyBindings,
  'resource.k8s.io/deviceclasses': deviceClasses,
  'certificates.k8s.io/certificatesigningrequests': certificateSigningRequests,
  'apiregistration.k8s.io/apiservices': apiServices,
  '/componentstatuses': componentStatuses,
  'certificates.k8s.io/clustertrustbundles': clusterTrustBundles,
  'certificates.k8s.io/podcertificaterequests': podCertificateRequests,
  'coordination.k8s.io/leasecandidates': leaseCandidates,
  'flowcontrol.apiserver.k8s.io/flowschemas': flowSchemas,
  'flowcontrol.apiserver.k8s.io/prioritylevelconfigurations': priorityLevelConfigurations,
  'internal.apiserver.k8s.io/storageversions': storageVersions,
  'node.k8s.io/runtimeclasses': runtimeClasses,
  'resource.k8s.io/resourceclaims': resourceClaims,
  'resource.k8s.io/resourceclaimtemplates': resourceClaimTemplates,
  'resource.k8s.io/resourceslices': resourceSlices,
};
