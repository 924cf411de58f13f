import { metadataOf, type Obj } from '../api/object-util.js';
import { asArray, asObject } from '../api/values.js';
import { objects } from '../validation/value-access.js';

/**
 * kube's pod resize strategy (dropNonResizeUpdates): a `pods/NAME/resize` write keeps the stored
 * pod but for the containers' and init containers' `resources` and `resizePolicy` and the
 * pod-level `spec.resources` (InPlacePodLevelResourcesVerticalScaling, on in 1.36); the status and
 * the labels, annotations, finalizers and owner references stay as stored. A write that adds,
 * removes, reorders or renames containers is left as sent, for validation to refuse.
 */
export function dropNonResizeUpdates(next: Obj, old: Obj): Obj {
  const nextSpec = asObject(next.spec);
  const oldSpec = asObject(old.spec);
  const containers = mergedResources(asArray(nextSpec.containers), asArray(oldSpec.containers));
  const initContainers = mergedResources(asArray(nextSpec.initContainers), asArray(oldSpec.initContainers));
  if (containers === undefined || initContainers === undefined) return next;
  const spec: Obj = structuredClone(oldSpec);
  if (nextSpec.resources === undefined) delete spec.resources;
  else spec.resources = nextSpec.resources;
  if (containers.length > 0) spec.containers = containers;
  if (initContainers.length > 0) spec.initContainers = initContainers;
  const result: Obj = { ...next, spec };
  if (old.status === undefined) delete result.status;
  else result.status = structuredClone(old.status);
  const meta = { ...metadataOf(next) };
  const oldMeta = metadataOf(old);
  for (const field of ['deletionTimestamp', 'generation', 'labels', 'annotations', 'finalizers', 'ownerReferences']) {
    if (oldMeta[field] === undefined) delete meta[field];
    else meta[field] = structuredClone(oldMeta[field]);
  }
  result.metadata = meta;
  return result;
}

/** The stored containers with the request's resources and resize policies, or undefined when the two lists do not line up by name. */
function mergedResources(next: unknown[], old: unknown[]): Obj[] | undefined {
  if (next.length !== old.length) return undefined;
  const merged: Obj[] = [];
  for (let i = 0; i < old.length; i++) {
    const n = asObject(next[i]);
    const o: Obj = structuredClone(objects(old)[i]);
    if (n.name !== o.name) return undefined;
    for (const field of ['resources', 'resizePolicy']) {
      if (n[field] === undefined) delete o[field];
      else o[field] = n[field];
    }
    merged.push(o);
  }
  return merged;
}
