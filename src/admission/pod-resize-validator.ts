import type { ResourceInfo } from '../api/resource-info.js';
import { forbidden, type ApiError } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import { compareQuantities, milliValueOf, quantityIntegerValue } from '../api/quantity.js';
import type { Storage } from '../storage/storage.js';
import { podRequests } from '../validation/pod-resource-totals.js';
import { asObject, asString } from '../api/values.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';

const PODS = { group: '', resource: 'pods' };

/**
 * kube's PodResizeValidator plugin: a `pods/NAME/resize` update of a pod bound to a node that
 * changes its generation (its resources changed) is refused (403) when the node does not exist, is
 * labelled with another `kubernetes.io/os` than linux (cause `UnsupportedPlatform`), or has less
 * allocatable cpu or memory than the pod then requests (PodRequests: containers, sidecars, init
 * containers, pod-level requests and overhead; cause `NodeCapacity`). A node without allocatable
 * cpu or memory has none of it.
 */
export class PodResizeValidator implements AdmissionPlugin {
  readonly name = 'PodResizeValidator';

  constructor(private readonly storage: Storage) {}

  /** Pod resizes only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'UPDATE' && subresource === 'resize' && info.group === '' && info.resource === 'pods';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'UPDATE' || a.info.group !== '' || a.info.resource !== 'pods' || a.subresource !== 'resize') return;
    if (a.object === undefined || a.oldObject === undefined) return;
    const nodeName = asString(asObject(a.object.spec).nodeName);
    if (nodeName === '' || asObject(a.oldObject.metadata).generation === asObject(a.object.metadata).generation) return;
    const node = await nodeNamed(this.storage, nodeName);
    if (node === undefined) throw forbidden(PODS, a.name, `node ${JSON.stringify(nodeName)} not found`);
    const os = asObject(asObject(node.metadata).labels)['kubernetes.io/os'];
    if (typeof os === 'string' && os !== 'linux') {
      throw withCause(
        forbidden(PODS, a.name, `pod resize is only supported on linux nodes, node ${JSON.stringify(nodeName)} is ${JSON.stringify(os)}`),
        'UnsupportedPlatform',
      );
    }
    const shortfall = allocatableShortfall(a.object, asObject(asObject(node.status).allocatable));
    if (shortfall !== undefined) throw withCause(forbidden(PODS, a.name, shortfall), 'NodeCapacity');
  }
}

/** The stored Node `name`, or undefined. */
export async function nodeNamed(storage: Storage, name: string): Promise<Obj | undefined> {
  const stored = await storage.get('nodes', name);
  return stored === undefined ? undefined : (JSON.parse(stored.json) as Obj);
}

function withCause(err: ApiError, type: string): ApiError {
  if (err.details !== undefined) err.details.causes = [...(err.details.causes ?? []), { reason: type }];
  return err;
}

/** validateRequestsWithinAllocatable: kube's message naming the cpu and memory the pod requests beyond the node's allocatable, or undefined. */
function allocatableShortfall(pod: Obj, allocatable: Obj): string | undefined {
  const requests = podRequests(pod);
  const cpu = requests.get('cpu') ?? '0';
  const memory = requests.get('memory') ?? '0';
  const cpuAllocatable = asString(allocatable.cpu) || '0';
  const memoryAllocatable = asString(allocatable.memory) || '0';
  const parts: string[] = [];
  if (compareQuantities(cpu, cpuAllocatable) === 1)
    parts.push(`cpu, requested: ${milliValueOf(cpu) ?? 0n}, allocatable: ${milliValueOf(cpuAllocatable) ?? 0n}`);
  if (compareQuantities(memory, memoryAllocatable) === 1) {
    parts.push(`memory, requested: ${quantityIntegerValue(memory) ?? 0n}, allocatable: ${quantityIntegerValue(memoryAllocatable) ?? 0n}`);
  }
  return parts.length === 0 ? undefined : `node didn't have enough allocatable resources: ${parts.join('; ')}`;
}
