/**
 * The NoSchedule taints a Node's conditions and `spec.unschedulable` call for, as kube's node
 * lifecycle controller derives them (doNoScheduleTaintingPass), and the taint list that results from
 * adding the missing ones and removing the stale ones. Taints are matched by key and effect only.
 */
import { nowTimestamp, type Obj } from '../api/object-util.js';
import { asObject } from '../api/values.js';
import { objects } from '../validation/value-access.js';

export const NOT_READY_TAINT_KEY = 'node.kubernetes.io/not-ready';
export const UNREACHABLE_TAINT_KEY = 'node.kubernetes.io/unreachable';
export const UNSCHEDULABLE_TAINT_KEY = 'node.kubernetes.io/unschedulable';

/** Condition type → condition status → the taint key it calls for. */
const CONDITION_TAINTS: Record<string, Record<string, string>> = {
  Ready: { False: NOT_READY_TAINT_KEY, Unknown: UNREACHABLE_TAINT_KEY },
  MemoryPressure: { True: 'node.kubernetes.io/memory-pressure' },
  DiskPressure: { True: 'node.kubernetes.io/disk-pressure' },
  NetworkUnavailable: { True: 'node.kubernetes.io/network-unavailable' },
  PIDPressure: { True: 'node.kubernetes.io/pid-pressure' },
};

/** The taint keys the controller owns (with effect NoSchedule): the condition taints and the unschedulable one. */
const OWNED_KEYS = new Set([...Object.values(CONDITION_TAINTS).flatMap((m) => Object.values(m)), UNSCHEDULABLE_TAINT_KEY]);

/** The keys of the NoSchedule taints `node` should carry, in kube's order (conditions as listed, then unschedulable). */
export function conditionTaintKeys(node: Obj): string[] {
  const keys: string[] = [];
  for (const c of objects(asObject(node.status).conditions)) {
    const key = CONDITION_TAINTS[String(c.type)]?.[String(c.status)];
    if (key !== undefined) keys.push(key);
  }
  if (asObject(node.spec).unschedulable === true) keys.push(UNSCHEDULABLE_TAINT_KEY);
  return keys;
}

/**
 * The node's new `spec.taints` once the condition taints are brought in line (missing ones appended
 * with `timeAdded`, stale owned NoSchedule ones removed; other taints kept in place), or undefined
 * when nothing changes. An empty result means the node should have no taints.
 */
export function reconciledTaints(node: Obj, now: string = nowTimestamp()): Obj[] | undefined {
  const wanted = conditionTaintKeys(node);
  const current = objects(asObject(node.spec).taints);
  const owned = current.filter((t) => t.effect === 'NoSchedule' && OWNED_KEYS.has(String(t.key)));
  const has = (taints: Obj[], key: string): boolean => taints.some((t) => t.key === key && t.effect === 'NoSchedule');
  const toAdd = [...new Set(wanted)].filter((key) => !has(owned, key));
  const toRemove = new Set(owned.map((t) => String(t.key)).filter((key) => !wanted.includes(key)));
  if (toAdd.length === 0 && toRemove.size === 0) return undefined;
  const kept = current.filter((t) => !(t.effect === 'NoSchedule' && toRemove.has(String(t.key))));
  return [...kept, ...toAdd.map((key) => ({ key, effect: 'NoSchedule', timeAdded: now }))];
}
