import { metadataOf, objectKey, stringField, type Obj } from '../../api/object-util.js';
import { WatchedCollection, type CollectionChange } from '../../storage/watched-collection.js';
import { BindingsBySubject } from './bindings-by-subject.js';
import type { Storage } from '../../storage/storage.js';
import { serviceAccountUsername, type User } from '../../api/user.js';
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
  /**
   * The RoleBindings of `namespace` that may name `user` (every one that does, perhaps some that do
   * not), in the namespace's listing order.
   */
  roleBindingsFor(namespace: string, user: User): Iterable<Obj>;
  /** The ClusterRoleBindings that may name `user`, as roleBindingsFor. */
  clusterRoleBindingsFor(user: User): Iterable<Obj>;
}

function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount') return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

/**
 * How kube's "allowed by" reason describes a binding through one of its subjects, by subject. A
 * subject object belongs to one version of one binding (subjectsOf parses each version anew), whose
 * name, namespace and role reference the description is made of.
 */
const descriptions = new WeakMap<Subject, string>();

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
    for (const binding of this.policy.clusterRoleBindingsFor(user)) {
      if (!this.visitBinding(user, binding, '', visit)) return;
    }
    if (namespace === '') return;
    for (const binding of this.policy.roleBindingsFor(namespace, user)) {
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
    const source: RuleSource = () => {
      let described = descriptions.get(subject);
      if (described === undefined) {
        const name = stringField(metadataOf(binding), 'name');
        described =
          namespace === ''
            ? `ClusterRoleBinding ${JSON.stringify(name)} of ${ref.kind} ${JSON.stringify(ref.name)} to ${describeSubject(subject, '')}`
            : `RoleBinding ${JSON.stringify(`${name}/${namespace}`)} of ${ref.kind} ${JSON.stringify(ref.name)} to ${describeSubject(subject, namespace)}`;
        descriptions.set(subject, described);
      }
      return described;
    };
    for (const rule of rules) if (!visit(source, rule, undefined)) return false;
    return true;
  }
}

/**
 * The RBAC objects of one storage, kept current by watching the four RBAC types (every process keeps
 * its own copy, fed from the storage's change streams, so a change made through any worker or pod
 * reaches every authorizer). Derived from them: the bindings of each scope by subject
 * (BindingsBySubject), dropped by any change of that scope's bindings as the change is applied, so a
 * decision never outlives the change that revokes it by more than the stream's delivery.
 */
export class WatchedPolicy implements PolicySource {
  private readonly abort = new AbortController();
  private readonly collections: Record<keyof typeof RBAC_TYPES, WatchedCollection>;

  /** The ClusterRoleBindings by subject; undefined until asked for and after any of them changed. */
  private clusterIndex: BindingsBySubject | undefined;
  /** The RoleBindings of each namespace asked about by subject; a namespace's is dropped when one of its bindings changes. */
  private readonly namespaceIndexes = new Map<string, BindingsBySubject>();

  constructor(storage: Storage, onError: (err: unknown) => void) {
    const watch = (type: string, onChange: (change: CollectionChange) => void = () => undefined): WatchedCollection =>
      new WatchedCollection(storage, type, onChange, this.abort.signal, onError);
    this.collections = {
      roles: watch(RBAC_TYPES.roles),
      clusterRoles: watch(RBAC_TYPES.clusterRoles),
      roleBindings: watch(RBAC_TYPES.roleBindings, (change) => this.namespaceIndexes.delete(change.namespace)),
      clusterRoleBindings: watch(RBAC_TYPES.clusterRoleBindings, () => (this.clusterIndex = undefined)),
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

  roleBindingsFor(namespace: string, user: User): Iterable<Obj> {
    const bindings = this.collections.roleBindings;
    if (!bindings.hasNamespace(namespace)) return [];
    let index = this.namespaceIndexes.get(namespace);
    if (index === undefined) {
      index = new BindingsBySubject(bindings.inNamespace(namespace), namespace);
      this.namespaceIndexes.set(namespace, index);
    }
    return index.for(user);
  }

  clusterRoleBindingsFor(user: User): Iterable<Obj> {
    this.clusterIndex ??= new BindingsBySubject(this.collections.clusterRoleBindings.inNamespace(''), '');
    return this.clusterIndex.for(user);
  }
}
