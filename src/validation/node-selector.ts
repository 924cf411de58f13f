/**
 * kube 1.36's ValidateNodeSelector (a PersistentVolume's required node affinity): at least one term;
 * each match expression with a known operator, the values that operator needs, a qualified-name key
 * and label values; each match field on `metadata.name` with In or NotIn and one valid node name.
 * Also the Go JSON of a VolumeNodeAffinity as kube prints it in an immutability error (internal
 * structs have no JSON tags, so Go's field names appear).
 */
import type { StatusCause } from '../api/errors.js';
import { forbiddenField, invalidField, requiredField } from './field-errors.js';
import { isDNS1123Subdomain, isLabelKey, isLabelValue } from './string-formats.js';
import { list, obj, objOrUndefined, objects, str, type Obj } from './value-access.js';

function expressionCauses(e: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const operator = str(e.operator);
  const values = list(e.values).map(str);
  if (operator === 'In' || operator === 'NotIn') {
    if (values.length === 0) causes.push(requiredField(`${at}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
  } else if (operator === 'Exists' || operator === 'DoesNotExist') {
    if (values.length > 0) causes.push(forbiddenField(`${at}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
  } else if (operator === 'Gt' || operator === 'Lt') {
    if (values.length !== 1) causes.push(requiredField(`${at}.values`, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
  } else {
    causes.push(invalidField(`${at}.operator`, operator, 'not a valid selector operator'));
  }
  const key = str(e.key);
  causes.push(...isLabelKey(key).map((m) => invalidField(`${at}.key`, key, m)));
  values.forEach((v, i) => causes.push(...isLabelValue(v).map((m) => invalidField(`${at}.values[${i}]`, v, m))));
  return causes;
}

function fieldCauses(f: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const operator = str(f.operator);
  const values = list(f.values).map(str);
  if (operator === 'In' || operator === 'NotIn') {
    if (values.length !== 1) causes.push(requiredField(`${at}.values`, "must be only one value when `operator` is 'In' or 'NotIn' for node field selector"));
  } else {
    causes.push(invalidField(`${at}.operator`, operator, 'not a valid selector operator'));
  }
  const key = str(f.key);
  if (key !== 'metadata.name') causes.push(invalidField(`${at}.key`, key, 'not a valid field selector key'));
  else values.forEach((v, i) => causes.push(...isDNS1123Subdomain(v).map((m) => invalidField(`${at}.values[${i}]`, v, m))));
  return causes;
}

/** ValidateNodeSelector at `path` (label values checked strictly). */
export function validateNodeSelector(selector: Obj, path: string): StatusCause[] {
  const terms = objects(selector.nodeSelectorTerms);
  if (terms.length === 0) return [requiredField(`${path}.nodeSelectorTerms`, 'must have at least one node selector term')];
  return terms.flatMap((term, i) => {
    const at = `${path}.nodeSelectorTerms[${i}]`;
    return [
      ...objects(term.matchExpressions).flatMap((e, j) => expressionCauses(e, `${at}.matchExpressions[${j}]`)),
      ...objects(term.matchFields).flatMap((f, j) => fieldCauses(f, `${at}.matchFields[${j}]`)),
    ];
  });
}

/** A list as Go marshals a decoded slice: null when absent. */
function goSlice<T>(v: unknown, each: (x: unknown) => T): T[] | null {
  return Array.isArray(v) ? v.map(each) : null;
}

function goRequirement(v: unknown): Obj {
  const r = obj(v);
  return { Key: str(r.key), Operator: str(r.operator), Values: goSlice(r.values, str) };
}

/** The Go JSON of an internal core.VolumeNodeAffinity (null when absent). */
export function goVolumeNodeAffinity(v: unknown): unknown {
  const affinity = objOrUndefined(v);
  if (affinity === undefined) return null;
  const required = objOrUndefined(affinity.required);
  return {
    Required:
      required === undefined
        ? null
        : {
            NodeSelectorTerms: goSlice(required.nodeSelectorTerms, (t) => ({
              MatchExpressions: goSlice(obj(t).matchExpressions, goRequirement),
              MatchFields: goSlice(obj(t).matchFields, goRequirement),
            })),
          },
  };
}
