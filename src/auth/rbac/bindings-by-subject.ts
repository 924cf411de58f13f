import type { Obj } from '../../api/object-util.js';
import { serviceAccountUsername, type User } from '../../api/user.js';
import { subjectsOf } from './policy-rule.js';

/**
 * The bindings of one scope (the cluster, or one namespace) by the users and groups their subjects
 * name, so that a request's authorization visits the few bindings that can name its user instead of
 * every binding: a cluster with hundreds of bindings costs each request no more than one with ten.
 *
 * Guarantees: `for(user)` holds every binding of the scope with a subject that applies to `user` by
 * RBAC's rules (a User of the user's name, a Group among the user's groups, a ServiceAccount whose
 * user name is the user's, its namespace defaulting to the binding's), each once, in the order the
 * scope listed them; it may hold bindings that do not apply (the caller still checks each subject).
 * Built from one listing of the scope: a change to the scope's bindings needs a new index.
 */
export class BindingsBySubject {
  private readonly byUser = new Map<string, number[]>();
  private readonly byGroup = new Map<string, number[]>();
  private readonly bindings: Obj[];
  /** The answers of `for` by user name and groups, most users asking again and again (bounded). */
  private readonly answers = new Map<string, Obj[]>();

  /** Indexes `bindings` (in their order), which live in `namespace` ('' for ClusterRoleBindings). */
  constructor(bindings: Iterable<Obj>, namespace: string) {
    this.bindings = [...bindings];
    this.bindings.forEach((binding, position) => {
      for (const s of subjectsOf(binding)) {
        if (s.kind === 'User') add(this.byUser, s.name, position);
        else if (s.kind === 'Group') add(this.byGroup, s.name, position);
        else if (s.kind === 'ServiceAccount') {
          const ns = s.namespace || namespace;
          if (ns !== '') add(this.byUser, serviceAccountUsername(ns, s.name), position);
        }
      }
    });
  }

  /** The bindings that may name `user`, in the scope's order. Do not modify the result. */
  for(user: User): Obj[] {
    // Each part length-prefixed: no two users' names and groups make the same key.
    let key = `${user.name.length}:${user.name}`;
    for (const group of user.groups) key += `${group.length}:${group}`;
    let answer = this.answers.get(key);
    if (answer === undefined) {
      answer = this.candidates(user);
      if (this.answers.size >= MAX_ANSWERS) this.answers.clear();
      this.answers.set(key, answer);
    }
    return answer;
  }

  private candidates(user: User): Obj[] {
    const lists: number[][] = [];
    const own = this.byUser.get(user.name);
    if (own !== undefined) lists.push(own);
    for (const group of user.groups) {
      const members = this.byGroup.get(group);
      if (members !== undefined) lists.push(members);
    }
    if (lists.length === 0) return [];
    if (lists.length === 1) return lists[0].map((p) => this.bindings[p]);
    const positions = [...new Set(lists.flat())].sort((a, b) => a - b);
    return positions.map((p) => this.bindings[p]);
  }
}

/** Distinct users (name and groups) whose answers an index keeps; beyond, it starts again. */
const MAX_ANSWERS = 1024;

/** Appends `position` to KEY's list unless it already ends with it (a binding naming a subject twice). */
function add(map: Map<string, number[]>, key: string, position: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [position]);
  else if (list[list.length - 1] !== position) list.push(position);
}
