import { compareQuantities } from '../api/quantity.js';
import { addResourceList, type ResourceTotals } from './quantity-sum.js';
import { asObject, type Obj, objectOrUndefined } from '../api/values.js';
import { objects, stringEntries } from './value-access.js';

/**
 * A Pod's `status.qosClass` as kube 1.36 computes it on create (qos.ComputePodQOS): from the pod-level
 * `spec.resources` when present (PodLevelResources is on by default), else from the regular and init
 * containers' cpu and memory. Only positive quantities count; Guaranteed needs a cpu and a memory
 * limit (on the pod, or on every container) and requests equal to the limits.
 */

const QOS_RESOURCES = ['cpu', 'memory'];

/** processResourceList: the positive cpu and memory quantities of `list` added to `totals`; their names. */
function addPositive(totals: ResourceTotals, list: unknown): Set<string> {
  const positive = new Map(stringEntries(list).filter(([name, q]) => QOS_RESOURCES.includes(name) && compareQuantities(q, '0') === 1));
  addResourceList(totals, positive);
  return new Set(positive.keys());
}

/** ComputePodQOS: Guaranteed, Burstable or BestEffort. */
export function podQosClass(pod: Obj): string {
  const spec = asObject(pod.spec);
  const requests: ResourceTotals = new Map();
  const limits: ResourceTotals = new Map();
  let guaranteed = true;
  const podResources = objectOrUndefined(spec.resources);
  if (podResources !== undefined) {
    addPositive(requests, podResources.requests);
    const limited = addPositive(limits, podResources.limits);
    if (stringEntries(podResources.limits).length > 0 && !QOS_RESOURCES.every((r) => limited.has(r))) guaranteed = false;
  } else {
    for (const container of [...objects(spec.containers), ...objects(spec.initContainers)]) {
      const resources = asObject(container.resources);
      addPositive(requests, resources.requests);
      const limited = addPositive(limits, resources.limits);
      if (!QOS_RESOURCES.every((r) => limited.has(r))) guaranteed = false;
    }
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [name, request] of requests) {
      const limit = limits.get(name);
      if (limit === undefined || compareQuantities(limit, request) !== 0) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}
