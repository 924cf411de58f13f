/**
 * kube-apiserver 1.36's PodDisruptionBudget (policy/v1) validation beyond metadata, checked against
 * test/golden/validation/: at most one of minAvailable and maxUnavailable, each a non-negative int or a
 * percent of at most 100%, a valid label selector (strict label values) and a known unhealthy pod
 * eviction policy. Create and update run the same checks: every spec field may change.
 * Status writes (policy/v1) check the conditions and that the counts are not negative.
 * Not checked: kube lets an update keep invalid selector label values the stored object already had
 * (Capstan never stores such an object, so the case cannot arise).
 */
import type { StatusCause } from '../api/errors.js';
import { validateConditions } from './conditions.js';
import { goJson, invalidField, notSupportedField } from './field-errors.js';
import { selectorValue, validateLabelSelector } from './label-selector.js';
import { nonNegative } from './value-formats.js';
import { asNumber, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { isSet } from './value-access.js';
import { notMoreThan100Percent, positiveIntOrPercent } from './workloads.js';

const EVICTION_POLICIES = ['AlwaysAllow', 'IfHealthyBudget'];

/** An optional int-or-string as Go's JSON writes the internal *intstr.IntOrString (null when unset). */
function optionalIntOrString(v: unknown): number | string | null {
  return typeof v === 'number' || typeof v === 'string' ? v : null;
}

/** The internal PodDisruptionBudgetSpec as Go's JSON prints it (no JSON tags: Go field names). */
function specValue(spec: Obj): ReturnType<typeof goJson> {
  const selector = objectOrUndefined(spec.selector) === undefined ? null : (JSON.parse(selectorValue(spec.selector).goSyntax) as unknown);
  return goJson({
    MinAvailable: optionalIntOrString(spec.minAvailable),
    Selector: selector,
    MaxUnavailable: optionalIntOrString(spec.maxUnavailable),
    UnhealthyPodEvictionPolicy: typeof spec.unhealthyPodEvictionPolicy === 'string' ? spec.unhealthyPodEvictionPolicy : null,
  });
}

/** ValidatePodDisruptionBudget: the spec checks, on create and update alike. */
export function validatePodDisruptionBudget(pdb: Obj): StatusCause[] {
  const spec = asObject(pdb.spec);
  const causes: StatusCause[] = [];
  if (isSet(spec.minAvailable) && isSet(spec.maxUnavailable)) {
    causes.push(invalidField('spec', specValue(spec), 'minAvailable and maxUnavailable cannot be both set'));
  }
  for (const key of ['minAvailable', 'maxUnavailable']) {
    if (!isSet(spec[key])) continue;
    causes.push(...positiveIntOrPercent(spec[key], `spec.${key}`), ...notMoreThan100Percent(spec[key], `spec.${key}`));
  }
  causes.push(...validateLabelSelector(spec.selector, 'spec.selector'));
  if (typeof spec.unhealthyPodEvictionPolicy === 'string' && !EVICTION_POLICIES.includes(spec.unhealthyPodEvictionPolicy)) {
    causes.push(notSupportedField('spec.unhealthyPodEvictionPolicy', asString(spec.unhealthyPodEvictionPolicy), EVICTION_POLICIES));
  }
  return causes;
}

/** ValidatePodDisruptionBudgetStatusUpdate for policy/v1: valid conditions, counts not negative. */
export function validatePodDisruptionBudgetStatus(pdb: Obj): StatusCause[] {
  const status = asObject(pdb.status);
  const causes = validateConditions(status.conditions, 'status.conditions');
  for (const key of ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods']) {
    causes.push(...nonNegative(`status.${key}`, asNumber(status[key])));
  }
  return causes;
}
