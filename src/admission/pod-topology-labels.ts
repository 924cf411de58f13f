import type { ResourceInfo } from '../api/resource-info.js';
import type { Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { asObject } from '../api/values.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

/** kube's default PodTopologyLabels configuration: the labels copied from a node. */
const TOPOLOGY_LABELS = ['topology.kubernetes.io/zone', 'topology.kubernetes.io/region'];

/** Nodes whose labels are remembered before the memo starts again (a bound on nodes since deleted). */
const MAX_NODES_REMEMBERED = 10_000;

/**
 * kube's PodTopologyLabels plugin (gate PodTopologyLabelsAdmission, on in 1.36): a Pod created with
 * `spec.nodeName`, or a Binding of a pod to a Node, gets the node's `topology.kubernetes.io/zone`
 * and `region` labels (overwriting the pod's or binding's own); the binding's labels then reach the
 * pod. A node that does not exist gives no labels.
 */
export class PodTopologyLabels implements AdmissionPlugin {
  readonly name = 'PodTopologyLabels';

  /** Each node's topology labels at the version they were read from. */
  private readonly seen = new Map<string, { resourceVersion: string; labels: Record<string, string> }>();

  constructor(private readonly storage: Storage) {}

  /** Pod creates and bindings only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'CREATE' && (subresource === '' || subresource === 'binding') && info.group === '' && info.resource === 'pods';
  }

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

  /**
   * The node's topology labels. As kube's plugin reads its node informer, this reads the process's
   * cached copy when it has one (the Redis list cache), else the store; the labels of a node
   * version already seen are not parsed again.
   */
  private async topologyLabels(nodeName: string): Promise<Record<string, string>> {
    const stored = this.storage.peek?.('nodes', nodeName) ?? (await this.storage.get('nodes', nodeName));
    if (stored === undefined) return {};
    const known = this.seen.get(nodeName);
    if (known?.resourceVersion === stored.resourceVersion) return known.labels;
    const labels = asObject(asObject((JSON.parse(stored.json) as Obj).metadata).labels);
    const copied: Record<string, string> = {};
    for (const key of TOPOLOGY_LABELS) if (typeof labels[key] === 'string') copied[key] = labels[key];
    if (this.seen.size >= MAX_NODES_REMEMBERED) this.seen.clear();
    this.seen.set(nodeName, { resourceVersion: stored.resourceVersion, labels: copied });
    return copied;
  }
}
