/**
 * kube-apiserver 1.36's Namespace validation beyond metadata (ValidateNamespace), checked against
 * test/golden/validation/: each `spec.finalizers` entry is a qualified name, and one without a '/'
 * must be a standard finalizer ("kubernetes", "orphan", "foregroundDeletion"). An update cannot change
 * spec.finalizers (the strategy keeps the stored ones, so they are valid), nor status. Not checked
 * yet: the finalize and status subresources' own validation.
 */
import type { StatusCause } from '../api/errors.js';
import { invalidField } from './field-errors.js';
import { isLabelKey } from './string-formats.js';
import { list, obj, str, type Obj } from './value-access.js';

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** validateFinalizerName for one spec finalizer (kube names the list, not the entry). */
function finalizerCauses(name: string): StatusCause[] {
  const causes = isLabelKey(name).map((msg) => invalidField('spec.finalizers', name, msg));
  if (!name.includes('/') && !STANDARD_FINALIZERS.has(name)) {
    causes.push(invalidField('spec.finalizers', name, 'name is neither a standard finalizer name nor is it fully qualified'));
  }
  return causes;
}

/** ValidateNamespace's spec checks, on create and update alike. */
export function validateNamespace(ns: Obj): StatusCause[] {
  return list(obj(ns.spec).finalizers).map(str).flatMap(finalizerCauses);
}
