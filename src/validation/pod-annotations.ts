/**
 * kube 1.36's checks of the annotations that mean something to a Pod or pod template
 * (ValidatePodSpecificAnnotations): a mirror pod names its node, `controller.kubernetes.io/pod-deletion-cost`
 * is a 32-bit integer written without a plus sign or leading zeros (an update may keep an invalid one),
 * and the seccomp and AppArmor annotations (./security-profile-annotations.ts). On a Pod's update
 * (ValidatePodSpecificAnnotationUpdates) AppArmor and mirror-pod annotations may not be added, changed
 * or removed, and kube then runs the checks a second time, so each of their causes is listed twice.
 * Not checked: the alpha `scheduler.alpha.kubernetes.io/tolerations` annotation.
 */
import type { StatusCause } from '../api/errors.js';
import { forbiddenField, invalidField } from './field-errors.js';
import { validateSecurityProfileAnnotations } from './security-profile-annotations.js';
import { asObject, asString, type Obj } from '../api/values.js';
import { stringEntries } from './value-access.js';

const MIRROR_POD_KEY = 'kubernetes.io/config.mirror';
const DELETION_COST_KEY = 'controller.kubernetes.io/pod-deletion-cost';
const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** GetDeletionCostFromPodAnnotations succeeds: absent, or an int32 without '+' or leading zeros. */
function deletionCostValid(annotations: unknown): boolean {
  const value = asObject(annotations)[DELETION_COST_KEY];
  if (typeof value !== 'string') return true;
  const firstDigitOk = value.startsWith('-') || value === '0' || /^[1-9]/.test(value);
  if (!firstDigitOk || !/^-?[0-9]+$/.test(value)) return false;
  const n = Number(value);
  return n >= INT32_MIN && n <= INT32_MAX;
}

/**
 * ValidatePodSpecificAnnotations: `annotations` (at `field`) of the Pod or template whose pod spec is
 * `spec`. `allowInvalidDeletionCost` is set on an update of a Pod whose stored cost was already invalid.
 */
export function validatePodSpecificAnnotations(annotations: unknown, spec: Obj, field: string, allowInvalidDeletionCost = false): StatusCause[] {
  const causes: StatusCause[] = [];
  const map = asObject(annotations);
  const mirror = map[MIRROR_POD_KEY];
  if (typeof mirror === 'string' && asString(spec.nodeName) === '') {
    causes.push(invalidField(`${field}[${MIRROR_POD_KEY}]`, mirror, 'must set spec.nodeName if mirror pod annotation is set'));
  }
  if (!allowInvalidDeletionCost && !deletionCostValid(map)) {
    causes.push(invalidField(`${field}[${DELETION_COST_KEY}]`, asString(map[DELETION_COST_KEY]), 'must be a 32bit integer'));
  }
  causes.push(...validateSecurityProfileAnnotations(annotations, spec, field));
  return causes;
}

function isGuarded(key: string): boolean {
  return key.startsWith(APPARMOR_PREFIX) || key === MIRROR_POD_KEY;
}

function guardedName(key: string): string {
  return key === MIRROR_POD_KEY ? 'mirror pod annotation' : 'AppArmor annotations';
}

/**
 * ValidatePodSpecificAnnotationUpdates: the annotation rules of a Pod's update (`next` replacing
 * `old`), the new annotations checked as on create; both pass kube's pod-specific checks once before.
 */
export function validatePodAnnotationUpdates(next: Obj, old: Obj, field: string): StatusCause[] {
  const nextAnnotations = new Map(stringEntries(asObject(next.metadata).annotations));
  const oldAnnotations = new Map(stringEntries(asObject(old.metadata).annotations));
  const causes: StatusCause[] = [];
  for (const [key, value] of oldAnnotations) {
    if (nextAnnotations.get(key) === value || !isGuarded(key)) continue;
    causes.push(forbiddenField(`${field}[${key}]`, `may not remove or update ${guardedName(key)}`));
  }
  for (const key of nextAnnotations.keys()) {
    if (oldAnnotations.has(key) || !isGuarded(key)) continue;
    causes.push(forbiddenField(`${field}[${key}]`, `may not add ${guardedName(key)}`));
  }
  const allowInvalidCost = !deletionCostValid(asObject(old.metadata).annotations);
  causes.push(...validatePodSpecificAnnotations(asObject(next.metadata).annotations, asObject(next.spec), field, allowInvalidCost));
  return causes;
}

/** Whether a stored Pod's deletion cost annotation is invalid (an update may then keep it). */
export function hasInvalidDeletionCost(pod: Obj): boolean {
  return !deletionCostValid(asObject(pod.metadata).annotations);
}
