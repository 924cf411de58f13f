import { isObject, nowTimestamp, type Obj } from '../api/object-util.js';
import type { StatusCause } from '../api/errors.js';
import { aggregateText, causeText } from '../validation/field-errors.js';
import { unconvertibleReason, validateStructural } from './crd-structural.js';
import { namesOf, type CrdNames } from './crd-model.js';

/**
 * The status kube's CRD controllers compute: the naming controller's `acceptedNames` and
 * `NamesAccepted` condition (names already accepted by another CRD of the group are refused with
 * kube's reasons and messages), the establishing controller's `Established`, and the finalizer's
 * `Terminating`. Pure functions of the stored objects.
 */

/** One `status.conditions` entry. */
export interface CrdCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason: string;
  message: string;
}

/** The stored `status.conditions`, narrowed. */
export function conditionsOf(obj: Obj): CrdCondition[] {
  const status = isObject(obj.status) ? obj.status : {};
  if (!Array.isArray(status.conditions)) return [];
  return status.conditions.filter(isObject).map((c) => ({
    type: typeof c.type === 'string' ? c.type : '',
    status: c.status === 'True' || c.status === 'False' ? c.status : 'Unknown',
    ...(typeof c.lastTransitionTime === 'string' ? { lastTransitionTime: c.lastTransitionTime } : {}),
    reason: typeof c.reason === 'string' ? c.reason : '',
    message: typeof c.message === 'string' ? c.message : '',
  }));
}

/** Whether condition TYPE is True in `obj`'s status. */
export function isConditionTrue(obj: Obj, type: string): boolean {
  return conditionsOf(obj).some((c) => c.type === type && c.status === 'True');
}

/** `status.acceptedNames`, narrowed (empty names when absent). */
export function acceptedNamesOf(obj: Obj): CrdNames {
  const status = isObject(obj.status) ? obj.status : {};
  const raw = isObject(status.acceptedNames) ? status.acceptedNames : {};
  const names = namesOf(raw);
  // namesOf fills defaults for spec names; accepted names are exactly what was stored.
  return {
    ...names,
    singular: typeof raw.singular === 'string' ? raw.singular : '',
    listKind: typeof raw.listKind === 'string' ? raw.listKind : '',
  };
}

/**
 * kube's SetCRDCondition: replaces or appends CONDITION, keeping the old transition time when the
 * status did not change and stamping `now` when it did.
 */
export function setCondition(conditions: CrdCondition[], condition: CrdCondition, now: string): CrdCondition[] {
  const out = [...conditions];
  const i = out.findIndex((c) => c.type === condition.type);
  if (i < 0) {
    out.push({ type: condition.type, status: condition.status, lastTransitionTime: now, reason: condition.reason, message: condition.message });
    return out;
  }
  const old = out[i];
  const keep = old !== undefined && old.status === condition.status && old.lastTransitionTime !== undefined;
  out[i] = {
    type: condition.type,
    status: condition.status,
    lastTransitionTime: keep ? old.lastTransitionTime : now,
    reason: condition.reason,
    message: condition.message,
  };
  return out;
}

function usedError(requested: string, accepted: string, used: Set<string>): string | undefined {
  if (requested === accepted || !used.has(requested)) return undefined;
  return `"${requested}" is already in use`;
}

