import { compileSelectors } from '../selectors/compile-selectors.js';
import { fieldSelectorsOf } from '../strategy/strategies.js';
import type { StoredObject } from '../storage/storage.js';
import type { ListOptions } from '../api/request-options.js';
import type { ResourceInfo } from '../api/resource-info.js';
import type { Obj } from '../api/object-util.js';
import { tryDecode } from './corrupt-object.js';

/** The label and field selectors of a list, watch or deletecollection request. */
export interface Selection {
  /** Whether any selector narrows the collection. */
  active: boolean;
  matches(obj: Obj): boolean;
  /** `matches` over stored JSON; undefined when nothing is selected out (no parsing needed). */
  matchesStored: ((obj: StoredObject) => boolean) | undefined;
  /**
   * When set, what `matchesStored` passed is narrowed further by this (field selectors evaluated on
   * objects converted by a CRD's webhook, src/selectors/converted-selection.ts).
   */
  selectConverted?: (items: readonly StoredObject[]) => Promise<StoredObject[]>;
}

/**
 * Compiles a request's label and field selectors (400 on bad syntax or unsupported fields, before
 * storage is touched). `name` adds `metadata.name=<name>` (watch on one object's path).
 */
export function selectionFor(
  r: { info: Pick<ResourceInfo, 'group' | 'version' | 'resource' | 'custom' | 'namespaced' | 'selectableFields'> },
  selectors: Pick<ListOptions, 'labelSelector' | 'fieldSelector'>,
  name = '',
): Selection {
  const labelSelector = selectors.labelSelector;
  let fieldSelector = selectors.fieldSelector;
  if (name !== '') fieldSelector = fieldSelector ? `${fieldSelector},metadata.name=${name}` : `metadata.name=${name}`;
  if (labelSelector.trim() === '' && fieldSelector.trim() === '') {
    return { active: false, matches: () => true, matchesStored: undefined };
  }
  const matches = compileSelectors(fieldSelectorsOf(r.info), labelSelector, fieldSelector);
  // An object that does not decode is kept, for the read to report it (kube's corrupt-object errors).
  return {
    active: true,
    matches,
    matchesStored: (s) => {
      const obj = tryDecode(s.json);
      return obj === undefined || matches(obj);
    },
  };
}
