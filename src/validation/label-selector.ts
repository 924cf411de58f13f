/**
 * metav1.LabelSelector as kube validates and evaluates it for workloads: ValidateLabelSelector (with
 * strict label values), whether LabelSelectorAsSelector would accept it, and whether it matches a
 * label set (a missing selector matches nothing; an empty one matches everything). Also the JSON kube
 * prints for a selector inside a field error.
 */
import type { StatusCause } from '../api/errors.js';
import { forbiddenField, goJson, invalidField, requiredField } from './field-errors.js';
import { validateLabels } from './object-meta.js';
import { isLabelKey, isLabelValue } from './string-formats.js';
import { asArray, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects, sortedStringMap, stringEntries } from './value-access.js';

const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/** ValidateLabelSelector at `field` (nothing to check for a missing selector). */
export function validateLabelSelector(selector: unknown, field: string): StatusCause[] {
  const s = objectOrUndefined(selector);
  if (s === undefined) return [];
  const causes = validateLabels(s.matchLabels, `${field}.matchLabels`);
  objects(s.matchExpressions).forEach((e, i) => {
    const at = `${field}.matchExpressions[${i}]`;
    const operator = asString(e.operator);
    const values = asArray(e.values);
    if (operator === 'In' || operator === 'NotIn') {
      if (values.length === 0) causes.push(requiredField(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (operator === 'Exists' || operator === 'DoesNotExist') {
      if (values.length > 0) causes.push(forbiddenField(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      causes.push(invalidField(`${at}.operator`, operator, 'not a valid selector operator'));
    }
    const key = asString(e.key);
    causes.push(...isLabelKey(key).map((msg) => invalidField(`${at}.key`, key, msg)));
    values.forEach((v, vi) => {
      const value = asString(v);
      causes.push(...isLabelValue(value).map((msg) => invalidField(`${at}.values[${vi}]`, value, msg)));
    });
  });
  return causes;
}

/** Whether metav1.LabelSelectorAsSelector accepts the selector (a missing selector is accepted). */
export function selectorConverts(selector: unknown): boolean {
  const s = objectOrUndefined(selector);
  if (s === undefined) return true;
  for (const [k, v] of stringEntries(s.matchLabels)) if (isLabelKey(k).length > 0 || isLabelValue(v).length > 0) return false;
  for (const e of objects(s.matchExpressions)) {
    const operator = asString(e.operator);
    const values = asArray(e.values).map(asString);
    if (!OPERATORS.includes(operator) || isLabelKey(asString(e.key)).length > 0) return false;
    if ((operator === 'In' || operator === 'NotIn') && values.length === 0) return false;
    if ((operator === 'Exists' || operator === 'DoesNotExist') && values.length > 0) return false;
    if (values.some((v) => isLabelValue(v).length > 0)) return false;
  }
  return true;
}

/** Whether a selector selects everything (present, with no labels and no expressions). */
export function selectsEverything(selector: unknown): boolean {
  const s = objectOrUndefined(selector);
  return s !== undefined && stringEntries(s.matchLabels).length === 0 && asArray(s.matchExpressions).length === 0;
}

/** Whether the selector matches the labels (a missing selector matches nothing). */
export function selectorMatches(selector: unknown, labelsValue: unknown): boolean {
  const s = objectOrUndefined(selector);
  if (s === undefined) return false;
  const labels = new Map(stringEntries(labelsValue));
  for (const [k, v] of stringEntries(s.matchLabels)) if (labels.get(k) !== v) return false;
  for (const e of objects(s.matchExpressions)) {
    const key = asString(e.key);
    const values = asArray(e.values).map(asString);
    const has = labels.has(key);
    const value = labels.get(key) ?? '';
    switch (asString(e.operator)) {
      case 'In':
        if (!has || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(value)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** A selector as kube prints it in a field error: Go's JSON of metav1.LabelSelector. */
export function selectorValue(selector: unknown): ReturnType<typeof goJson> {
  const s = objectOrUndefined(selector);
  if (s === undefined) return goJson(null);
  const out: Obj = {};
  const matchLabels = sortedStringMap(s.matchLabels);
  if (matchLabels !== null && Object.keys(matchLabels).length > 0) out.matchLabels = matchLabels;
  const expressions = objects(s.matchExpressions).map((e) => {
    const x: Obj = { key: asString(e.key), operator: asString(e.operator) };
    const values = asArray(e.values).map(asString);
    if (values.length > 0) x.values = values;
    return x;
  });
  if (expressions.length > 0) out.matchExpressions = expressions;
  return goJson(out);
}

/** A label map as kube prints it in a field error (null when absent). */
export function labelsValue(labels: unknown): ReturnType<typeof goJson> {
  return goJson(sortedStringMap(labels));
}
