/**
 * A pod spec's container resources totalled as kube 1.36's AggregateContainerRequests and
 * AggregateContainerLimits total them (k8s.io/component-helpers/resource): regular containers and
 * sidecars (init containers with `restartPolicy: Always`) add up, and each other init container,
 * together with the sidecars started before it, only raises the total to its own amount. Quantities
 * are canonical texts; used by pod-level resource validation and defaulting.
 */
import { addResourceList, maxResourceList, type ResourceTotals } from './quantity-sum.js';
import { asObject, type Obj } from '../api/values.js';
import { objects, stringEntries } from './value-access.js';

function listOf(container: Obj, key: 'requests' | 'limits'): ResourceTotals {
  return new Map(stringEntries(asObject(asObject(container.resources)[key])));
}

function aggregate(spec: Obj, key: 'requests' | 'limits'): ResourceTotals {
  const totals: ResourceTotals = new Map();
  for (const container of objects(spec.containers)) addResourceList(totals, listOf(container, key));
  const sidecars: ResourceTotals = new Map();
  const initPeak: ResourceTotals = new Map();
  for (const container of objects(spec.initContainers)) {
    const own = listOf(container, key);
    let effective: ResourceTotals;
    if (container.restartPolicy === 'Always') {
      addResourceList(totals, own);
      addResourceList(sidecars, own);
      effective = sidecars;
    } else {
      effective = new Map();
      addResourceList(effective, own);
      addResourceList(effective, sidecars);
    }
    maxResourceList(initPeak, effective);
  }
  maxResourceList(totals, initPeak);
  return totals;
}

/** AggregateContainerRequests: what the pod's containers request in total, by resource. */
export function aggregateContainerRequests(spec: Obj): ResourceTotals {
  return aggregate(spec, 'requests');
}

/** AggregateContainerLimits: the pod's containers' limits in total, by resource. */
export function aggregateContainerLimits(spec: Obj): ResourceTotals {
  return aggregate(spec, 'limits');
}

/** Whether a resource can be set at pod level (PodLevelResources): cpu, memory and hugepages. */
function podLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');
}

/**
 * kube's PodRequests with default options: the containers' aggregate, with the pod-level requests
 * of cpu, memory and hugepages in place of theirs when the pod sets any, plus the pod's overhead.
 */
export function podRequests(pod: Obj): ResourceTotals {
  const spec = asObject(pod.spec);
  const totals = aggregateContainerRequests(spec);
  const podLevel = stringEntries(asObject(asObject(spec.resources).requests)).filter(([name]) => podLevelResource(name));
  for (const [name, quantity] of podLevel) totals.set(name, quantity);
  addResourceList(totals, new Map(stringEntries(asObject(spec.overhead))));
  return totals;
}
