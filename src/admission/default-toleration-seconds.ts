import type { ResourceInfo } from '../api/resource-info.js';
import { objects } from '../validation/value-access.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admittedPod, podSpecOf } from './pod-admission-target.js';

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';
/** kube-apiserver's --default-not-ready-toleration-seconds and --default-unreachable-toleration-seconds. */
const DEFAULT_SECONDS = 300;

/**
 * kube's DefaultTolerationSeconds plugin: a Pod created or updated without a toleration of the
 * NoExecute `not-ready` / `unreachable` node taints gets one for 300 seconds, so its pods are evicted
 * five minutes after their node fails rather than at once.
 */
export class DefaultTolerationSeconds implements AdmissionPlugin {
  readonly name = 'DefaultTolerationSeconds';

  /** Pod creates and updates only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return (operation === 'CREATE' || operation === 'UPDATE') && subresource === '' && info.group === '' && info.resource === 'pods';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    const pod = admittedPod(a);
    if (pod === undefined) return;
    const spec = podSpecOf(pod);
    const tolerations = objects(spec.tolerations);
    const tolerates = (key: string): boolean =>
      tolerations.some((t) => {
        const k = typeof t.key === 'string' ? t.key : '';
        const effect = typeof t.effect === 'string' ? t.effect : '';
        return (k === key || k === '') && (effect === 'NoExecute' || effect === '');
      });
    const added = [NOT_READY, UNREACHABLE]
      .filter((key) => !tolerates(key))
      .map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: DEFAULT_SECONDS }));
    if (added.length > 0) spec.tolerations = [...(Array.isArray(spec.tolerations) ? (spec.tolerations as unknown[]) : []), ...added];
  }
}
