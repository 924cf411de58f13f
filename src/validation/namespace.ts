/**
 * kube-apiserver 1.36's Namespace validation beyond metadata (ValidateNamespace), checked against
 * test/golden/validation/: each `spec.finalizers` entry is a qualified name, and one without a '/'
 * must be a standard finalizer ("kubernetes", "orphan", "foregroundDeletion"). An update cannot change
 * spec.finalizers (the strategy keeps the stored ones, so they are valid), nor status; the finalize
 * subresource, which does change them, checks the same rules and names each entry by its index.
 * Status writes check the phase against deletion: Active unless deletionTimestamp is set, then
 * Terminating (an empty phase reads as Active, kube's default).
 */
import type { StatusCause } from '../api/errors.js';
import { invalidField } from './field-errors.js';
import { isLabelKey } from './string-formats.js';
import { asArray, asObject, asString, type Obj } from '../api/values.js';

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** validateFinalizerName for one spec finalizer, reported at `field`. */
function finalizerCauses(name: string, field: string): StatusCause[] {
  const causes = isLabelKey(name).map((msg) => invalidField(field, name, msg));
  if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
    causes.push(invalidField(field, name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return causes;
}

/**
 * ValidateNamespace's spec checks on create and update (kube names the list, not the entry), or
 * ValidateNamespaceFinalizeUpdate's for a write to the finalize subresource (each entry by index).
 */
export function validateNamespace(ns: Obj, subresource = ''): StatusCause[] {
  const finalizers = asArray(asObject(ns.spec).finalizers).map(asString);
  if (subresource === 'finalize') return finalizers.flatMap((f, i) => finalizerCauses(f, `spec.finalizers[${i}]`));
  return finalizers.flatMap((f) => finalizerCauses(f, 'spec.finalizers'));
}

/** ValidateNamespaceStatusUpdate's phase rule (kube names the field `status.Phase`). */
export function validateNamespaceStatus(ns: Obj): StatusCause[] {
  const phase = asString(asObject(ns.status).phase) || 'Active';
  if (asString(asObject(ns.metadata).deletionTimestamp) === '') {
    return phase === 'Active' ? [] : [invalidField('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty")];
  }
  return phase === 'Terminating' ? [] : [invalidField('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
}
