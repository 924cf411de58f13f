import { isObject, type Obj } from '../api/object-util.js';
import { validateAppArmorProfile } from '../validation/pod-security-context.js';
import { objectAt, objectsAt, unset } from '../api/field-defaults.js';
import { appArmorSkewWarnings } from './pod-warnings.js';
import { stringElements } from '../api/values.js';

/**
 * What kube-apiserver 1.36's pod strategy does to a Pod on create beyond defaulting (PrepareForCreate
 * in pkg/registry/core/pod/strategy.go), after the status is reset: a gated pod gets its
 * `PodScheduled=False (SchedulingGated)` condition; each matchLabelKeys / mismatchLabelKeys key of a
 * pod (anti-)affinity term and each matchLabelKeys key of a topology spread constraint that the pod
 * has a label for is merged into that term's label selector (`key In (value)` / `key NotIn (value)`);
 * and a deprecated `container.apparmor.security.beta.kubernetes.io/<name>` annotation is copied to a
 * container's `appArmorProfile` when the container has none, the annotation is valid and it differs
 * from the pod-level profile (not for Windows pods). Updates change none of these.
 */

const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const LOCALHOST_PREFIX = 'localhost/';

function stringMap(v: unknown): Record<string, string> {
  if (!isObject(v)) return {};
  return Object.fromEntries(Object.entries(v).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** applyLabelKeysToLabelSelector: one requirement per key the pod has a label for. */
function mergeKeys(selector: Obj, keys: string[], operator: 'In' | 'NotIn', labels: Record<string, string>): void {
  for (const key of keys) {
    const value = labels[key];
    if (value === undefined) continue;
    const expressions = Array.isArray(selector.matchExpressions) ? (selector.matchExpressions as unknown[]) : [];
    expressions.push({ key, operator, values: [value] });
    selector.matchExpressions = expressions;
  }
}

/** A term or constraint without keys, or without a selector (which matches nothing), is left alone. */
function mergeIntoSelector(term: Obj, labels: Record<string, string>, withMismatch: boolean): void {
  const match = stringElements(term.matchLabelKeys);
  const mismatch = withMismatch ? stringElements(term.mismatchLabelKeys) : [];
  const selector = objectAt(term, 'labelSelector');
  if ((match.length === 0 && mismatch.length === 0) || selector === undefined) return;
  mergeKeys(selector, match, 'In', labels);
  mergeKeys(selector, mismatch, 'NotIn', labels);
}

/** mutatePodAffinity and mutateTopologySpreadConstraints. */
function mergeMatchLabelKeys(spec: Obj, labels: Record<string, string>): void {
  const affinity = objectAt(spec, 'affinity');
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = affinity === undefined ? undefined : objectAt(affinity, kind);
    if (a === undefined) continue;
    for (const weighted of objectsAt(a, 'preferredDuringSchedulingIgnoredDuringExecution')) {
      const term = objectAt(weighted, 'podAffinityTerm');
      if (term !== undefined) mergeIntoSelector(term, labels, true);
    }
    for (const term of objectsAt(a, 'requiredDuringSchedulingIgnoredDuringExecution')) mergeIntoSelector(term, labels, true);
  }
  for (const constraint of objectsAt(spec, 'topologySpreadConstraints')) mergeIntoSelector(constraint, labels, false);
}

/** ApparmorFieldForAnnotation: the profile an annotation value names, or undefined. */
function appArmorFieldFor(annotation: string): Obj | undefined {
  if (annotation === 'unconfined') return { type: 'Unconfined' };
  if (annotation === 'runtime/default') return { type: 'RuntimeDefault' };
  if (annotation.startsWith(LOCALHOST_PREFIX) && annotation.length > LOCALHOST_PREFIX.length) {
    return { type: 'Localhost', localhostProfile: annotation.slice(LOCALHOST_PREFIX.length) };
  }
  return undefined;
}

function sameProfile(a: Obj, b: Obj | undefined): boolean {
  return b !== undefined && a.type === b.type && (a.localhostProfile ?? null) === (b.localhostProfile ?? null);
}

/** applyAppArmorVersionSkew: annotations copied to the containers' empty appArmorProfile fields. */
function syncAppArmorAnnotations(spec: Obj, annotations: Record<string, string>): void {
  if (objectAt(spec, 'os')?.name === 'windows') return;
  const podProfile = objectAt(objectAt(spec, 'securityContext') ?? {}, 'appArmorProfile');
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    for (const container of objectsAt(spec, key)) {
      const annotation = annotations[`${APPARMOR_PREFIX}${typeof container.name === 'string' ? container.name : ''}`];
      const sc = objectAt(container, 'securityContext');
      if (annotation === undefined || (sc !== undefined && !unset(sc.appArmorProfile))) continue;
      const profile = appArmorFieldFor(annotation);
      if (profile === undefined || validateAppArmorProfile(profile, '').length > 0 || sameProfile(profile, podProfile)) continue;
      container.securityContext = { ...(sc ?? {}), appArmorProfile: profile };
    }
  }
}

/** RFC 3339 at second precision, as metav1.Time encodes. */
function nowSeconds(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** applySchedulingGatedCondition: status is {phase, qosClass} here, freshly reset by the create. */
function markSchedulingGated(pod: Obj, spec: Obj): void {
  if (objectsAt(spec, 'schedulingGates').length === 0) return;
  const status = objectAt(pod, 'status') ?? {};
  const conditions = objectsAt(status, 'conditions');
  if (conditions.some((c) => c.type === 'PodScheduled')) return;
  const condition = {
    type: 'PodScheduled',
    status: 'False',
    lastProbeTime: null,
    lastTransitionTime: nowSeconds(),
    reason: 'SchedulingGated',
    message: 'Scheduling is blocked due to non-empty scheduling gates',
  };
  const { phase, qosClass, ...rest } = status;
  pod.status = { phase, ...rest, conditions: [...conditions, condition], qosClass };
}

/**
 * The pod strategy's create-only changes (see above), applied to a defaulted Pod whose status was
 * reset; returns kube's warnings about the AppArmor annotations it syncs.
 */
export function preparePodForCreate(pod: Obj): string[] {
  const spec = objectAt(pod, 'spec');
  if (spec === undefined) return [];
  const warnings = appArmorSkewWarnings(pod, (profile) => validateAppArmorProfile(profile, '').length === 0);
  const meta = objectAt(pod, 'metadata') ?? {};
  markSchedulingGated(pod, spec);
  mergeMatchLabelKeys(spec, stringMap(meta.labels));
  syncAppArmorAnnotations(spec, stringMap(meta.annotations));
  return warnings;
}
