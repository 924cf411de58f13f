/**
 * kube 1.36's validation of a pod spec's `affinity.nodeAffinity` (validateNodeAffinity,
 * ValidateNodeSelector, ValidatePreferredSchedulingTerms and the node selector terms and requirements
 * they hold), with kube's fields and messages. A required node selector without terms is the case
 * that matters most: stored, it reads back as `nodeSelectorTerms: null`, which the Python client's
 * models refuse to deserialize, breaking every list of the resource for it.
 */
import type { StatusCause } from '../api/errors.js';
import { forbiddenField, invalidField, requiredField } from './field-errors.js';
import { isDNS1123Subdomain, isLabelKey, isLabelValue } from './string-formats.js';
import { asArray, asNumber, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

/** ValidateNodeSelectorRequirement; `strictValues` checks values as label values (required terms). */
function requirementCauses(rq: Obj, strictValues: boolean, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const operator = asString(rq.operator);
  const values = asArray(rq.values);
  if (operator === 'In' || operator === 'NotIn') {
    if (values.length === 0) causes.push(requiredField(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (operator === 'Exists' || operator === 'DoesNotExist') {
    if (values.length > 0) causes.push(forbiddenField(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  } else if (operator === 'Gt' || operator === 'Lt') {
    if (values.length !== 1) causes.push(requiredField(`${at}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
  } else {
    causes.push(invalidField(`${at}.operator`, operator, 'not a valid selector operator'));
  }
  const key = asString(rq.key);
  causes.push(...isLabelKey(key).map((msg) => invalidField(`${at}.key`, key, msg)));
  if (strictValues) {
    values.forEach((v, i) => {
      const value = asString(v);
      causes.push(...isLabelValue(value).map((msg) => invalidField(`${at}.values[${i}]`, value, msg)));
    });
  }
  return causes;
}

/** ValidateNodeFieldSelectorRequirement: only `metadata.name`, with one node name for In and NotIn. */
function fieldRequirementCauses(rq: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const operator = asString(rq.operator);
  const values = asArray(rq.values);
  if (operator === 'In' || operator === 'NotIn') {
    if (values.length !== 1) causes.push(requiredField(`${at}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else {
    causes.push(invalidField(`${at}.operator`, operator, 'not a valid selector operator'));
  }
  const key = asString(rq.key);
  if (key !== 'metadata.name') causes.push(invalidField(`${at}.key`, key, 'not a valid field selector key'));
  else {
    values.forEach((v, i) => {
      const value = asString(v);
      causes.push(...isDNS1123Subdomain(value).map((msg) => invalidField(`${at}.values[${i}]`, value, msg)));
    });
  }
  return causes;
}

/** ValidateNodeSelectorTerm. */
function termCauses(term: Obj, strictValues: boolean, at: string): StatusCause[] {
  return [
    ...objects(term.matchExpressions).flatMap((rq, j) => requirementCauses(rq, strictValues, `${at}.matchExpressions[${j}]`)),
    ...objects(term.matchFields).flatMap((rq, j) => fieldRequirementCauses(rq, `${at}.matchFields[${j}]`)),
  ];
}

/** ValidateNodeSelector at `path` (a pod's required node affinity, a PersistentVolume's): terms required, label values strict. */
export function validateNodeSelector(selector: Obj, path: string): StatusCause[] {
  const at = `${path}.nodeSelectorTerms`;
  if (asArray(selector.nodeSelectorTerms).length === 0) return [requiredField(at, 'must have at least one node selector term')];
  return objects(selector.nodeSelectorTerms).flatMap((term, i) => termCauses(term, true, `${at}[${i}]`));
}

/** validateNodeAffinity for `affinity.nodeAffinity` at `field` (nothing to check when absent). */
export function validateNodeAffinity(nodeAffinity: unknown, field: string): StatusCause[] {
  const na = objectOrUndefined(nodeAffinity);
  if (na === undefined) return [];
  const causes: StatusCause[] = [];
  const required = objectOrUndefined(na.requiredDuringSchedulingIgnoredDuringExecution);
  if (required !== undefined) causes.push(...validateNodeSelector(required, `${field}.requiredDuringSchedulingIgnoredDuringExecution`));
  objects(na.preferredDuringSchedulingIgnoredDuringExecution).forEach((term, i) => {
    const at = `${field}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    const weight = asNumber(term.weight);
    if (weight <= 0 || weight > 100) causes.push(invalidField(`${at}.weight`, weight, 'must be in the range 1-100'));
    // kube always allows invalid label values in preferred terms.
    causes.push(...termCauses(objectOrUndefined(term.preference) ?? {}, false, `${at}.preference`));
  });
  return causes;
}
