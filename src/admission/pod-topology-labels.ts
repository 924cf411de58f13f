import type { Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { asObject } from '../api/values.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** kube's default PodTopologyLabels configuration: the labels copied from a node. */
const TOPOLOGY_LABELS = ['topology.kubernetes.io/zone', 'topology.kubernetes.io/region'];

/**
 * kube's PodTopologyLabels plugin (gate PodTopologyLabelsAdmission, on in 1.36): a Pod created with
 * `spec.nodeName`, or a Binding of a pod to a Node, gets the node's `topology.kubernetes.io/zone`
 * and `region` labels (overwriting the pod's or binding's own); the binding's labels then reach the
 * pod. A node that does not exist gives no labels.
 */
export class PodTopologyLabels implements AdmissionPlugin {
  readonly name = 'PodTopologyLabels';

  constructor(private readonly storage: Storage) {}

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.info.group !== '' || a.info.resource !== 'pods' || a.object === undefined) return;
    let nodeName: unknown;
    if (a.subresource === '') nodeName = asObject(a.object.spec).nodeName;
    else if (a.subresource === 'binding') {
      const target = asObject(a.object.target);
      if (target.kind !== 'Node') return;
      nodeName = target.name;
    } else return;
    if (typeof nodeName !== 'string' || nodeName === '') return;
    const copied = await this.topologyLabels(nodeName);
    if (Object.keys(copied).length === 0) return;
    const metadata = asObject(a.object.metadata);
    // Go writes a map's keys in order.
    metadata.labels = Object.fromEntries(Object.entries({ ...asObject(metadata.labels), ...copied }).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
    a.object.metadata = metadata;
  }

  private async topologyLabels(nodeName: string): Promise<Record<string, string>> {
    const stored = await this.storage.get('nodes', nodeName);
    if (stored === undefined) return {};
    const labels = asObject(asObject((JSON.parse(stored.json) as Obj).metadata).labels);
    const copied: Record<string, string> = {};
    for (const key of TOPOLOGY_LABELS) if (typeof labels[key] === 'string') copied[key] = labels[key];
    return copied;
  }
}
