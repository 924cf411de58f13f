import type { ResourceInfo } from '../api/resource-info.js';
import { forbidden } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { semanticEqual } from '../validation/semantic-equal.js';
import { asArray, asObject, asString } from '../api/values.js';
import { objects } from '../validation/value-access.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { nodeNamed } from './pod-resize-validator.js';

const PODS = { group: '', resource: 'pods' };

/**
 * The node features of kube 1.36's registry (k8s.io/component-helpers/nodedeclaredfeatures), sorted
 * by name as its framework sorts them, with whether a pod update needs each (InferForUpdate). Only
 * the two in-place resize features infer anything from an update.
 */
const FEATURES: { name: string; neededBy: (old: Obj, next: Obj) => boolean }[] = [
  { name: 'ExtendWebSocketsToKubelet', neededBy: () => false },
  // Pod-level resources changed (either side set).
  {
    name: 'InPlacePodLevelResourcesVerticalScaling',
    neededBy: (old, next) => (old.resources !== undefined || next.resources !== undefined) && !semanticEqual(old.resources, next.resources),
  },
  // A non-sidecar init container's resources changed.
  {
    name: 'InPlacePodVerticalScalingInitContainers',
    neededBy: (old, next) => {
      const nextInit = objects(next.initContainers);
      return objects(old.initContainers).some((c, i) => c.restartPolicy !== 'Always' && !semanticEqual(c.resources, nextInit[i]?.resources));
    },
  },
  { name: 'RestartAllContainersOnContainerExits', neededBy: () => false },
  { name: 'UserNamespacesHostNetworkSupport', neededBy: () => false },
];

/**
 * kube's NodeDeclaredFeatureValidator plugin (gate NodeDeclaredFeatures, beta and on in 1.36): an
 * update of a pod bound to a node (the pod itself or its `resize` subresource) that changes its
 * generation is refused (403) when it needs node features the node does not list in
 * `status.declaredFeatures` (resizing pod-level resources, resizing a non-sidecar init container),
 * or when the node does not exist.
 */
export class NodeDeclaredFeatureValidator implements AdmissionPlugin {
  readonly name = 'NodeDeclaredFeatureValidator';

  constructor(private readonly storage: Storage) {}

  /** Pod updates and resizes only. */
  handles(operation: AdmissionAttributes['operation'], info: ResourceInfo, subresource: string): boolean {
    return operation === 'UPDATE' && (subresource === '' || subresource === 'resize') && info.group === '' && info.resource === 'pods';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.operation !== 'UPDATE' || a.info.group !== '' || a.info.resource !== 'pods') return;
    if ((a.subresource !== '' && a.subresource !== 'resize') || a.object === undefined || a.oldObject === undefined) return;
    const nodeName = asString(asObject(a.object.spec).nodeName);
    if (nodeName === '' || asObject(a.oldObject.metadata).generation === asObject(a.object.metadata).generation) return;
    const oldSpec = asObject(a.oldObject.spec);
    const spec = asObject(a.object.spec);
    const needed = FEATURES.filter((f) => f.neededBy(oldSpec, spec)).map((f) => f.name);
    if (needed.length === 0) return;
    const node = await nodeNamed(this.storage, nodeName);
    if (node === undefined) throw forbidden(PODS, a.name, `node ${JSON.stringify(nodeName)} not found`);
    const declared = new Set(asArray(asObject(node.status).declaredFeatures).filter((f): f is string => typeof f === 'string'));
    const missing = needed.filter((f) => !declared.has(f));
    if (missing.length > 0) {
      throw forbidden(PODS, a.name, `pod update requires features ${missing.join(', ')} which are not available on node ${JSON.stringify(nodeName)}`);
    }
  }
}
