import { isObject, metadataOf, type Obj } from '../../api/object-util.js';
import { CLEANUP_FINALIZER } from '../../crd/crd-model.js';
import { setStatusCondition } from '../../crd/crd-status.js';
import type { KindStrategy } from '../kind-strategy.js';
import { validateCustomResourceDefinition } from '../../crd/crd-validation.js';
import { validateCrdValidationRules } from '../../crd/crd-validation-rules-check.js';

/**
 * The written contract of CustomResourceDefinitions, after kube's apiextensions registry strategy:
 * v1 defaults (singular, listKind, conversion None), a status that starts with the storage version as
 * the only stored version, an update that adds a new storage version to the stored ones, and the
 * static validation of validation/crd.ts.
 */

function defaultCrd(obj: Obj): void {
  const spec = isObject(obj.spec) ? obj.spec : undefined;
  if (spec === undefined) return;
  const names = isObject(spec.names) ? spec.names : undefined;
  if (names !== undefined && typeof names.kind === 'string' && names.kind !== '') {
    if (typeof names.singular !== 'string' || names.singular === '') names.singular = names.kind.toLowerCase();
    if (typeof names.listKind !== 'string' || names.listKind === '') names.listKind = `${names.kind}List`;
  }
  if (!isObject(spec.conversion)) spec.conversion = { strategy: 'None' };
  else if (spec.conversion.strategy === undefined) spec.conversion.strategy = 'None';
}

/** The first `storage: true` version's name, if any (kube's GetCRDStorageVersion). */
function firstStorageVersion(obj: Obj): string | undefined {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const versions = Array.isArray(spec.versions) ? spec.versions : [];
  for (const v of versions) if (isObject(v) && v.storage === true && typeof v.name === 'string') return v.name;
  return undefined;
}

/** The KindStrategy of apiextensions.k8s.io customresourcedefinitions. */
export const customResourceDefinitions: KindStrategy = {
  defaults: (obj) => defaultCrd(obj),
  tracksGeneration: true,
  createStatus: (obj) => {
    const storage = firstStorageVersion(obj);
    return { acceptedNames: { plural: '', kind: '' }, storedVersions: storage === undefined ? null : [storage] };
  },
  prepareForUpdate: (next) => {
    // The main resource keeps the stored status; a new storage version joins the stored ones.
    const storage = firstStorageVersion(next);
    if (storage === undefined || !isObject(next.status)) return;
    const stored: unknown[] = Array.isArray(next.status.storedVersions) ? (next.status.storedVersions as unknown[]) : [];
    if (!stored.includes(storage)) next.status = { ...next.status, storedVersions: [...stored, storage] };
  },
  // kube's CRD REST Delete: the first DELETE marks the CRD, adds the cleanup finalizer the finalizer
  // controller (crd-registrar.ts) removes once every custom resource is gone, and says so.
  markTerminating: (crd) => {
    const meta = metadataOf(crd);
    const finalizers: unknown[] = Array.isArray(meta.finalizers) ? (meta.finalizers as unknown[]) : [];
    if (!finalizers.includes(CLEANUP_FINALIZER)) meta.finalizers = [...finalizers, CLEANUP_FINALIZER];
    setStatusCondition(crd, {
      type: 'Terminating',
      status: 'True',
      reason: 'InstanceDeletionPending',
      message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
    });
  },
  returnsDeletedObject: true,
  validate: (obj, old, subresource) => {
    if (subresource !== '' && subresource !== 'status') return [];
    // The schema rules hold on create and on spec updates of CRDs that met them (kube ratchets
    // each rule on update: a CRD stored before the rule existed may keep its schema).
    const checkSchemas = subresource === '' && (old === undefined || validateCustomResourceDefinition(old).length === 0);
    return [...validateCustomResourceDefinition(obj, checkSchemas), ...validateCrdValidationRules(obj)];
  },
};
