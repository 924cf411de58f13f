import type { Obj } from '../api/object-util.js';
import { semanticEqual } from '../validation/semantic-equal.js';
import { asString } from '../api/values.js';

/**
 * Whether toleration `ss` tolerates everything `t` does (kube's util/tolerations isSuperset): same or
 * wildcard key, same or empty effect, a NoExecute window no shorter, and an operator that covers `t`'s.
 */
export function tolerationCovers(ss: Obj, t: Obj): boolean {
  if (semanticEqual(ss, t)) return true;
  if (asString(t.key) !== asString(ss.key) && (asString(ss.key) !== '' || ss.operator !== 'Exists')) return false;
  if (asString(t.effect) !== asString(ss.effect) && asString(ss.effect) !== '') return false;
  if (ss.effect === 'NoExecute' && typeof ss.tolerationSeconds === 'number') {
    if (typeof t.tolerationSeconds !== 'number' || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  switch (asString(ss.operator)) {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && asString(t.value) === asString(ss.value);
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/**
 * kube's MergeTolerations: `first` then `second`, without the tolerations another one (kept earlier,
 * or a different one later) already covers. Order is kept.
 */
export function mergeTolerations(first: Obj[], second: Obj[]): Obj[] {
  const all = [...first, ...second];
  const merged: Obj[] = [];
  all.forEach((t, i) => {
    if (merged.some((kept) => tolerationCovers(kept, t))) return;
    if (all.slice(i + 1).some((later) => !semanticEqual(t, later) && tolerationCovers(later, t))) return;
    merged.push(t);
  });
  return merged;
}
