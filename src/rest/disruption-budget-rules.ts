import { isObject, metadataOf, nowTimestamp, type Obj } from '../api/object-util.js';
import { requirementMatches, type LabelMatcher, type LabelRequirement, type Labels } from '../selectors/label-selector.js';

/**
 * The facts about PodDisruptionBudgets that the eviction subresource and the disruption controller
 * share, as kube's component-helpers and pod utilities state them.
 */

/** Storage type of PodDisruptionBudgets (policy group). */
export const PDB_TYPE = 'poddisruptionbudgets.policy';

/** The condition kube's disruption controller and eviction keep on a PDB. */
export const DISRUPTION_ALLOWED = 'DisruptionAllowed';

const OPERATORS: Record<string, LabelRequirement['operator']> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };

/**
 * A metav1.LabelSelector object as kube's LabelSelectorAsSelector reads it: absent or null selects
 * nothing, an empty one everything; a selector kube would refuse (unknown operator, In without values)
 * selects nothing, as the eviction REST and the controller skip such PDBs.
 */
export function selectorMatcher(selector: unknown): LabelMatcher {
  if (!isObject(selector)) return () => false;
  const requirements: LabelRequirement[] = [];
  if (isObject(selector.matchLabels)) {
    for (const [key, value] of Object.entries(selector.matchLabels)) {
      if (typeof value !== 'string') return () => false;
      requirements.push({ key, operator: 'in', values: [value] });
    }
  }
  for (const e of Array.isArray(selector.matchExpressions) ? selector.matchExpressions : []) {
    if (!isObject(e) || typeof e.key !== 'string' || typeof e.operator !== 'string') return () => false;
    const operator = OPERATORS[e.operator];
    const values = Array.isArray(e.values) ? e.values.filter((v): v is string => typeof v === 'string') : [];
    if (operator === undefined) return () => false;
    if ((operator === 'in' || operator === 'notin') === (values.length === 0)) return () => false;
    requirements.push({ key: e.key, operator, values });
  }
  return (labels: Labels) => requirements.every((r) => requirementMatches(r, labels));
}

/** An object's labels (string values only), for selector matching. */
export function labelsOf(obj: Obj): Record<string, string> {
  const labels = metadataOf(obj).labels;
  const out: Record<string, string> = {};
  if (isObject(labels)) for (const [k, v] of Object.entries(labels)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** A status condition of `type` from `conditions`, if present. */
export function findCondition(conditions: unknown, type: string): Obj | undefined {
  if (!Array.isArray(conditions)) return undefined;
  for (const c of conditions) if (isObject(c) && c.type === type) return c;
  return undefined;
}

/** kube's IsPodReady: the pod's Ready condition is True. */
export function isPodReady(pod: Obj): boolean {
  const status = isObject(pod.status) ? pod.status : {};
  return findCondition(status.conditions, 'Ready')?.status === 'True';
}

/** A pod's phase ('' when unset). */
export function podPhase(pod: Obj): string {
  const status = isObject(pod.status) ? pod.status : {};
  return typeof status.phase === 'string' ? status.phase : '';
}

/** Whether the object carries a deletionTimestamp. */
export function isTerminating(obj: Obj): boolean {
  const ts = metadataOf(obj).deletionTimestamp;
  return ts !== undefined && ts !== null;
}

/** An integer field of an object (0 when absent or not a number), as Go reads an int32. */
export function intField(obj: Obj, field: string): number {
  const v = obj[field];
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/**
 * apimeta.SetStatusCondition over a metav1.Condition list: replaces the condition of the same type,
 * keeping its lastTransitionTime when the status is unchanged, or appends it. Fields in Go's order.
 */
export function setStatusCondition(conditions: unknown, type: string, status: string, reason: string, message: string, observedGeneration: number): Obj[] {
  const list = Array.isArray(conditions) ? conditions.filter(isObject) : [];
  const existing = findCondition(list, type);
  const lastTransitionTime =
    existing !== undefined && existing.status === status && typeof existing.lastTransitionTime === 'string' ? existing.lastTransitionTime : nowTimestamp();
  const next: Obj = { type, status, observedGeneration, lastTransitionTime, reason, message };
  if (observedGeneration === 0) delete next.observedGeneration;
  if (existing === undefined) return [...list, next];
  return list.map((c) => (c === existing ? next : c));
}

/**
 * component-helpers' UpdateDisruptionAllowedCondition: DisruptionAllowed True (SufficientPods) when
 * `status.disruptionsAllowed` is positive, else False (InsufficientPods). Mutates `status`.
 */
export function updateDisruptionAllowedCondition(status: Obj): void {
  const allowed = intField(status, 'disruptionsAllowed') > 0;
  status.conditions = setStatusCondition(
    status.conditions,
    DISRUPTION_ALLOWED,
    allowed ? 'True' : 'False',
    allowed ? 'SufficientPods' : 'InsufficientPods',
    '',
    intField(status, 'observedGeneration'),
  );
}
