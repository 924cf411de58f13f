import { validateCoreEvent, validateEventsEvent } from '../../validation/event.js';
import { validateLease } from '../../validation/lease.js';
import { validateNode } from '../../validation/node.js';
import { validatePriorityClass } from '../../validation/priority-class.js';
import { validateClusterRole, validateClusterRoleBinding, validateRole, validateRoleBinding } from '../../validation/rbac.js';
import { defaultNode, defaultPriorityClass, defaultRoleBinding, defaultWebhooks } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';
import { isObject, type Obj } from '../../api/object-util.js';
import type { User } from '../../api/user.js';
import { validateWebhookConfiguration } from '../../validation/webhook-configuration.js';

/** Nodes, events, leases, scheduling, RBAC and the other cluster-level kinds. */

export const nodes: KindStrategy = {
  defaults: defaultNode,
  validate: validateNode,
  tracksGeneration: false,
  // A node registers with the status its kubelet reports.
  createStatus: 'keep',
  statusUpdatesMetadata: true,
};

export const coreEvents: KindStrategy = {
  validate: (obj) => validateCoreEvent(obj),
  updateMetadataPasses: { objectMeta: false, objectMetaUpdate: false },
  createOnUpdate: true,
};

/** events.k8s.io Events share core Events' store (src/conversion/event-conversion.ts), whose Invalid status names the core group. */
export const eventsEvents: KindStrategy = {
  validate: validateEventsEvent,
  updateMetadataPasses: { objectMeta: false, objectMetaUpdate: true },
  errorGroup: '',
  createOnUpdate: true,
};

export const leases: KindStrategy = { validate: (obj) => validateLease(obj), createOnUpdate: true };
export const priorityClasses: KindStrategy = { defaults: defaultPriorityClass, validate: validatePriorityClass };
export const roles: KindStrategy = { validate: (obj) => validateRole(obj) };
export const clusterRoles: KindStrategy = { validate: (obj) => validateClusterRole(obj) };
export const roleBindings: KindStrategy = { defaults: defaultRoleBinding, validate: validateRoleBinding };
export const clusterRoleBindings: KindStrategy = { defaults: defaultRoleBinding, validate: validateClusterRoleBinding };
export const mutatingWebhookConfigurations: KindStrategy = {
  defaults: (obj) => defaultWebhooks(obj, true),
  validate: (obj, old) => validateWebhookConfiguration(obj, old, true),
  tracksGeneration: true,
};
export const validatingWebhookConfigurations: KindStrategy = {
  defaults: (obj) => defaultWebhooks(obj, false),
  validate: (obj, old) => validateWebhookConfiguration(obj, old, false),
  tracksGeneration: true,
};
/** Kinds whose only fact is kube leaving their generation unset although they have a status subresource, or setting it although they have none. */
export const untrackedGeneration: KindStrategy = { tracksGeneration: false };
export const trackedGeneration: KindStrategy = { tracksGeneration: true };
/** CertificateSigningRequests: neither their status nor their approval strategy resets metadata, so writes there change labels, annotations and the rest. */
export const certificateSigningRequests: KindStrategy = { tracksGeneration: false, statusUpdatesMetadata: 'all', recordRequester: recordCsrRequester };

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
