import { compareChanges } from './compare-objects.js';
import { FieldSet } from './field-set.js';
import { decodeManagedFields, encodeManagedFields, managerIdentifier, timeSeconds, type Managed } from './managed-fields.js';
import { fieldElement } from './path-element.js';
import type { SmdType } from './smd-type.js';
import { versionedChanges, type VersionViews } from './version-comparison.js';
import type { Obj } from '../api/object-util.js';

/** kube's DefaultMaxUpdateManagers: beyond this many Update entries the oldest are merged. */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';

/** What one non-apply write is recorded as. */
export interface UpdateRecord {
  /** Manager name ('' is recorded as `unknown`). */
  manager: string;
  /** The request's group/version, the entry's apiVersion. */
  apiVersion: string;
  /** '' for the main resource, else the subresource written (`status`, `scale`, ...). */
  subresource: string;
  /** The object's structured-merge-diff type. */
  type: SmdType;
  /** Fields the write path resets for this resource (kube's GetResetFields), never owned by a writer. */
  resetFields: FieldSet | undefined;
  /** RFC 3339 time stamped on the entry that changes. */
  now: string;
  /**
   * The `metadata.managedFields` the request sent, as decoded (before the stored shape drops an
   * empty list, which means "reset"); undefined when it sent none.
   */
  sent: unknown;
  /** Other versions of the kind whose managers compare at their own version (converting kinds). */
  versionViews?: VersionViews;
}

const f = fieldElement;
/** kube's stripMetaManager set: fields nobody is recorded as owning. */
export const STRIP = FieldSet.of(
  [f('apiVersion')],
  [f('kind')],
  [f('metadata')],
  ...['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion'].map((n) => [
    f('metadata'),
    f(n),
  ]),
);

/** The object's metadata, or an empty object when it has none. */
export function metaOf(obj: Obj): Obj {
  const m = obj.metadata;
  return typeof m === 'object' && m !== null && !Array.isArray(m) ? (m as Obj) : {};
}

/** kube's isResetManagedFields: `[]` or a single empty entry. */
function isReset(mf: unknown): boolean {
  if (!Array.isArray(mf)) return false;
  if (mf.length === 0) return true;
  const only: unknown = mf[0];
  return mf.length === 1 && typeof only === 'object' && only !== null && !Array.isArray(only) && Object.values(only).every(isZero);
}

function isZero(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0);
}

function decodeOrEmpty(mf: unknown): Managed {
  try {
    return decodeManagedFields(mf);
  } catch {
    return new Map();
  }
}

/**
 * kube's decodeLiveOrNew: subresource writes keep the live object's managed fields; other writes
 * take the request's when it sends valid, non-empty ones, start empty when it sends `[]`, and
 * otherwise keep the live object's. Unreadable managed fields count as none.
 */
function startingManaged(live: Obj, sent: unknown, isSubresource: boolean): Managed {
  const liveMf = metaOf(live).managedFields;
  if (isSubresource) return decodeOrEmpty(liveMf);
  if (isReset(sent)) return new Map();
  try {
    const m = decodeManagedFields(sent);
    if (m.size > 0) return m;
  } catch {
    // Falls back to the live object's, as kube does.
  }
  return decodeOrEmpty(liveMf);
}

/**
 * Records a write that is not an apply in `next.metadata.managedFields`, as kube's FieldManager
 * Update path does (managed fields updater, cap, build manager info, strip meta, structured merge):
 * `live` is the object before the write (for a create, the kind's empty object, which has no uid)
 * and `next` the object the request makes of it. The writer gains every field it added or changed
 * (reset fields and identity metadata excepted), with the entry's time set to `now`; every other
 * entry loses those fields and every removed field; empty entries disappear; entries beyond ten
 * Update managers are merged into `ancient-changes`. An existing object whose managed fields are
 * empty (or reset with `[]`) stays untracked. Mutates `next` only.
 */
export function updateManagedFields(live: Obj, next: Obj, rec: UpdateRecord): void {
  const managed = startingManaged(live, rec.sent, rec.subresource !== '');
  const nextMeta = metaOf(next);
  delete nextMeta.managedFields;
  if (managed.size === 0 && typeof metaOf(live).uid === 'string' && metaOf(live).uid !== '') return;
  const id = managerIdentifier({
    manager: rec.manager === '' ? 'unknown' : rec.manager,
    operation: 'Update',
    apiVersion: rec.apiVersion,
    subresource: rec.subresource,
  });

  const { changed, removed } = compareChanges(live, next, rec.type);
  const reset = rec.resetFields;
  const filter = (s: FieldSet): FieldSet => (reset ? s.recursiveDifference(reset) : s);
  // The comparison's sets are this write's alone: filtered in place rather than copied.
  if (reset) {
    changed.removeRecursively(reset);
    removed.removeRecursively(reset);
  }
  const changeAt = versionedChanges({ changed, removed }, rec.apiVersion, rec.versionViews, live, next, filter);
  /** The writer's own entry as it was read (with its stored fieldsV1, see managed-fields.ts). */
  const original = managed.get(id)?.set;
  for (const [m, vs] of managed) {
    const there = changeAt(vs.apiVersion);
    // An entry the write does not touch keeps its set (and so its stored fieldsV1, see managed-fields.ts).
    if (!vs.set.intersects(there.changed) && !vs.set.intersects(there.removed) && !vs.set.empty()) continue;
    const set = vs.set.difference(there.changed);
    set.remove(there.removed);
    if (set.empty()) managed.delete(m);
    else vs.set = set;
  }
  // Nothing reads the comparison after the loop: the writer's own fields are what is left of it.
  changed.remove(STRIP);
  const own = changed;
  if (!own.empty()) {
    const previous = managed.get(id);
    if (previous) own.absorb(previous.set);
    let set = own;
    // A writer that owns what it owned before (a Lease renewal, a status report) keeps the entry's
    // set, and with it the stored fieldsV1: not encoded again.
    if (original !== undefined && set.equals(original)) set = original;
    managed.set(id, { set, apiVersion: rec.apiVersion, applied: false, time: rec.now });
  }
  capUpdateManagers(managed);
  const encoded = encodeManagedFields(managed);
  if (encoded !== undefined) nextMeta.managedFields = encoded;
}

/** kube's capManagersManager: the oldest Update entries beyond ten go into one `ancient-changes` entry per version. */
function capUpdateManagers(managed: Managed): void {
  const updaters = [...managed].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  updaters.sort((a, b) => {
    const ta = timeSeconds(managed.get(a)?.time);
    const tb = timeSeconds(managed.get(b)?.time);
    if (ta !== tb) return ta < tb ? -1 : 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  const firstByVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
    const manager = updaters[i];
    const vs = managed.get(manager);
    if (vs === undefined) continue;
    const bucket = managerIdentifier({ manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: vs.apiVersion, subresource: '' });
    const first = firstByVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstByVersion.set(vs.apiVersion, manager);
      continue;
    }
    if (!managed.has(bucket)) {
      const s = managed.get(first);
      managed.delete(first);
      if (s !== undefined) managed.set(bucket, s);
    }
    const existing = managed.get(bucket);
    managed.set(bucket, { set: vs.set.union(existing ? existing.set : new FieldSet()), apiVersion: vs.apiVersion, applied: vs.applied, time: vs.time });
    managed.delete(manager);
    length--;
  }
}
