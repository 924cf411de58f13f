/**
 * Resource lists as kube's quota helpers (k8s.io/apiserver/pkg/quota/v1) handle them: maps of
 * resource name to quantity text, added, subtracted, masked and compared exactly, printed as
 * Quantity.String() prints them.
 */
import { canonicalQuantity, compareQuantities } from '../api/quantity.js';
import { addQuantities } from '../validation/quantity-sum.js';

export type ResourceList = Map<string, string>;

/** A resource list from an object's `{name: quantity}` field (non-string values skipped). */
export function resourceListOf(value: unknown): ResourceList {
  const list: ResourceList = new Map();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return list;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') list.set(k, v);
  return list;
}

/** The list as a JSON object, keys sorted as Go serialises a map. */
export function resourceListObject(list: ResourceList): Record<string, string> {
  return Object.fromEntries([...list].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const negated = (q: string): string => (q.startsWith('-') ? q.slice(1) : `-${q}`);

/** quota.Add: every resource of either list, summed where both have it. */
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out = new Map(a);
  for (const [k, v] of b) {
    const current = out.get(k);
    out.set(k, current === undefined ? canonicalQuantity(v) : (addQuantities(current, v) ?? current));
  }
  return out;
}

/** quota.SubtractWithNonNegativeResult: a - b per resource of `a` (and of `b`), never below zero. */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const k of new Set([...a.keys(), ...b.keys()])) {
    const difference = addQuantities(a.get(k) ?? '0', negated(canonicalQuantity(b.get(k) ?? '0'))) ?? '0';
    out.set(k, compareQuantities(difference, '0') === -1 ? '0' : difference);
  }
  return out;
}

/** quota.Mask: only the named resources. */
export function maskList(list: ResourceList, names: Iterable<string>): ResourceList {
  const keep = new Set(names);
  return new Map([...list].filter(([k]) => keep.has(k)));
}

/** quota.RemoveZeros. */
export function removeZeros(list: ResourceList): ResourceList {
  return new Map([...list].filter(([, v]) => compareQuantities(v, '0') !== 0));
}

/** quota.IsNegative: the resources below zero. */
export function negativeResources(list: ResourceList): string[] {
  return [...list].filter(([, v]) => compareQuantities(v, '0') === -1).map(([k]) => k);
}

/** quota.LessThanOrEqual: whether every resource of `a` that `b` limits is within it, and those that are not. */
export function exceededResources(a: ResourceList, b: ResourceList): string[] {
  const exceeded: string[] = [];
  for (const [k, v] of a) {
    const limit = b.get(k);
    if (limit !== undefined && compareQuantities(v, limit) === 1) exceeded.push(k);
  }
  return exceeded;
}

/** Whether two lists hold the same resources at equal quantities (quota.Equals). */
export function listsEqual(a: ResourceList, b: ResourceList): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const other = b.get(k);
    if (other === undefined || compareQuantities(v, other) !== 0) return false;
  }
  return true;
}

/** prettyPrint: `name=quantity` pairs sorted by name, comma-joined. */
export function prettyPrint(list: ResourceList): string {
  return [...list]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${canonicalQuantity(v)}`)
    .join(',');
}
