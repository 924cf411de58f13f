import type { ResourceInfo } from '../api/resource-info.js';
import { asObject } from '../api/values.js';
import { objects } from '../validation/value-access.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { NOT_READY_TAINT_KEY } from '../nodes/node-condition-taints.js';

/**
 * kube's TaintNodesByCondition plugin: every Node created gets the `node.kubernetes.io/not-ready`
 * NoSchedule taint (unless it already has one with that key and effect), so nothing is scheduled
 * onto it before the node lifecycle controller has read its conditions and taken the taint off.
 */
export class TaintNodesByCondition implements AdmissionPlugin {
  readonly name = 'TaintNodesByCondition';

  /** Node creates only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'CREATE' && subresource === '' && info.group === '' && info.resource === 'nodes';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' || a.info.group !== '' || a.info.resource !== 'nodes' || a.subresource !== '' || a.object === undefined) return;
    const spec = asObject(a.object.spec);
    const taints = objects(spec.taints);
    if (taints.some((t) => t.key === NOT_READY_TAINT_KEY && t.effect === 'NoSchedule')) return;
    spec.taints = [...(Array.isArray(spec.taints) ? (spec.taints as unknown[]) : []), { key: NOT_READY_TAINT_KEY, effect: 'NoSchedule' }];
    a.object.spec = spec;
  }
}
