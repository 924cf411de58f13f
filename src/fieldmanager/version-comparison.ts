import type { Obj } from '../api/object-util.js';
import { compareChanges } from './compare-objects.js';
import type { FieldSet } from './field-set.js';
import type { SmdType } from './smd-type.js';

/** How an object of the request's version looks at another version of its kind: that version's type and the conversion to it. */
export interface VersionView {
  type: SmdType;
  convert(value: Obj): Obj;
}

/** The view of another apiVersion of the kind, or undefined when its objects compare as the request's do. */
export type VersionViews = (apiVersion: string) => VersionView | undefined;

/** A version's objects could not be converted: the write's managedFields cannot be tracked. */
export class VersionConversionError extends Error {}

/** What a write changes and removes, as field sets of one version. */
export interface VersionedChange {
  changed: FieldSet;
  removed: FieldSet;
}

/**
 * structured-merge-diff's per-version comparisons (Updater.update): a manager whose entry was
 * recorded at another apiVersion loses, or conflicts on, what the write changes as seen at that
 * version, so the old and new objects are converted there and compared with that version's type.
 * Versions without a view (or whose typed comparison fails) use the request's comparison; a view's
 * VersionConversionError is thrown.
 */
export function versionedChanges(
  own: VersionedChange,
  ownApiVersion: string,
  views: VersionViews | undefined,
  before: Obj,
  after: Obj,
  filter: (s: FieldSet) => FieldSet,
): (apiVersion: string) => VersionedChange {
  const cache = new Map<string, VersionedChange>([[ownApiVersion, own]]);
  return (apiVersion) => {
    let change = cache.get(apiVersion);
    if (change !== undefined) return change;
    change = own;
    const view = views?.(apiVersion);
    if (view !== undefined) {
      try {
        const cmp = compareChanges(view.convert(before), view.convert(after), view.type);
        change = { changed: filter(cmp.changed), removed: filter(cmp.removed) };
      } catch (err) {
        if (err instanceof VersionConversionError) throw err;
        change = own;
      }
    }
    cache.set(apiVersion, change);
    return change;
  };
}
