/**
 * kube 1.36's ValidateMatchLabelKeysAndMismatchLabelKeys, shared by pod (anti-)affinity terms and
 * topology spread constraints: the keys are label keys, need a label selector, and may not be in both
 * lists. On a Pod's create kube first merges each key the pod has a label for into the selector (as
 * `key In (value)` or `key NotIn (value)`, pod-defaults.ts), so a matchLabelKeys key the selector
 * already used shows up twice there; kube reports that at `<term>[<index of the key>]`.
 */
import type { StatusCause } from '../api/errors.js';
import { forbiddenField, invalidField } from './field-errors.js';
import { isLabelKey } from './string-formats.js';
import { asArray, asObject, asString, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

function labelKeyCauses(keys: string[], hasSelector: boolean, field: string): StatusCause[] {
  if (keys.length === 0) return [];
  if (!hasSelector) return [forbiddenField(field, 'must not be specified when labelSelector is not set')];
  return keys.flatMap((key, i) => isLabelKey(key).map((msg) => invalidField(`${field}[${i}]`, key, msg)));
}

/** The matchLabelKeys and mismatchLabelKeys of the term or constraint at `field`. */
export function validateMatchLabelKeys(field: string, matchLabelKeys: unknown, mismatchLabelKeys: unknown, labelSelector: unknown): StatusCause[] {
  const matchKeys = asArray(matchLabelKeys).map(asString);
  const mismatchKeys = asArray(mismatchLabelKeys).map(asString);
  const selector = objectOrUndefined(labelSelector);
  const causes = [
    ...labelKeyCauses(matchKeys, selector !== undefined, `${field}.matchLabelKeys`),
    ...labelKeyCauses(mismatchKeys, selector !== undefined, `${field}.mismatchLabelKeys`),
  ];
  if (selector !== undefined) {
    const indexOfKey = new Map(matchKeys.map((key, i) => [key, i]));
    const selectorKeys = new Set(Object.keys(asObject(selector.matchLabels)));
    for (const requirement of objects(selector.matchExpressions)) {
      const key = asString(requirement.key);
      const i = indexOfKey.get(key);
      if (i !== undefined && selectorKeys.has(key)) causes.push(invalidField(`${field}[${i}]`, key, 'exists in both matchLabelKeys and labelSelector'));
      selectorKeys.add(key);
    }
  }
  const mismatchSet = new Set(mismatchKeys);
  matchKeys.forEach((key, i) => {
    if (mismatchSet.has(key)) causes.push(invalidField(`${field}.matchLabelKeys[${i}]`, key, 'exists in both matchLabelKeys and mismatchLabelKeys'));
  });
  return causes;
}
