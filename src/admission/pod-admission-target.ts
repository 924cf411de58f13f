import type { Obj } from '../api/object-util.js';
import type { AdmissionAttributes } from './admission.js';

/**
 * The Pod an admission plugin acts on: the object of a write to the `pods` resource itself (not a
 * subresource), as kube's pod plugins select it; undefined for anything else.
 */
export function admittedPod(a: AdmissionAttributes): Obj | undefined {
  if (a.info.group !== '' || a.info.resource !== 'pods' || a.subresource !== '' || a.object === undefined) return undefined;
  return a.object;
}

/** The pod's spec object (created when missing, as a Go struct always has one). */
export function podSpecOf(pod: Obj): Obj {
  const spec = pod.spec;
  if (typeof spec === 'object' && spec !== null && !Array.isArray(spec)) return spec as Obj;
  const created: Obj = {};
  pod.spec = created;
  return created;
}
