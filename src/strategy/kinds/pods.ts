import { isObject, type Obj } from '../../api/object-util.js';
import { validatePod } from '../../validation/pod-spec.js';
import { validatePodTemplate } from '../../validation/workloads.js';
import { defaultPodTemplate } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';
import { defaultPod } from '../pod-defaults.js';

/**
 * Pods: defaults in pod-defaults.ts, validation in validation/pod-spec.ts (containers, volumes,
 * affinity, ... in the modules it names; the spec is immutable but for kube's mutable fields),
 * admission in src/admission/ (service account, priority, toleration seconds), binding and eviction
 * in the subresource actions, table columns in codec/printers/pod.ts, field selectors in
 * selectors/field-selector-types.ts.
 */

/** kube's QoS class of a pod, from its containers' requests and limits (the status a create starts with). */
function podQosClass(pod: Obj): string {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const containers = [
    ...(Array.isArray(spec.containers) ? (spec.containers as unknown[]) : []),
    ...(Array.isArray(spec.initContainers) ? (spec.initContainers as unknown[]) : []),
  ];
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const res = isObject(c) && isObject(c.resources) ? c.resources : {};
    const requests = isObject(res.requests) ? res.requests : {};
    const limits = isObject(res.limits) ? res.limits : {};
    if (Object.keys(requests).length > 0 || Object.keys(limits).length > 0) any = true;
    for (const r of ['cpu', 'memory']) {
      if (limits[r] === undefined) guaranteed = false;
      else if (requests[r] !== undefined && requests[r] !== limits[r]) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

export const pods: KindStrategy = {
  defaults: defaultPod,
  validate: validatePod,
  // A new pod is Pending with its QoS class, whatever status was sent.
  createStatus: (pod) => ({ phase: 'Pending', qosClass: podQosClass(pod) }),
  // The kubelet's status writes also carry labels and annotations.
  statusUpdatesMetadata: true,
  returnsDeletedObject: true,
};

export const podTemplates: KindStrategy = {
  defaults: defaultPodTemplate,
  validate: (obj) => validatePodTemplate(obj),
};
