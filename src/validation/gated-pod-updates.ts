/**
 * What kube 1.36's ValidatePodUpdate lets a Pod that still has scheduling gates change beyond the
 * updatable fields: entries added to `spec.nodeSelector` (validateNodeSelectorMutation) and, in the
 * required node affinity, requirements appended to existing terms or any terms where there were none
 * (validateNodeAffinityMutation). Other changes of these fields are refused with kube's messages,
 * which print its internal Go structs (field names capitalised, nil lists as null).
 */
import type { StatusCause } from '../api/errors.js';
import { jsonEqual } from '../api/object-util.js';
import { goJson, invalidField } from './field-errors.js';
import { asArray, type Obj, objectOrUndefined } from '../api/values.js';
import { objects, sortedStringMap } from './value-access.js';

const NODE_AFFINITY = 'spec.affinity.nodeAffinity';
const TERMS = `${NODE_AFFINITY}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`;

/** A node selector requirement or term as kube's internal types marshal to JSON. */
function internalRequirements(value: unknown): unknown {
  if (!Array.isArray(value)) return null;
  return objects(value).map((r) => ({ Key: r.key ?? '', Operator: r.operator ?? '', Values: Array.isArray(r.values) ? r.values : null }));
}

function internalTerm(term: Obj): unknown {
  return { MatchExpressions: internalRequirements(term.matchExpressions), MatchFields: internalRequirements(term.matchFields) };
}

/** Semantic equality of two lists, empty and absent alike (apiequality.Semantic.DeepEqual). */
function sameList(a: unknown[], b: unknown[]): boolean {
  return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
}

/** validateNodeSelectorTermHasOnlyAdditions. */
function onlyAdditions(next: Obj, old: Obj): boolean {
  const oldExpressions = asArray(old.matchExpressions);
  const oldFields = asArray(old.matchFields);
  const nextExpressions = asArray(next.matchExpressions);
  const nextFields = asArray(next.matchFields);
  if (oldExpressions.length === 0 && oldFields.length === 0 && (nextExpressions.length > 0 || nextFields.length > 0)) return false;
  for (const [nextList, oldList] of [
    [nextExpressions, oldExpressions],
    [nextFields, oldFields],
  ]) {
    if (oldList.length > 0 && (nextList.length < oldList.length || !sameList(nextList.slice(0, oldList.length), oldList))) return false;
  }
  return true;
}

function requiredTerms(nodeAffinity: Obj | undefined): unknown[] | undefined {
  const required = objectOrUndefined(nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
  return required === undefined ? undefined : asArray(required.nodeSelectorTerms);
}

/** validateNodeAffinityMutation. */
function nodeAffinityCauses(next: Obj | undefined, old: Obj | undefined): StatusCause[] {
  const oldTerms = requiredTerms(old);
  if (oldTerms === undefined) return [];
  const nextTermsValue = objectOrUndefined(objectOrUndefined(next?.requiredDuringSchedulingIgnoredDuringExecution))?.nodeSelectorTerms;
  const nextTerms = asArray(nextTermsValue);
  if (oldTerms.length > 0 && oldTerms.length !== nextTerms.length) {
    const printed = goJson(Array.isArray(nextTermsValue) ? objects(nextTermsValue).map(internalTerm) : null);
    return [invalidField(TERMS, printed, 'no additions/deletions to non-empty NodeSelectorTerms list are allowed')];
  }
  const causes: StatusCause[] = [];
  objects(oldTerms).forEach((oldTerm, i) => {
    const nextTerm = objects(nextTerms)[i] ?? {};
    if (!onlyAdditions(nextTerm, oldTerm)) {
      causes.push(invalidField(`${TERMS}[${i}]`, goJson(internalTerm(nextTerm)), 'only additions are allowed (no mutations or deletions)'));
    }
  });
  return causes;
}

/**
 * The gated-pod rules for `munged` (the new spec with the updatable fields already taken from `old`);
 * afterwards `munged` holds the old nodeSelector and node affinity, so that only other changes remain.
 */
export function gatedPodUpdateCauses(munged: Obj, old: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const nodeSelector = sortedStringMap(munged.nodeSelector);
  const oldNodeSelector = sortedStringMap(old.nodeSelector);
  if (!jsonEqual(nodeSelector ?? {}, oldNodeSelector ?? {})) {
    const changed = Object.entries(oldNodeSelector ?? {}).some(([k, v]) => nodeSelector?.[k] !== v);
    if (changed)
      causes.push(invalidField('spec.nodeSelector', goJson(nodeSelector), 'only additions to spec.nodeSelector are allowed (no mutations or deletions)'));
    if (old.nodeSelector === undefined) delete munged.nodeSelector;
    else munged.nodeSelector = old.nodeSelector;
  }
  const oldAffinity = objectOrUndefined(old.affinity);
  const oldNodeAffinity = objectOrUndefined(oldAffinity?.nodeAffinity);
  const affinity = objectOrUndefined(munged.affinity);
  const nodeAffinity = objectOrUndefined(affinity?.nodeAffinity);
  if (jsonEqual(nodeAffinity, oldNodeAffinity)) return causes;
  causes.push(...nodeAffinityCauses(nodeAffinity, oldNodeAffinity));
  if (affinity === undefined) {
    if (oldNodeAffinity !== undefined) munged.affinity = { nodeAffinity: oldNodeAffinity };
  } else if (oldAffinity === undefined && affinity.podAffinity === undefined && affinity.podAntiAffinity === undefined) {
    delete munged.affinity;
  } else {
    const { nodeAffinity: _dropped, ...rest } = affinity;
    munged.affinity = oldNodeAffinity === undefined ? rest : { ...rest, nodeAffinity: oldNodeAffinity };
  }
  return causes;
}
