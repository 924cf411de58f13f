import { FieldSet, type FieldPath } from './field-set.js';
import { decodeManagedFields, encodeManagedFields, type Managed } from './managed-fields.js';
import { fieldElement } from './path-element.js';
import { SCALE_API_VERSION } from '../api/scale-kind.js';

/** The Scale subresource's group/version, and where a Scale keeps its replicas. */
const REPLICAS_IN_SCALE: FieldPath = [fieldElement('spec'), fieldElement('replicas')];

/** Where the parent keeps the replicas a Scale shows, per parent group/version (kube's ResourcePathMappings). */
export type ReplicasPaths = ReadonlyMap<string, FieldPath>;

/** A `.spec.replicas`-style path (a CRD's specReplicasPath) as a field path. */
export function replicasPath(dotted: string): FieldPath {
  return dotted
    .split('.')
    .filter((s) => s !== '')
    .map((s) => fieldElement(s));
}

/**
 * kube's ScaleHandler.ToSubresource: the entries of the parent (`parentEntries`) that own its
 * replicas path, each as an autoscaling/v1 entry owning the Scale's `.spec.replicas` (same
 * manager identifier, operation and time). Entries of versions the mapping does not know are left out.
 */
export function scaleEntriesOf(parentEntries: unknown, paths: ReplicasPaths): Managed {
  const out: Managed = new Map();
  for (const [id, vs] of decodeManagedFields(parentEntries)) {
    const path = paths.get(vs.apiVersion);
    if (path === undefined || !vs.set.has(path)) continue;
    out.set(id, { set: FieldSet.of(REPLICAS_IN_SCALE), apiVersion: SCALE_API_VERSION, applied: vs.applied, time: vs.time });
  }
  return out;
}

/**
 * kube's ScaleHandler.ToParent: the parent's entries after a write to its Scale whose entries are
 * now `scale`. A parent entry that owned the replicas path keeps it only if its manager still owns
 * the Scale's replicas (else it loses that path, and disappears when nothing is left); a Scale
 * manager the parent did not have gets an entry of `parentVersion` owning the replicas path, with
 * the parent's time for it, which is none: kube records such entries without a time. Other entries
 * are kept as they are.
 */
export function parentEntriesAfterScale(
  parentEntries: unknown,
  scale: Managed,
  parentVersion: string,
  paths: ReplicasPaths,
): Record<string, unknown>[] | undefined {
  const parent = decodeManagedFields(parentEntries);
  const remaining = new Map(scale);
  const out: Managed = new Map();
  for (const [id, vs] of parent) {
    const path = paths.get(vs.apiVersion);
    if (path === undefined) continue;
    if (!vs.set.has(path)) {
      out.set(id, vs);
      continue;
    }
    if (!remaining.has(id)) {
      const rest = vs.set.difference(FieldSet.of(path));
      if (!rest.empty()) out.set(id, { ...vs, set: rest });
    } else {
      out.set(id, vs);
      remaining.delete(id);
    }
  }
  const own = paths.get(parentVersion);
  for (const [id, vs] of remaining) {
    if (!vs.set.has(REPLICAS_IN_SCALE) || own === undefined) continue;
    out.set(id, { set: FieldSet.of(own), apiVersion: parentVersion, applied: vs.applied, time: parent.get(id)?.time });
  }
  return encodeManagedFields(out);
}
