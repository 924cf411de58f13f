import { isObject, jsonEqual } from '../../api/object-util.js';
import { validatePodResize } from '../../validation/pod-resize.js';
import { validatePod } from '../../validation/pod-spec.js';
import { validatePodTemplate } from '../../validation/workloads.js';
import { defaultPodTemplate } from '../defaults.js';
import type { KindStrategy } from '../kind-strategy.js';
import { defaultPod } from '../pod-defaults.js';
import { preparePodForCreate } from '../pod-prepare.js';
import { podQosClass } from '../../validation/pod-qos.js';
import { canonicalizePodStatus } from '../pod-status.js';
import { podCreateWarnings, podStatusWarnings, podTemplateWarnings } from '../pod-warnings.js';
import { podTemplatePrinter } from '../printers/core.js';
import { podPrinter } from '../printers/pod.js';
import { podFieldSelectors } from '../field-selectors.js';
import { dropNonResizeUpdates } from '../pod-resize.js';

/**
 * Pods: defaults in pod-defaults.ts, validation in validation/pod-spec.ts (containers, volumes,
 * affinity, ... in the modules it names; the spec is immutable but for kube's mutable fields),
 * admission in src/admission/ (service account, priority, toleration seconds), binding and eviction
 * in the subresource actions, table columns in codec/printers/pod.ts, field selectors in
 * selectors/field-selector-types.ts.
 */

export const pods: KindStrategy = {
  filterSubresourceWrite: { resize: dropNonResizeUpdates },
  statusResetFields: [
    ['metadata', 'deletionTimestamp'],
    ['metadata', 'ownerReferences'],
  ],
  printer: podPrinter,
  fieldSelectors: podFieldSelectors,
  watchIndexField: 'spec.nodeName',
  defaults: defaultPod,
  // A resize (pods/NAME/resize) changes only resources, with its own rules.
  validate: (pod, old, subresource) => (subresource === 'resize' && old !== undefined ? validatePodResize(pod, old) : validatePod(pod, old)),
  // A new pod is Pending with its QoS class, whatever status was sent.
  createStatus: (pod) => ({ phase: 'Pending', qosClass: podQosClass(pod) }),
  // Scheduling gates, matchLabelKeys merged into selectors, AppArmor annotations into fields.
  prepareForCreate: preparePodForCreate,
  // kube warns about a pod's spec on create only (updates are frequent and mostly not by people).
  warnings: (pod, old) => (old === undefined ? podCreateWarnings(pod) : []),
  statusWarnings: podStatusWarnings,
  // As kube's pod status strategy: the request's metadata but its owner references.
  statusUpdatesMetadata: 'all-but-owner-references',
  // podIPs from podIP (v1 conversion), null condition times (Go's zero times).
  canonicalizeStatusWrite: canonicalizePodStatus,
  // A pod bound to a node and not finished is deleted gracefully: its kubelet confirms.
  gracefulDeleteSeconds: (pod, requested) => {
    const spec = isObject(pod.spec) ? pod.spec : {};
    const status = isObject(pod.status) ? pod.status : {};
    if (typeof spec.nodeName !== 'string' || spec.nodeName === '' || status.phase === 'Succeeded' || status.phase === 'Failed') return 0;
    if (requested !== undefined) return Math.max(0, requested);
    return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
  },
  returnsDeletedObject: true,
};

export const podTemplates: KindStrategy = {
  podTemplatePath: ['template'],
  printer: podTemplatePrinter,
  defaults: defaultPodTemplate,
  validate: (obj) => validatePodTemplate(obj),
  // On update only when the template changed (kube: when the generation it bumps for that changed).
  warnings: (obj, old) => (old === undefined || !jsonEqual(obj.template, old.template) ? podTemplateWarnings('template', obj.template) : []),
};

/** This file's kinds by `group/resource` (the core group is empty). */
export const PODS_KINDS: Readonly<Record<string, KindStrategy>> = {
  '/pods': pods,
  '/podtemplates': podTemplates,
};
