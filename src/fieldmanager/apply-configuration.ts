import { metaOf, STRIP } from './update-managed-fields.js';
import { cloneJson } from '../codec/json-value.js';
import { compareChanges, valuesEqual } from './compare-objects.js';
import { FieldSet, type FieldPath } from './field-set.js';
import { decodeManagedFields, encodeManagedFields, managerIdentifier, type Managed } from './managed-fields.js';
import type { SmdType } from './smd-type.js';
import { updateManagedFields } from './update-managed-fields.js';
import { versionedChanges, type VersionViews } from './version-comparison.js';
import { ensureNamedFieldsAreMembers, mergeValues, removeItems, toFieldSet } from './typed-value.js';
import type { Obj } from '../api/object-util.js';
import { isObject } from '../api/values.js';

/** What one server-side apply is recorded as. */
export interface ApplyRecord {
  /** The field manager (required for apply, never empty). */
  manager: string;
  /** The request's group/version, the Apply entry's apiVersion. */
  apiVersion: string;
  /** The object's structured-merge-diff type. */
  type: SmdType;
  /** Fields the write path resets (kube's GetResetFields): neither applied nor conflicting. */
  resetFields: FieldSet | undefined;
  /** RFC 3339 time stamped on the applier's entry when the object changes. */
  now: string;
  /** Take fields other managers own instead of failing with conflicts. */
  force: boolean;
  /** The kind's empty object: what an object without managedFields is diffed against first. */
  empty: Obj;
  /** The subresource applied to (`status`, `scale`), recorded in the entry; '' or absent for the object itself. */
  subresource?: string;
  /** Other versions of the kind whose managers compare at their own version (converting kinds). */
  versionViews?: VersionViews;
}

/** The manager kube records an untracked object's existing fields under before its first apply. */
export const BEFORE_FIRST_APPLY = 'before-first-apply';

/** One field another manager owns with another value: its manager identifier and path. */
export interface ApplyConflict {
  manager: string;
  path: FieldPath;
}

/** The apply would change fields other managers own (structured-merge-diff's merge.Conflicts). */
export class ApplyConflictError extends Error {
  constructor(readonly conflicts: ApplyConflict[]) {
    super(`${conflicts.length} conflict(s)`);
  }
}

/**
 * Applies `config` (the applied configuration, already checked to be of the object's kind and
 * version and to carry no managedFields) to `live` (the object in the request's version, or the
 * kind's empty object for a create), as kube's FieldManager.Apply does with structured-merge-diff's
 * Updater.Apply: the configuration is merged into the object by the schema; fields the manager
 * applied before and no longer applies are removed unless another manager owns them; the
 * manager's Apply entry becomes exactly the applied set (identity metadata and reset fields left
 * out); fields another manager owns with a different value are conflicts, thrown as
 * ApplyConflictError unless `force` takes them from that manager. Returns the new object with its
 * managedFields, or `live` itself (managedFields updated) when the object does not change; the
 * entry's time is `now` only when the object changed. Never mutates its inputs.
 */
