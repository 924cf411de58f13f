import type { PolicyRule } from './policy-rule.js';

/** One rule per (group, resource, verb, name) and per (URL, verb) of `rule`, as kube breaks rules down. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length > 0) for (const n of names) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [n] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

function hasAll(set: readonly string[], wanted: readonly string[]): boolean {
  return wanted.every((w) => set.includes(w));
}

function resourcesCover(owned: readonly string[], wanted: readonly string[]): boolean {
  if (owned.includes('*') || hasAll(owned, wanted)) return true;
  for (const path of wanted) {
    if (owned.includes(path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0 || !owned.includes(`*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function urlCovers(owner: string, sub: string): boolean {
  return owner === sub || (owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, '')));
}

/** kube's ruleCovers: whether `owner` grants everything the broken-down `sub` does. */
function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const ownerNames = owner.resourceNames ?? [];
  const subNames = sub.resourceNames ?? [];
  return (
    (owner.verbs.includes('*') || hasAll(owner.verbs, sub.verbs)) &&
    ((owner.apiGroups ?? []).includes('*') || hasAll(owner.apiGroups ?? [], sub.apiGroups ?? [])) &&
    resourcesCover(owner.resources ?? [], sub.resources ?? []) &&
    (sub.nonResourceURLs ?? []).every((u) => (owner.nonResourceURLs ?? []).some((o) => urlCovers(o, u))) &&
    (ownerNames.length === 0 || (subNames.length > 0 && hasAll(ownerNames, subNames)))
  );
}

/** kube's Covers: the broken-down rules of `wanted` that no rule of `owned` covers (empty: covered). */
export function uncoveredRules(owned: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const sub of wanted.flatMap(breakdownRule)) if (!owned.some((o) => ruleCovers(o, sub))) missing.push(sub);
  return missing;
}
