import { isObject, metadataOf, type Obj } from '../../api/object-util.js';
import { validateLimitRange } from '../../validation/limit-range.js';
import { validateNamespace, validateNamespaceStatus } from '../../validation/namespace.js';
import { validateResourceQuota, validateResourceQuotaStatus } from '../../validation/resource-quota.js';
import { defaultLimitRange, defaultResourceQuota } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';
import { namespacePrinter, resourceQuotaPrinter, serviceAccountPrinter } from '../printers/core.js';
import { namespaceFieldSelectors } from '../field-selectors.js';

/**
 * Namespaces and the namespace-scoped policy objects. A namespace's deletion (finalizer `kubernetes`,
 * content removal) is src/namespace/namespace-controller.ts; the `finalize` subresource writes only
 * `spec.finalizers`.
 */

/**
 * kube's namespace defaulting and Canonicalize: every namespace carries
 * `kubernetes.io/metadata.name=<name>`, whatever the client sent, so selectors can match by name.
 */
function setNamespaceNameLabel(ns: Obj): void {
  const meta = metadataOf(ns);
  const name = typeof meta.name === 'string' ? meta.name : '';
  if (name === '') return;
  const labels = isObject(meta.labels) ? meta.labels : {};
  labels['kubernetes.io/metadata.name'] = name;
  meta.labels = labels;
}

export const namespaces: KindStrategy = {
  // kube's SetDefaults_Namespace: the label is there before managedFields are computed, so the
  // creating (or updating) manager owns it.
  defaults: setNamespaceNameLabel,
  printer: namespacePrinter,
  fieldSelectors: namespaceFieldSelectors,
  validate: (obj, _old, sub) => (sub === 'status' ? validateNamespaceStatus(obj) : validateNamespace(obj, sub)),
  updateMetadataPasses: { objectMeta: true, objectMetaUpdate: true },
  tracksGeneration: false,
  createStatus: () => ({ phase: 'Active' }),
  // kube's namespace status strategy resets only the spec: labels, annotations, finalizers and owner
  // references of the request are kept (the e2e status test patches an annotation through /status).
  statusUpdatesMetadata: 'all',
  canonicalizeStatusWrite: setNamespaceNameLabel,
  // A new namespace gets the `kubernetes` finalizer its deletion waits on.
  prepareForCreate: (ns) => {
    setNamespaceNameLabel(ns);
    const spec = isObject(ns.spec) ? ns.spec : {};
    const finalizers = Array.isArray(spec.finalizers) ? (spec.finalizers as unknown[]) : [];
    if (!finalizers.includes('kubernetes')) spec.finalizers = [...finalizers, 'kubernetes'];
    ns.spec = spec;
  },
  // spec.finalizers changes only through /finalize.
  prepareForUpdate: (next, old) => {
    next.spec = old.spec;
    setNamespaceNameLabel(next);
  },
  // A deleted namespace stays Terminating until the namespace controller has emptied it.
  markTerminating: (ns) => {
    ns.status = { ...(isObject(ns.status) ? ns.status : {}), phase: 'Terminating' };
  },
  returnsDeletedObject: true,
  // A status update of a Terminating namespace (the controller's conditions) must not remove it
  // while its `kubernetes` finalizer, or another, waits in spec.
  heldAfterFinalizers: (ns) => isObject(ns.spec) && Array.isArray(ns.spec.finalizers) && ns.spec.finalizers.length > 0,
};

export const resourceQuotas: KindStrategy = {
  printer: resourceQuotaPrinter,
  defaults: defaultResourceQuota,
  validate: (obj, old, sub) => (sub === 'status' ? validateResourceQuotaStatus(obj) : validateResourceQuota(obj, old)),
  updateMetadataPasses: { objectMeta: false, objectMetaUpdate: true },
  tracksGeneration: false,
  statusUpdatesMetadata: 'all',
};

export const limitRanges: KindStrategy = {
  defaults: defaultLimitRange,
  validate: (obj) => validateLimitRange(obj),
  updateMetadataPasses: { objectMeta: true, objectMetaUpdate: false },
  createOnUpdate: true,
};

export const serviceAccounts: KindStrategy = { printer: serviceAccountPrinter, updateMetadataPasses: { objectMeta: true, objectMetaUpdate: true } };

/** This file's kinds by `group/resource` (the core group is empty). */
export const NAMESPACES_KINDS: Readonly<Record<string, KindStrategy>> = {
  '/namespaces': namespaces,
  '/resourcequotas': resourceQuotas,
  '/limitranges': limitRanges,
  '/serviceaccounts': serviceAccounts,
};