export function applyConfiguration(live: Obj, config: Obj, rec: ApplyRecord): { object: Obj; changed: boolean } {
  let managed: Managed = decodeManagedFields(metaOf(live).managedFields);
  if (managed.size === 0) {
    // skipNonAppliedManager: the fields the object already has become an Update entry first.
    const tracked = cloneJson(live);
    updateManagedFields(rec.empty, tracked, {
      manager: BEFORE_FIRST_APPLY,
      apiVersion: rec.apiVersion,
      subresource: rec.subresource ?? '',
      type: rec.type,
      resetFields: rec.resetFields,
      now: rec.now,
      sent: undefined,
    });
    managed = decodeManagedFields(metaOf(tracked).managedFields);
  }
  const id = managerIdentifier({ manager: rec.manager, operation: 'Apply', apiVersion: rec.apiVersion, subresource: rec.subresource ?? '' });
  const liveValue = withoutManagedFields(live);
  const filter = (s: FieldSet): FieldSet => (rec.resetFields ? s.recursiveDifference(rec.resetFields) : s);

  const merged = mergeValues(liveValue, config, rec.type);
  const lastSet = managed.get(id);
  const applied = filter(toFieldSet(config, rec.type));
  managed.set(id, { set: applied, apiVersion: rec.apiVersion, applied: true, time: lastSet?.time });
  const pruned = lastSet === undefined || lastSet.set.empty() ? merged : prune(merged, managed, lastSet.set, rec.type);
  const next = isObject(pruned) ? pruned : {};

  // Updater.update: conflicts with and removals from every other manager.
  const cmp = compareChanges(liveValue, next, rec.type);
  // The comparison's sets are this apply's alone: filtered in place rather than copied.
  if (rec.resetFields) {
    cmp.changed.removeRecursively(rec.resetFields);
    cmp.removed.removeRecursively(rec.resetFields);
  }
  const changeAt = versionedChanges(cmp, rec.apiVersion, rec.versionViews, liveValue, next, filter);
  const conflicts: ApplyConflict[] = [];
  const conflictSets = new Map<string, FieldSet>();
  for (const [m, vs] of managed) {
    if (m === id) continue;
    const c = vs.set.intersection(changeAt(vs.apiVersion).changed);
    if (!c.empty()) {
      conflictSets.set(m, c);
      for (const path of c.paths()) conflicts.push({ manager: m, path });
    }
  }
  if (!rec.force && conflicts.length > 0) throw new ApplyConflictError(conflicts);
  for (const [m, vs] of managed) {
    if (m === id) continue;
    const c = conflictSets.get(m);
    let set = c ? vs.set.difference(c) : vs.set;
    const removedThere = changeAt(vs.apiVersion).removed;
    // An entry nothing changed keeps its set, and so its stored fieldsV1 (managed-fields.ts).
    if (set.intersects(removedThere)) set = set.difference(removedThere);
    if (set.empty()) managed.delete(m);
    else vs.set = set;
  }
  // The no-op check compares whole values: reset fields count here, though never as owned.
  const changed = !valuesEqual(liveValue, next);

  // stripMetaManager, then managedFieldsUpdater's time.
  const own = managed.get(id);
  if (own !== undefined) {
    // The applied set is this apply's own (made from its configuration above): stripped in place.
    own.set.remove(STRIP);
    if (own.set.empty()) managed.delete(id);
    else {
      // Applying what it applied before keeps the entry's set, and so its stored fieldsV1.
      if (lastSet !== undefined && own.set.equals(lastSet.set)) own.set = lastSet.set;
      if (changed) own.time = rec.now;
    }
  }
  const object = changed ? next : cloneJson(liveValue);
  const meta = isObject(object.metadata) ? object.metadata : (object.metadata = {});
  const encoded = encodeManagedFields(managed);
  if (encoded !== undefined) meta.managedFields = encoded;
  return { object, changed };
}

function withoutManagedFields(obj: Obj): Obj {
  const copy = cloneJson(obj);
  if (isObject(copy.metadata)) delete copy.metadata.managedFields;
  return copy;
}

/**
 * Updater.prune in one version: removes from `merged` what the manager applied last time and no
 * longer applies, keeping what any manager (the applier's new set included) still owns and what
 * the manager never owned.
 */
function prune(merged: unknown, managed: Managed, lastSet: FieldSet, type: SmdType): unknown {
  const ensure = (s: FieldSet): FieldSet => ensureNamedFieldsAreMembers(s, type);
  const last = ensure(lastSet);
  let pruned = removeItems(merged, last, type);
  // addBackOwnedItems
  const all = new FieldSet();
  for (const vs of managed.values()) all.absorb(vs.set);
  const mergedSet = ensure(toFieldSet(merged, type));
  const prunedSet = ensure(toFieldSet(pruned, type));
  pruned = removeItems(merged, mergedSet.difference(prunedSet.union(ensure(all))), type);
  // addBackDanglingItems
  const prunedSet2 = ensure(toFieldSet(pruned, type));
  return removeItems(merged, mergedSet.difference(prunedSet2).intersection(last), type);
}
