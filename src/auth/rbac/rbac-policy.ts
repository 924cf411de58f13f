import { metadataOf, objectKey, stringField, type Obj } from '../../api/object-util.js';
import { WatchedCollection } from '../../storage/watched-collection.js';
import type { Storage } from '../../storage/storage.js';
import type { User } from '../../api/user.js';
import { roleRefOf, rulesOf, subjectsOf, type PolicyRule, type RoleRef, type Subject } from './policy-rule.js';

/** Storage types of the RBAC API (resource.group). */
export const RBAC_TYPES = {
  roles: 'roles.rbac.authorization.k8s.io',
  clusterRoles: 'clusterroles.rbac.authorization.k8s.io',
  roleBindings: 'rolebindings.rbac.authorization.k8s.io',
  clusterRoleBindings: 'clusterrolebindings.rbac.authorization.k8s.io',
} as const;

/** Where a rule came from, described as kube's RBAC describes a binding in its "allowed by" reason. */
export type RuleSource = () => string;

/** Called with each rule that applies (and each resolution error); return false to stop visiting. */
export type RuleVisitor = (source: RuleSource | undefined, rule: PolicyRule | undefined, error: string | undefined) => boolean;

/** The RBAC objects an authorizer decides from. */
export interface PolicySource {
  role(namespace: string, name: string): Obj | undefined;
  clusterRole(name: string): Obj | undefined;
  roleBindings(namespace: string): Iterable<Obj>;
  clusterRoleBindings(): Iterable<Obj>;
}

/** kube's username of a service account. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

function appliesToUser(user: User, s: Subject, namespace: string): boolean {
  switch (s.kind) {
    case 'User':
      return user.name === s.name;
    case 'Group':
      return user.groups.includes(s.name);
    case 'ServiceAccount': {
      const ns = s.namespace || namespace;
      return ns !== '' && user.name === serviceAccountUsername(ns, s.name);
    }
    default:
      return false;
  }
}

/**
 * kube's RBAC rule resolution over a policy source: the rules of every ClusterRoleBinding naming the
 * user, then (for a namespace) of every RoleBinding there naming the user, each with its source.
 * A binding whose role is missing reports kube's not-found error and grants nothing.
 */
export class RuleResolver {
  constructor(private readonly policy: PolicySource) {}

  /** The rules a role reference grants in `bindingNamespace` ('' for a cluster binding), or kube's error. */
  roleReferenceRules(ref: RoleRef, bindingNamespace: string): PolicyRule[] | string {
    if (ref.kind === 'Role') {
      const role = this.policy.role(bindingNamespace, ref.name);
      return role === undefined ? `role.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found` : rulesOf(role);
    }
    if (ref.kind === 'ClusterRole') {
      const role = this.policy.clusterRole(ref.name);
      return role === undefined ? `clusterrole.rbac.authorization.k8s.io ${JSON.stringify(ref.name)} not found` : rulesOf(role);
    }
    return `unsupported role reference kind: ${JSON.stringify(ref.kind)}`;
  }

  visitRulesFor(user: User, namespace: string, visit: RuleVisitor): void {
    for (const binding of this.policy.clusterRoleBindings()) {
      if (!this.visitBinding(user, binding, '', visit)) return;
    }
    if (namespace === '') return;
    for (const binding of this.policy.roleBindings(namespace)) {
      if (!this.visitBinding(user, binding, namespace, visit)) return;
    }
  }

  /** Every rule that applies to `user` in `namespace`, and the resolution errors met. */
  rulesFor(user: User, namespace: string): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visitRulesFor(user, namespace, (_s, rule, err) => {
      if (rule !== undefined) rules.push(rule);
      if (err !== undefined) errors.push(err);
      return true;
    });
    return { rules, errors };
  }

  private visitBinding(user: User, binding: Obj, namespace: string, visit: RuleVisitor): boolean {
    const subject = subjectsOf(binding).find((s) => appliesToUser(user, s, namespace));
    if (subject === undefined) return true;
    const ref = roleRefOf(binding);
    const rules = this.roleReferenceRules(ref, namespace);
    if (typeof rules === 'string') return visit(undefined, undefined, rules);
    const name = stringField(metadataOf(binding), 'name');
    const source: RuleSource =
      namespace === ''
        ? () => `ClusterRoleBinding ${JSON.stringify(name)} of ${ref.kind} ${JSON.stringify(ref.name)} to ${describeSubject(subject, '')}`
        : () => `RoleBinding ${JSON.stringify(`${name}/${namespace}`)} of ${ref.kind} ${JSON.stringify(ref.name)} to ${describeSubject(subject, namespace)}`;
    for (const rule of rules) if (!visit(source, rule, undefined)) return false;
    return true;
  }
}

/**
 * The RBAC objects of one storage, kept current by watching the four RBAC types (every process keeps
 * its own copy, fed from the storage's change streams, so a change made through any worker or pod
 * reaches every authorizer). Nothing is derived and cached beyond the objects themselves, so a
 * decision never outlives the change that revokes it by more than the stream's delivery.
 */
export class WatchedPolicy implements PolicySource {
  private readonly abort = new AbortController();
  private readonly collections: Record<keyof typeof RBAC_TYPES, WatchedCollection>;

  constructor(storage: Storage, onError: (err: unknown) => void) {
    const watch = (type: string): WatchedCollection => new WatchedCollection(storage, type, () => undefined, this.abort.signal, onError);
    this.collections = {
      roles: watch(RBAC_TYPES.roles),
      clusterRoles: watch(RBAC_TYPES.clusterRoles),
      roleBindings: watch(RBAC_TYPES.roleBindings),
      clusterRoleBindings: watch(RBAC_TYPES.clusterRoleBindings),
    };
  }

  /** Lists the four types and starts watching them; resolves once every cache holds the listed state. */
  async start(): Promise<void> {
    await Promise.all(Object.values(this.collections).map((c) => c.start()));
  }

  stop(): void {
    this.abort.abort();
  }

  role(namespace: string, name: string): Obj | undefined {
    return namespace === '' ? undefined : this.collections.roles.get(objectKey(namespace, name));
  }

  clusterRole(name: string): Obj | undefined {
    return this.collections.clusterRoles.get(objectKey('', name));
  }

  roleBindings(namespace: string): Iterable<Obj> {
    return this.collections.roleBindings.inNamespace(namespace);
  }

  clusterRoleBindings(): Iterable<Obj> {
    return this.collections.clusterRoleBindings.inNamespace('');
  }
}
