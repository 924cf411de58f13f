/**
 * kube-apiserver 1.36's LimitRange validation beyond metadata (ValidateLimitRange), checked against
 * test/golden/validation/: each item's type (standard or qualified, not repeated), its resource names
 * (container resources for Pod and Container items), no defaults on Pod items, a storage bound on
 * PersistentVolumeClaim items, and the order min <= defaultRequest <= default <= max with a
 * maxLimitRequestRatio of at least 1 and at most max/min. Quantities are not checked for sign (kube
 * does not either). Objects arrive defaulted (Container items take default from max and defaultRequest
 * from default or min), as kube validates them; create and update run the same checks.
 */
import type { StatusCause } from '../api/errors.js';
import { compareQuantities, milliValueOf, quantityOf } from '../api/quantity.js';
import { duplicateField, forbiddenField, invalidField, requiredField } from './field-errors.js';
import { isOvercommitAllowed, validateContainerResourceName, validateResourceName } from './resource-names.js';
import { isLabelKey } from './string-formats.js';
import { asObject, asString, type Obj } from '../api/values.js';
import { objects } from './value-access.js';

const STANDARD_TYPES = new Set(['Pod', 'Container', 'PersistentVolumeClaim']);
/** resource.MaxMilliValue: above it kube compares whole values instead of milli-values. */
const MAX_MILLI_VALUE = 9223372036854775807n / 1000n;

/** validateLimitRangeTypeName: a qualified name, standard when unprefixed. */
function validateTypeName(type: string, field: string): StatusCause[] {
  const qualified = isLabelKey(type).map((msg) => invalidField(field, type, msg));
  if (qualified.length > 0) return qualified;
  return !type.includes('/') && !STANDARD_TYPES.has(type) ? [invalidField(field, type, 'must be a standard limit type or fully qualified')] : [];
}

/** The quantities of one resource list, canonical, by resource name (sorted for a stable order). */
function quantities(list: unknown): Map<string, string> {
  return new Map(
    Object.keys(asObject(list))
      .sort()
      .map((k) => [k, quantityOf(asObject(list)[k], '0')]),
  );
}

/** Quantity.Value(): the whole value rounded up. */
function wholeValue(milli: bigint): bigint {
  return milli >= 0n ? (milli + 999n) / 1000n : milli / 1000n;
}

/** Go's %f of a float64 (six decimals; +Inf and NaN spelled as Go spells them). */
function goFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return v.toFixed(6);
}

/** The ratio check: the ratio may not exceed max/min (compared in milli-units when they fit). */
function ratioAboveBounds(ratio: string, min: string, max: string): string | undefined {
  const r = milliValueOf(ratio) ?? 0n;
  const lo = milliValueOf(min) ?? 0n;
  const hi = milliValueOf(max) ?? 0n;
  let ratioValue = Number(wholeValue(r));
  let minValue = wholeValue(lo);
  let maxValue = wholeValue(hi);
  if (wholeValue(r) < MAX_MILLI_VALUE && minValue < MAX_MILLI_VALUE && maxValue < MAX_MILLI_VALUE) {
    ratioValue = Number(r) / 1000;
    minValue = lo;
    maxValue = hi;
  }
  const limit = Number(maxValue) / Number(minValue);
  return ratioValue > limit ? goFloat(limit) : undefined;
}

