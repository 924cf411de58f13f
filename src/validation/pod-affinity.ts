/**
 * kube 1.36's validation of a pod spec's `affinity.podAffinity` and `affinity.podAntiAffinity`
 * (validatePodAffinity, validatePodAntiAffinity): each term's label and namespace selectors, its
 * namespaces (names), and a non-empty topology key that is a label key; weights of preferred terms
 * in 1-100; matchLabelKeys and mismatchLabelKeys as ./match-label-keys.ts checks them.
 */
import type { StatusCause } from '../api/errors.js';
import { invalidField, requiredField } from './field-errors.js';
import { validateLabelSelector } from './label-selector.js';
import { validateMatchLabelKeys } from './match-label-keys.js';
import { isDNS1123Label, isLabelKey } from './string-formats.js';
import { asArray, asNumber, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

function termCauses(term: Obj, at: string): StatusCause[] {
  const causes = [
    ...validateLabelSelector(term.labelSelector, `${at}.labelSelector`),
    ...validateLabelSelector(term.namespaceSelector, `${at}.namespaceSelector`),
  ];
  for (const ns of asArray(term.namespaces).map(asString)) causes.push(...isDNS1123Label(ns).map((msg) => invalidField(`${at}.namespace`, ns, msg)));
  causes.push(...validateMatchLabelKeys(at, term.matchLabelKeys, term.mismatchLabelKeys, term.labelSelector));
  const key = asString(term.topologyKey);
  if (key === '') causes.push(requiredField(`${at}.topologyKey`, 'can not be empty'));
  causes.push(...isLabelKey(key).map((msg) => invalidField(`${at}.topologyKey`, key, msg)));
  return causes;
}

function affinityCauses(affinity: Obj, field: string): StatusCause[] {
  const required = `${field}.requiredDuringSchedulingIgnoredDuringExecution`;
  const preferred = `${field}.preferredDuringSchedulingIgnoredDuringExecution`;
  return [
    ...objects(affinity.requiredDuringSchedulingIgnoredDuringExecution).flatMap((term, i) => termCauses(term, `${required}[${i}]`)),
    ...objects(affinity.preferredDuringSchedulingIgnoredDuringExecution).flatMap((weighted, j) => {
      const weight = asNumber(weighted.weight);
      const causes = weight <= 0 || weight > 100 ? [invalidField(`${preferred}[${j}].weight`, weight, 'must be in the range 1-100')] : [];
      return [...causes, ...termCauses(asObject(weighted.podAffinityTerm), `${preferred}[${j}].podAffinityTerm`)];
    }),
  ];
}

/** The pod (anti-)affinity parts of `affinity` at `field` (e.g. `spec.affinity`). */
export function validatePodAffinities(affinity: unknown, field: string): StatusCause[] {
  const a = objectOrUndefined(affinity);
  if (a === undefined) return [];
  const causes: StatusCause[] = [];
  const podAffinity = objectOrUndefined(a.podAffinity);
  if (podAffinity !== undefined) causes.push(...affinityCauses(podAffinity, `${field}.podAffinity`));
  const antiAffinity = objectOrUndefined(a.podAntiAffinity);
  if (antiAffinity !== undefined) causes.push(...affinityCauses(antiAffinity, `${field}.podAntiAffinity`));
  return causes;
}
