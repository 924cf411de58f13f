import { compileSelectorParts, labelsOf } from '../selectors/compile-selectors.js';
import { fieldValue, type FieldSelectorSpec } from '../selectors/field-selector.js';
import type { Labels } from '../selectors/label-selector.js';
import { fieldSelectorsOf, watchIndexFieldOf } from '../strategy/strategies.js';
import type { StoredObject } from '../storage/storage.js';
import type { ListOptions } from '../api/request-options.js';
import type { ResourceInfo } from '../api/resource-info.js';
import type { Obj } from '../api/object-util.js';
import { decodeStoredJson } from '../storage/stored-json.js';

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
  /**
   * An exact-match term (`field=value`) of the field selector, when it has one: an object whose
   * `field` is not `value` never matches. Watches test it first (see event-filter.ts): every kubelet
   * watches pods with `spec.nodeName=<node>`, and a change concerns one or two nodes of thousands.
   */
  exactField?: ExactField;
}

/** One exact-match field term of a selection. */
export interface ExactField {
  /** Names the field under its type's field-selector contract: equal keys read equal values of one object. */
  key: string;
  /** The field's canonical label. */
  field: string;
  value: string;
  /** The object's value of the field, as the selector reads it (a missing field reads as ""). */
  of(obj: Obj): string;
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
  const spec = fieldSelectorsOf(r.info);
  const parts = compileSelectorParts(spec, labelSelector, fieldSelector);
  const contract = contractOf(r.info);
  const matches = (obj: Obj): boolean => {
    const view = parsedView(obj, contract, spec);
    return parts.byLabels(view.labels) && parts.byFields(view.fields);
  };
  // The kind's indexed field first: storage narrows watches by it (watch-trigger.ts).
  const indexField = watchIndexFieldOf(r.info);
  const exact = parts.fieldRequirements.find((r) => r.operator === '=' && r.field === indexField) ?? parts.fieldRequirements.find((r) => r.operator === '=');
  return {
    active: true,
    matches,
    ...(exact !== undefined && {
      exactField: {
        key: `${contract} ${exact.field}`,
        field: exact.field,
        value: exact.value,
        of: (obj: Obj) => fieldValue(parsedView(obj, contract, spec).fields, exact.field),
      },
    }),
    matchesStored: (s) => {
      const view = selectedView(s, contract, spec);
      // An object that does not decode is kept, for the read to report it (kube's corrupt-object errors).
      return view === undefined || (parts.byLabels(view.labels) && parts.byFields(view.fields));
    },
  };
}

/** What selectors read of one object (a stored version or a parsed one), under one type's field-selector contract. */
interface SelectedView {
  contract: string;
  labels: Labels;
  fields: Record<string, string>;
}

/**
 * Each stored object's labels and selectable fields, decoded once per object version (a stored
 * object is never changed, and a write replaces it): a LIST with selectors, such as every kubelet's
 * `fieldSelector=spec.nodeName=<node>`, would otherwise parse every object of the type each time.
 */
const views = new WeakMap<StoredObject, SelectedView>();

/** The identity of a type's field-selector contract (a CRD's selectable fields can change). */
function contractOf(info: Pick<ResourceInfo, 'group' | 'version' | 'resource' | 'selectableFields'>): string {
  return `${info.group}/${info.version}/${info.resource}/${(info.selectableFields ?? []).join(',')}`;
}

/**
 * The same for parsed objects: a watch event's object is parsed once and tested by every watch with
 * selectors (a thousand kubelets each watch pods with `spec.nodeName=<node>`), so its view is made
 * once too. Callers never change an object after selecting on it.
 */
const parsedViews = new WeakMap<Obj, SelectedView>();

function parsedView(obj: Obj, contract: string, spec: FieldSelectorSpec): SelectedView {
  const known = parsedViews.get(obj);
  if (known !== undefined && known.contract === contract) return known;
  const view = viewOf(obj, contract, spec);
  parsedViews.set(obj, view);
  return view;
}

function viewOf(obj: Obj, contract: string, spec: FieldSelectorSpec): SelectedView {
  return { contract, labels: labelsOf(obj), fields: spec.fieldsOf(obj) };
}

function selectedView(s: StoredObject, contract: string, spec: FieldSelectorSpec): SelectedView | undefined {
  const known = views.get(s);
  if (known !== undefined && known.contract === contract) return known;
  const obj = decodeStoredJson(s.json);
  if (obj === undefined) return undefined;
  const view = viewOf(obj, contract, spec);
  views.set(s, view);
  return view;
}