/** The names and conditions the naming controller computes for CRD against OTHERS of the group. */
export function computeNames(crd: Obj, others: readonly Obj[]): { names: CrdNames; namesAccepted: CrdCondition; established: CrdCondition } {
  const spec = isObject(crd.spec) ? crd.spec : {};
  const requested = namesOf(spec.names);
  const accepted = acceptedNamesOf(crd);
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of others) {
    const n = acceptedNamesOf(other);
    for (const r of [n.plural, n.singular, ...n.shortNames]) resources.add(r);
    kinds.add(n.kind);
    kinds.add(n.listKind);
  }
  const next: CrdNames = { ...accepted };
  let cond: CrdCondition | undefined;
  const fail = (reason: string, message: string): void => {
    cond = { type: 'NamesAccepted', status: 'False', reason, message };
  };
  let err = usedError(requested.plural, accepted.plural, resources);
  if (err !== undefined) fail('PluralConflict', err);
  else next.plural = requested.plural;
  err = usedError(requested.singular, accepted.singular, resources);
  if (err !== undefined) fail('SingularConflict', err);
  else next.singular = requested.singular;
  if (JSON.stringify(requested.shortNames) !== JSON.stringify(accepted.shortNames)) {
    const mine = new Set(accepted.shortNames);
    const errs = requested.shortNames.filter((s) => !mine.has(s)).flatMap((s) => usedError(s, '', resources) ?? []);
    if (errs.length > 0) fail('ShortNamesConflict', errs.length === 1 ? (errs[0] ?? '') : `[${errs.join(', ')}]`);
    else next.shortNames = requested.shortNames;
  }
  err = usedError(requested.kind, accepted.kind, kinds);
  if (err !== undefined) fail('KindConflict', err);
  else next.kind = requested.kind;
  err = usedError(requested.listKind, accepted.listKind, kinds);
  if (err !== undefined) fail('ListKindConflict', err);
  else next.listKind = requested.listKind;
  next.categories = requested.categories;
  const namesAccepted: CrdCondition = cond ?? { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' };

  const old = conditionsOf(crd).find((c) => c.type === 'Established');
  let established: CrdCondition = old ?? { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' };
  // The establishing controller follows at once: Capstan serves a CRD as soon as its names are accepted.
  if (established.status !== 'True' && namesAccepted.status === 'True') {
    established = { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' };
  }
  return { names: next, namesAccepted, established };
}

/** `acceptedNames` as kube serializes it (plural and kind always; the rest when set). */
export function acceptedNamesJson(n: CrdNames): Obj {
  const out: Obj = { plural: n.plural };
  if (n.singular !== '') out.singular = n.singular;
  if (n.shortNames.length > 0) out.shortNames = n.shortNames;
  out.kind = n.kind;
  if (n.listKind !== '') out.listKind = n.listKind;
  if (n.categories.length > 0) out.categories = n.categories;
  return out;
}

/** Sets (or replaces) the CRD condition of `condition.type` in `obj.status`, stamped now when it changes. */
export function setStatusCondition(obj: Obj, condition: CrdCondition): void {
  const status = isObject(obj.status) ? obj.status : {};
  status.conditions = setCondition(conditionsOf(obj), condition, nowTimestamp());
  obj.status = status;
}

/**
 * kube's NonStructuralSchema condition: True (`Violations`, kube's aggregate of the structural
 * findings) when a version's schema is not structural, Unknown (`StructuralError`) when no
 * structural schema can be built at all, absent otherwise. Creates and spec updates refuse such
 * schemas, so only CRDs stored before those checks carry it.
 */
export function nonStructuralCondition(obj: Obj): CrdCondition | undefined {
  const spec = isObject(obj.spec) ? obj.spec : {};
  const versions = Array.isArray(spec.versions) ? spec.versions.filter(isObject) : [];
  const findings: StatusCause[] = [];
  for (const [i, v] of versions.entries()) {
    const schema = isObject(v.schema) && isObject(v.schema.openAPIV3Schema) ? v.schema.openAPIV3Schema : undefined;
    if (schema === undefined) continue;
    const unconvertible = unconvertibleReason(schema);
    if (unconvertible !== undefined) {
      const message = `failed to check validation schema for version ${typeof v.name === 'string' ? v.name : ''}: ${unconvertible}`;
      return { type: 'NonStructuralSchema', status: 'Unknown', reason: 'StructuralError', message };
    }
    findings.push(...validateStructural(schema, `spec.versions[${i}].schema.openAPIV3Schema`));
  }
  if (findings.length === 0) return undefined;
  return { type: 'NonStructuralSchema', status: 'True', reason: 'Violations', message: aggregateText(findings.map(causeText)) };
}
