import type { Obj } from '../api/object-util.js';
import { servedJsonsFor } from '../conversion/converting-io.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import { apiVersionOf, type ResourceInfo } from '../api/resource-info.js';
import type { StoredObject } from '../storage/storage.js';
import { selectionFor, type Selection } from './selection.js';

/**
 * Field selectors on custom resources whose CRD converts by webhook select on the fields of the
 * request's version, as kube evaluates them on objects decoded in that version: storage is asked
 * with the label selector only, and the field selector is evaluated on the converted objects. Which
 * CRD converts by webhook is read from the catalogue's CustomResourceFacts, passed in.
 */

/** Whether the request's field selector must be evaluated after conversion. */
export function selectsAfterConversion(
  facts: CustomResourceFacts,
  info: Pick<ResourceInfo, 'group' | 'version' | 'kind' | 'custom'>,
  fieldSelector: string,
): boolean {
  return info.custom === true && fieldSelector.trim() !== '' && facts.conversionOf(apiVersionOf(info.group, info.version), info.kind) !== undefined;
}

/** The selection storage applies when the field selector waits for conversion: labels (and a watched name) only. */
export function storageSelectionFor(r: Parameters<typeof selectionFor>[0], labelSelector: string): Selection {
  return selectionFor(r, { labelSelector, fieldSelector: '' });
}

/**
 * The stored objects in `apiVersion` (as JSON) that `selection` matches once converted, in order; an
 * object that does not parse is kept, for the read to report it.
 */
export async function selectConverted(facts: CustomResourceFacts, items: readonly string[], apiVersion: string, selection: Selection): Promise<string[]> {
  const converted = await servedJsonsFor(facts, items, apiVersion, 'object');
  return converted.filter((json) => {
    try {
      return selection.matches(JSON.parse(json) as Obj);
    } catch {
      return true;
    }
  });
}

/**
 * The selection of a delete-collection (or any store-side selection) of `r`: `selection` itself, or,
 * when its field selector waits for conversion, labels in storage and fields on the converted objects.
 */
export function conversionAwareSelection(
  facts: CustomResourceFacts,
  r: { info: ResourceInfo },
  apiVersion: string,
  selectors: { labelSelector: string; fieldSelector: string },
  selection: Selection,
): Selection {
  if (!selectsAfterConversion(facts, r.info, selectors.fieldSelector)) return selection;
  return { ...storageSelectionFor(r, selectors.labelSelector), selectConverted: (items) => selectConvertedStored(facts, items, apiVersion, selection) };
}

/** `selectConverted` over stored objects: each kept object carries its converted JSON. */
export async function selectConvertedStored(
  facts: CustomResourceFacts,
  items: readonly StoredObject[],
  apiVersion: string,
  selection: Selection,
): Promise<StoredObject[]> {
  const converted = await servedJsonsFor(
    facts,
    items.map((i) => i.json),
    apiVersion,
    'object',
  );
  const out: StoredObject[] = [];
  items.forEach((item, i) => {
    let keep = true;
    try {
      keep = selection.matches(JSON.parse(converted[i]) as Obj);
    } catch {
      keep = true;
    }
    if (keep) out.push({ ...item, json: converted[i] });
  });
  return out;
}
