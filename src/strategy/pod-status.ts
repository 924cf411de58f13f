import { isObject, type Obj } from '../api/object-util.js';

/** `ips` ([{ip}]) filled from the single `ip` when only that is set, and the other way round. */
function pairIps(status: Obj, single: string, plural: string): void {
  const one = status[single];
  const many = status[plural];
  const list = Array.isArray(many) ? many : [];
  if (typeof one === 'string' && one !== '' && list.length === 0) status[plural] = [{ ip: one }];
  else if ((one === undefined || one === '') && list.length > 0 && isObject(list[0]) && typeof list[0].ip === 'string') status[single] = list[0].ip;
}

/**
 * A pod status as kube-apiserver stores what a status write sent: v1's conversion fills `podIPs`
 * from `podIP` (and `hostIPs` from `hostIP`) when only the single address is sent, and the other
 * way round; a condition's unset `lastProbeTime` and `lastTransitionTime` are Go's zero times,
 * written as null.
 */
export function canonicalizePodStatus(pod: Obj): void {
  const status = pod.status;
  if (!isObject(status)) return;
  pairIps(status, 'podIP', 'podIPs');
  pairIps(status, 'hostIP', 'hostIPs');
  if (Array.isArray(status.conditions)) {
    for (const c of status.conditions) {
      if (!isObject(c)) continue;
      c.lastProbeTime ??= null;
      c.lastTransitionTime ??= null;
    }
  }
}
