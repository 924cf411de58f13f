import type { ResourceInfo } from '../api/resource-info.js';
import { forbidden } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { semanticEqual } from '../validation/semantic-equal.js';
import { asObject } from '../api/values.js';
import { objects } from '../validation/value-access.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { admittedPod, podSpecOf } from './pod-admission-target.js';
import { mergeTolerations } from './toleration-merge.js';

const RUNTIME_CLASSES = 'runtimeclasses.node.k8s.io';
const PODS = { group: '', resource: 'pods' };

/**
 * kube's RuntimeClass plugin, on Pod creates that name `spec.runtimeClassName`: the class must exist
 * (403 `pod rejected: RuntimeClass "x" not found`); its `overhead.podFixed` becomes the pod's
 * `overhead` (a pod stating a different overhead, or an overhead its class does not define, is
 * refused); its `scheduling.nodeSelector` is merged into the pod's (a conflicting value is refused)
 * and its `scheduling.tolerations` merged with the pod's, dropping tolerations another one covers.
 */
export class RuntimeClassAdmission implements AdmissionPlugin {
  readonly name = 'RuntimeClass';

  constructor(private readonly storage: Storage) {}

  /** The pod and its RuntimeClass (undefined when it names none); undefined when the write is not a pod create. */
  private async target(a: AdmissionAttributes): Promise<{ pod: Obj; spec: Obj; rc: Obj | undefined } | undefined> {
    if (a.operation !== 'CREATE') return undefined;
    const pod = admittedPod(a);
    if (pod === undefined) return undefined;
    const spec = podSpecOf(pod);
    const className = spec.runtimeClassName;
    if (typeof className !== 'string') return { pod, spec, rc: undefined };
    const stored = await this.storage.get(RUNTIME_CLASSES, className);
    if (stored === undefined) throw forbidden(PODS, podName(a, pod), `pod rejected: RuntimeClass "${className}" not found`);
    return { pod, spec, rc: JSON.parse(stored.json) as Obj };
  }

  /** Pod creates only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'CREATE' && subresource === '' && info.group === '' && info.resource === 'pods';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const t = await this.target(a);
    if (t?.rc === undefined) return;
    const { pod, spec, rc } = t;
    if (rc.overhead != null) {
      const fixed = asObject(rc.overhead).podFixed;
      if (Object.keys(asObject(spec.overhead)).length > 0 && !semanticEqual(fixed, spec.overhead)) {
        throw forbidden(PODS, podName(a, pod), "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      }
      if (fixed == null) delete spec.overhead;
      else spec.overhead = structuredClone(fixed);
    }
    if (rc.scheduling == null) return;
    const scheduling = asObject(rc.scheduling);
    const classSelector = asObject(scheduling.nodeSelector);
    if (spec.nodeSelector == null) {
      if (scheduling.nodeSelector != null) spec.nodeSelector = { ...classSelector };
    } else {
      const selector = asObject(spec.nodeSelector);
      for (const [key, value] of Object.entries(classSelector)) {
        if (key in selector && selector[key] !== value) {
          throw forbidden(
            PODS,
            podName(a, pod),
            `conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${String(value)}; pod.spec.nodeSelector[${key}] = ${String(selector[key])}`,
          );
        }
        selector[key] = value;
      }
      // Go writes a map's keys in order.
      spec.nodeSelector = Object.fromEntries(Object.entries(selector).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
    }
    const merged = mergeTolerations(objects(spec.tolerations), objects(scheduling.tolerations));
    if (merged.length > 0) spec.tolerations = merged;
    else delete spec.tolerations;
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const t = await this.target(a);
    if (t === undefined) return;
    const { pod, spec, rc } = t;
    if (rc?.overhead != null) {
      if (!semanticEqual(asObject(rc.overhead).podFixed, spec.overhead)) {
        throw forbidden(PODS, podName(a, pod), "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
      }
    } else if (spec.overhead != null) {
      throw forbidden(PODS, podName(a, pod), 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead');
    }
  }
}

/** The name kube's admission errors give a pod: the request's, else the object's. */
function podName(a: AdmissionAttributes, pod: Obj): string {
  if (a.name) return a.name;
  const name = asObject(pod.metadata).name;
  return typeof name === 'string' ? name : '';
}
