/** One predicate for a list or watch request's labelSelector and fieldSelector. */
import { compileFieldSelector, fieldRequirementsMatch, parseFieldSelectorFor, type ObjectMatcher } from './field-selector.js';
import type { FieldRequirement, FieldSelectorSpec } from './field-selector.js';
import { compileLabelSelector, type Labels } from './label-selector.js';

/** An object's labels as selectors read them (string values only). */
export function labelsOf(obj: Record<string, unknown>): Labels {
  const meta = obj['metadata'];
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined;
  const labels = (meta as Record<string, unknown>)['labels'];
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

/**
 * Compiles both selectors for objects whose field-selector contract is `fieldSpec`; undefined or
 * empty selectors match everything. Both are parsed eagerly, the label selector first (as kube
 * decodes the list options), so a bad selector throws ApiError 400 BadRequest before any object is read.
 */
export function compileSelectors(fieldSpec: FieldSelectorSpec, labelSelector?: string, fieldSelector?: string): ObjectMatcher {
  const byLabels = compileLabelSelector(labelSelector);
  const byFields = compileFieldSelector(fieldSelector, fieldSpec);
  return (obj) => byLabels(labelsOf(obj)) && byFields(obj);
}

/** Both selectors as predicates over what they read: an object's labels and its selectable fields. */
export interface SelectorParts {
  byLabels(labels: Labels): boolean;
  byFields(fields: Record<string, string>): boolean;
  /** The field selector's terms, fields under their canonical labels. */
  fieldRequirements: readonly FieldRequirement[];
}

/**
 * `compileSelectors` split in two, for callers that keep objects' labels and fields (from
 * `labelsOf` and `fieldSpec.fieldsOf`) instead of the objects. Throws as compileSelectors does.
 */
export function compileSelectorParts(fieldSpec: FieldSelectorSpec, labelSelector?: string, fieldSelector?: string): SelectorParts {
  const byLabels = compileLabelSelector(labelSelector);
  const requirements = fieldSelector === undefined || fieldSelector === '' ? [] : parseFieldSelectorFor(fieldSpec, fieldSelector);
  return { byLabels, byFields: (fields) => requirements.length === 0 || fieldRequirementsMatch(requirements, fields), fieldRequirements: requirements };
}
