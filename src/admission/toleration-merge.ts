import type { Obj } from '../api/object-util.js';
import { semanticEqual } from '../validation/semantic-equal.js';

function text(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/**
 * Whether toleration `ss` tolerates everything `t` does (kube's util/tolerations isSuperset): same or
 * wildcard key, same or empty effect, a NoExecute window no shorter, and an operator that covers `t`'s.
 */
export function tolerationCovers(ss: Obj, t: Obj): boolean {
  if (semanticEqual(ss, t)) return true;
  if (text(t.key) !== text(ss.key) && (text(ss.key) !== '' || ss.operator !== 'Exists')) return false;
  if (text(t.effect) !== text(ss.effect) && text(ss.effect) !== '') return false;
  if (ss.effect === 'NoExecute' && typeof ss.tolerationSeconds === 'number') {
    if (typeof t.tolerationSeconds !== 'number' || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  switch (text(ss.operator)) {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && text(t.value) === text(ss.value);
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
