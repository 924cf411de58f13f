import { forbidden, notFound } from '../../api/errors.js';
import { isObject, jsonEqual, metadataOf, stringField, type Obj } from '../../api/object-util.js';
import type { Authorizer } from '../authorizer.js';
import type { User } from '../../api/user.js';
import { roleRefOf, rulesOf, type PolicyRule, type RoleRef } from './policy-rule.js';
import type { RuleResolver } from './rbac-policy.js';
import { aggregateErrors } from './rbac-authorizer.js';
import { uncoveredRules } from './rule-coverage.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** Go's %q of a string list: `["a" "b"]`. */
function goQuoteList(list: readonly string[]): string {
  return `[${list.map((s) => JSON.stringify(s)).join(' ')}]`;
}

/** kube's CompactString of a rule: `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if ((r.apiGroups ?? []).length > 0) parts.push(`APIGroups:${goQuoteList(r.apiGroups ?? [])}`);
  if ((r.resources ?? []).length > 0) parts.push(`Resources:${goQuoteList(r.resources ?? [])}`);
  if ((r.nonResourceURLs ?? []).length > 0) parts.push(`NonResourceURLs:${goQuoteList(r.nonResourceURLs ?? [])}`);
  if ((r.resourceNames ?? []).length > 0) parts.push(`ResourceNames:${goQuoteList(r.resourceNames ?? [])}`);
  if (r.verbs.length > 0) parts.push(`Verbs:${goQuoteList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** kube's CompactRules: broken-down rules on one (group, resource, name) merged into one rule with their verbs. */
function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const names = r.resourceNames ?? [];
    const isSimple = names.length <= 1 && (r.nonResourceURLs ?? []).length === 0 && (r.apiGroups ?? []).length === 1 && (r.resources ?? []).length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups, r.resources, names.length > 0, names[0] ?? '']);
    const existing = simple.get(key);
    if (existing !== undefined) existing.verbs.push(...r.verbs);
    else simple.set(key, { ...r, verbs: [...r.verbs] });
  }
  return [...out, ...simple.values()];
}

/**
 * kube's ConfirmNoEscalation: undefined when `user` holds every permission of `rules` in `namespace`,
 * else kube's message listing the missing permissions (sorted, compacted).
 */
export function escalationError(resolver: RuleResolver, user: User, namespace: string, rules: readonly PolicyRule[]): string | undefined {
  const owned = resolver.rulesFor(user, namespace);
  const missing = uncoveredRules(owned.rules, rules);
  if (missing.length === 0) return undefined;
  const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
  if (owned.errors.length > 0) msg += `; resolution errors: [${aggregateErrors(owned.errors)}]`;
  return msg;
}

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

function hasAggregationRule(role: Obj | undefined): boolean {
  return (
    role !== undefined &&
    isObject(role.aggregationRule) &&
    Array.isArray(role.aggregationRule.clusterRoleSelectors) &&
    role.aggregationRule.clusterRoleSelectors.length > 0
  );
}

/** kube's IsOnlyMutatingGCFields: the update changes nothing but owner references, finalizers and managed fields. */
function onlyGCFields(next: Obj, old: Obj): boolean {
  const copy = structuredClone(next);
  const meta = metadataOf(copy);
  const oldMeta = metadataOf(old);
  for (const f of ['ownerReferences', 'finalizers', 'selfLink', 'managedFields', 'resourceVersion']) {
    if (oldMeta[f] === undefined) delete meta[f];
    else meta[f] = oldMeta[f];
  }
  return jsonEqual(copy, old);
}

/** The request a write to an RBAC object is checked for. */
export interface RbacWrite {
  user: User;
  authorizer: Authorizer;
  resolver: RuleResolver;
  /** roles, clusterroles, rolebindings or clusterrolebindings. */
  resource: string;
  namespace: string;
  /** The object's name from the URL (updates) or body (creates). */
  name: string;
}

async function allowed(w: RbacWrite, verb: string, resource: string, name: string): Promise<boolean> {
  const d = await w.authorizer.authorize({
    user: w.user,
    verb,
    resourceRequest: true,
    apiGroup: RBAC_GROUP,
    apiVersion: '*',
    namespace: w.namespace,
    resource,
    subresource: '',
    name,
    path: '',
  });
  return d.allowed;
}

async function checkRole(w: RbacWrite, role: Obj, old: Obj | undefined): Promise<void> {
  if (await allowed(w, 'escalate', w.resource, w.name)) return;
  const qr = { group: RBAC_GROUP, resource: w.resource };
  const name = stringField(metadataOf(role), 'name');
  const err = escalationError(w.resolver, w.user, w.namespace, rulesOf(role));
  if (err !== undefined) throw forbidden(qr, name, err);
  if (w.resource === 'clusterroles' && (hasAggregationRule(role) || hasAggregationRule(old))) {
    if (escalationError(w.resolver, w.user, w.namespace, FULL_AUTHORITY) !== undefined)
      throw forbidden(qr, name, 'must have cluster-admin privileges to use the aggregationRule');
  }
}

async function checkBinding(w: RbacWrite, binding: Obj): Promise<void> {
  const ref: RoleRef = roleRefOf(binding);
  const resource = ref.kind === 'ClusterRole' ? 'clusterroles' : ref.kind === 'Role' ? 'roles' : '';
  if (resource !== '' && (await allowed(w, 'bind', resource, ref.name))) return;
  const rules = w.resolver.roleReferenceRules(ref, w.namespace);
  const qr = { group: RBAC_GROUP, resource: w.resource };
  const name = stringField(metadataOf(binding), 'name');
  // kube resolves the role through its registry, within the binding request: a missing role is a
  // 404 naming the role under the binding's resource.
  if (typeof rules === 'string') throw resource === '' ? forbidden(qr, name, rules) : notFound(qr, ref.name);
  const err = escalationError(w.resolver, w.user, w.namespace, rules);
  if (err !== undefined) throw forbidden(qr, name, err);
}

/**
 * kube's escalation prevention for writes of RBAC objects: members of system:masters may write
 * anything; a Role or ClusterRole may grant only what its writer holds unless the writer may
 * `escalate` it (an aggregationRule needs full authority); a binding may grant only what its writer
 * holds unless the writer may `bind` the role. Refusals are 403 with kube's messages. Updates that
 * only touch garbage-collection fields are not checked.
 */
export async function confirmNoEscalation(w: RbacWrite, obj: Obj, old?: Obj): Promise<void> {
  if (w.user.groups.includes('system:masters')) return;
  if (old !== undefined && onlyGCFields(obj, old)) return;
  if (w.resource === 'roles' || w.resource === 'clusterroles') return checkRole(w, obj, old);
  return checkBinding(w, obj);
}