/** The checks of one limit item at `field`; `seenTypes` holds the types of the items before it. */
function validateItem(item: Obj, field: string, seenTypes: Set<string>): StatusCause[] {
  const type = asString(item.type);
  const causes = validateTypeName(type, `${field}.type`);
  if (seenTypes.has(type)) causes.push(duplicateField(`${field}.type`, type));
  seenTypes.add(type);
  const nameCheck = type === 'Pod' || type === 'Container' ? validateContainerResourceName : validateResourceName;
  const keys = new Set<string>();
  const lists: Record<string, Map<string, string>> = {};
  const take = (listName: string): void => {
    const list = quantities(item[listName]);
    lists[listName] = list;
    for (const name of list.keys()) {
      causes.push(...nameCheck(name, `${field}.${listName}[${name}]`));
      keys.add(name);
    }
  };
  take('max');
  take('min');
  if (type === 'Pod') {
    lists.default = new Map();
    lists.defaultRequest = new Map();
    for (const listName of ['default', 'defaultRequest']) {
      if (Object.keys(asObject(item[listName])).length > 0) causes.push(forbiddenField(`${field}.${listName}`, "may not be specified when `type` is 'Pod'"));
    }
  } else {
    take('default');
    take('defaultRequest');
  }
  const min = lists.min ?? new Map<string, string>();
  const max = lists.max ?? new Map<string, string>();
  if (type === 'PersistentVolumeClaim' && !min.has('storage') && !max.has('storage')) {
    causes.push(requiredField(`${field}.limits`, 'either minimum or maximum storage value is required, but neither was provided'));
  }
  take('maxLimitRequestRatio');
  const defaults = lists.default ?? new Map<string, string>();
  const requests = lists.defaultRequest ?? new Map<string, string>();
  const ratios = lists.maxLimitRequestRatio ?? new Map<string, string>();
  const greater = (a: string, b: string): boolean => compareQuantities(a, b) === 1;
  for (const k of keys) {
    const lo = min.get(k);
    const hi = max.get(k);
    const def = defaults.get(k);
    const req = requests.get(k);
    const ratio = ratios.get(k);
    if (lo !== undefined && hi !== undefined && greater(lo, hi)) {
      causes.push(invalidField(`${field}.min[${k}]`, lo, `min value ${lo} is greater than max value ${hi}`));
    }
    if (req !== undefined && lo !== undefined && greater(lo, req)) {
      causes.push(invalidField(`${field}.defaultRequest[${k}]`, req, `min value ${lo} is greater than default request value ${req}`));
    }
    if (req !== undefined && hi !== undefined && greater(req, hi)) {
      causes.push(invalidField(`${field}.defaultRequest[${k}]`, req, `default request value ${req} is greater than max value ${hi}`));
    }
    if (req !== undefined && def !== undefined && greater(req, def)) {
      causes.push(invalidField(`${field}.defaultRequest[${k}]`, req, `default request value ${req} is greater than default limit value ${def}`));
    }
    // kube prints min and max (not the default) as the bad values of these two.
    if (def !== undefined && lo !== undefined && greater(lo, def)) {
      causes.push(invalidField(`${field}.default[${k}]`, lo, `min value ${lo} is greater than default value ${def}`));
    }
    if (def !== undefined && hi !== undefined && greater(def, hi)) {
      causes.push(invalidField(`${field}.default[${k}]`, hi, `default value ${def} is greater than max value ${hi}`));
    }
    if (ratio !== undefined && compareQuantities(ratio, '1') === -1) {
      causes.push(invalidField(`${field}.maxLimitRequestRatio[${k}]`, ratio, `ratio ${ratio} is less than 1`));
    }
    if (ratio !== undefined && lo !== undefined && hi !== undefined) {
      const limit = ratioAboveBounds(ratio, lo, hi);
      if (limit !== undefined) causes.push(invalidField(`${field}.maxLimitRequestRatio[${k}]`, ratio, `ratio ${ratio} is greater than max/min = ${limit}`));
    }
    if (!isOvercommitAllowed(k) && def !== undefined && req !== undefined && compareQuantities(def, req) !== 0) {
      causes.push(invalidField(`${field}.defaultRequest[${k}]`, req, `default value ${def} must equal to defaultRequest value ${req} in ${k}`));
    }
  }
  return causes;
}

/** ValidateLimitRange (the update checks are the same). */
export function validateLimitRange(lr: Obj): StatusCause[] {
  const seenTypes = new Set<string>();
  return objects(asObject(lr.spec).limits).flatMap((item, i) => validateItem(item, `spec.limits[${i}]`, seenTypes));
}
