/**
 * kube 1.36's validation of a pod spec's `topologySpreadConstraints` (validateTopologySpreadConstraints):
 * a positive maxSkew, a topology key, a supported whenUnsatisfiable, no two constraints with the same key
 * and action, minDomains positive and only with DoNotSchedule, the node inclusion policies and the label
 * selector, and matchLabelKeys (./match-label-keys.ts; 1.36's selector-merge rules, as its
 * MatchLabelKeysInPodTopologySpreadSelectorMerge gate is on by default).
 */
import type { StatusCause } from '../api/errors.js';
import { duplicateField, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { validateLabelSelector } from './label-selector.js';
import { validateMatchLabelKeys } from './match-label-keys.js';
import { asString, numberOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const ACTIONS = ['DoNotSchedule', 'ScheduleAnyway'];
const INCLUSION_POLICIES = ['Honor', 'Ignore'];

function positive(field: string, value: number): StatusCause[] {
  return value <= 0 ? [invalidField(field, value, 'must be greater than zero')] : [];
}

/** validateTopologySpreadConstraints: the `topologySpreadConstraints` of a pod spec at `field`. */
export function validateTopologySpreadConstraints(constraints: unknown, field: string): StatusCause[] {
  const list = objects(constraints);
  const causes: StatusCause[] = [];
  list.forEach((c, i) => {
    const at = `${field}[${i}]`;
    causes.push(...positive(`${at}.maxSkew`, numberOrUndefined(c.maxSkew) ?? 0));
    const key = asString(c.topologyKey);
    if (key === '') causes.push(requiredField(`${at}.topologyKey`, 'can not be empty'));
    const action = asString(c.whenUnsatisfiable);
    if (!ACTIONS.includes(action)) causes.push(notSupportedField(`${at}.whenUnsatisfiable`, action, ACTIONS));
    if (list.slice(i + 1).some((other) => asString(other.topologyKey) === key && asString(other.whenUnsatisfiable) === action)) {
      causes.push(duplicateField(`${at}.{topologyKey, whenUnsatisfiable}`, `{${key}, ${action}}`));
    }
    const minDomains = numberOrUndefined(c.minDomains);
    if (minDomains !== undefined) {
      causes.push(...positive(`${at}.minDomains`, minDomains));
      if (action !== 'DoNotSchedule') {
        causes.push(invalidField(`${at}.minDomains`, minDomains, `can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ${action}`));
      }
    }
    for (const policy of ['nodeAffinityPolicy', 'nodeTaintsPolicy'] as const) {
      const value = c[policy];
      if (typeof value === 'string' && !INCLUSION_POLICIES.includes(value)) causes.push(notSupportedField(`${at}.${policy}`, value, INCLUSION_POLICIES));
    }
    causes.push(...validateMatchLabelKeys(at, c.matchLabelKeys, undefined, c.labelSelector));
    causes.push(...validateLabelSelector(c.labelSelector, `${at}.labelSelector`));
  });
  return causes;
}
