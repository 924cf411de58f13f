/** One predicate for a list or watch request's labelSelector and fieldSelector. */
import { compileFieldSelector, type ObjectMatcher } from './field-selector.js';
import type { FieldSelectorSpec } from './field-selector.js';
import { compileLabelSelector, type Labels } from './label-selector.js';

function labelsOf(obj: Record<string, unknown>): Labels {
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
