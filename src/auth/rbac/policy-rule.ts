import { isObject, type Obj } from '../../api/object-util.js';
import type { AuthorizationAttributes } from '../authorizer.js';

/** One rule of a Role or ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** A subject of a binding. */
export interface Subject {
  kind: string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

/** The role a binding grants. */
export interface RoleRef {
  kind: string;
  name: string;
  apiGroup: string;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

// Parsed forms keyed by the stored object itself: a changed role or binding is a new object, so a
// parse never outlives the version it was made from.
const parsedRules = new WeakMap<Obj, PolicyRule[]>();
const parsedSubjects = new WeakMap<Obj, Subject[]>();

/** The rules of a stored Role or ClusterRole (malformed entries dropped); do not modify the result. */
export function rulesOf(role: Obj | undefined): PolicyRule[] {
  if (role === undefined || !Array.isArray(role.rules)) return [];
  let rules = parsedRules.get(role);
  if (rules === undefined) {
    rules = parseRules(role.rules);
    parsedRules.set(role, rules);
  }
  return rules;
}

function parseRules(list: unknown[]): PolicyRule[] {
  const rules: PolicyRule[] = [];
  for (const r of list) {
    if (!isObject(r)) continue;
    const rule: PolicyRule = { verbs: strings(r.verbs) ?? [] };
    for (const field of ['apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const) {
      const v = strings(r[field]);
      if (v !== undefined) rule[field] = v;
    }
    rules.push(rule);
  }
  return rules;
}

/** The subjects of a stored binding; do not modify the result. */
export function subjectsOf(binding: Obj): Subject[] {
  if (!Array.isArray(binding.subjects)) return [];
  let subjects = parsedSubjects.get(binding);
  if (subjects === undefined) {
    subjects = parseSubjects(binding.subjects);
    parsedSubjects.set(binding, subjects);
  }
  return subjects;
}

function parseSubjects(list: unknown[]): Subject[] {
  return list.filter(isObject).map((s) => ({
    kind: typeof s.kind === 'string' ? s.kind : '',
    name: typeof s.name === 'string' ? s.name : '',
    namespace: typeof s.namespace === 'string' ? s.namespace : undefined,
    apiGroup: typeof s.apiGroup === 'string' ? s.apiGroup : undefined,
  }));
}

/** The role reference of a stored binding. */
export function roleRefOf(binding: Obj): RoleRef {
  const r = isObject(binding.roleRef) ? binding.roleRef : {};
  return {
    kind: typeof r.kind === 'string' ? r.kind : '',
    name: typeof r.name === 'string' ? r.name : '',
    apiGroup: typeof r.apiGroup === 'string' ? r.apiGroup : '',
  };
}

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.includes('*') || rule.verbs.includes(verb);
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  const groups = rule.apiGroups ?? [];
  return groups.includes('*') || groups.includes(group);
}

/** `combined` is `resource` or `resource/subresource`; a rule's `*\/sub` matches any resource's `sub`. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    if (subresource !== '' && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(name);
}

/** A non-resource URL rule matches exactly, `*`, or as a prefix when it ends in `*`. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  for (const u of rule.nonResourceURLs ?? []) {
    if (u === '*' || u === path) return true;
    if (u.endsWith('*') && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

/** Whether `rule` allows the request, as kube's RBAC RuleAllows decides. */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (a.resourceRequest) {
    const combined = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
    return (
      verbMatches(rule, a.verb) && apiGroupMatches(rule, a.apiGroup) && resourceMatches(rule, combined, a.subresource) && resourceNameMatches(rule, a.name)
    );
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path);
}
