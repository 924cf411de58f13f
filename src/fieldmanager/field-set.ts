import { comparePathElements, serializePathElement, type PathElement } from './path-element.js';

/** A field path: the elements from the object's root to one field. */
export type FieldPath = readonly PathElement[];

interface Child {
  readonly pe: PathElement;
  readonly set: FieldSet;
}

/**
 * A set of field paths as structured-merge-diff's fieldpath.Set keeps it: a tree whose nodes hold
 * the members at that level and the subtrees below them. A path is a member only when inserted:
 * inserting `a.b` does not make `a` a member. Operations return new sets and never share subtrees
 * with their inputs, except the ones named "in place" (`remove`, `removeRecursively`), which change
 * this set and are for sets nobody else holds (a comparison's fresh output, never a decoded entry).
 *
 * A node makes its two maps on first use: most nodes of an object's set are leaves' parents with
 * members only, or paths with children only.
 */
export class FieldSet {
  private members: Map<string, PathElement> | undefined = undefined;
  private children: Map<string, Child> | undefined = undefined;

  /** A set holding exactly `paths`. */
  static of(...paths: FieldPath[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds `path` (the empty path, the whole object, is not tracked, as in structured-merge-diff). */
  insert(path: FieldPath): void {
    const last = path.length - 1;
    if (last < 0) return;
    let node = last === 0 ? undefined : this.descend(path[0]);
    for (let i = 1; i < last; i++) node = node?.descend(path[i]);
    (node ?? this).insertMember(path[last]);
  }

  /** Marks `pe` a member at this level; `key` is its string form, when the caller has it already. */
  insertMember(pe: PathElement, key: string = serializePathElement(pe)): void {
    (this.members ??= new Map<string, PathElement>()).set(key, pe);
  }

  /** The subtree under `pe`, created when missing; `key` is its string form, when the caller has it already. */
  descend(pe: PathElement, key: string = serializePathElement(pe)): FieldSet {
    const children = (this.children ??= new Map<string, Child>());
    const existing = children.get(key);
    if (existing) return existing.set;
    const set = new FieldSet();
    children.set(key, { pe, set });
    return set;
  }

  /** Drops the subtree under the element whose string form is `key` when it holds no path. */
  pruneChild(key: string): void {
    const c = this.children?.get(key);
    if (c !== undefined && c.set.empty()) this.children?.delete(key);
  }

  /** True when `path` was inserted. */
  has(path: FieldPath): boolean {
    const node = path.slice(0, -1).reduce<FieldSet | undefined>((n, pe) => n?.children?.get(serializePathElement(pe))?.set, this);
    const last = path[path.length - 1];
    return node !== undefined && last !== undefined && node.members?.has(serializePathElement(last)) === true;
  }

  /** True when no path is a member (empty subtrees do not count). */
  empty(): boolean {
    if (this.members !== undefined && this.members.size > 0) return false;
    if (this.children !== undefined) for (const c of this.children.values()) if (!c.set.empty()) return false;
    return true;
  }

  /** Every path in `this` or `other`. */
  union(other: FieldSet): FieldSet {
    const out = this.clone();
    out.addAll(other);
    return out;
  }

  /** Adds every path of `other` to this set. */
  absorb(other: FieldSet): void {
    this.addAll(other);
  }

  /** True when some path is a member of both sets (what makes `difference` drop something). */
  intersects(other: FieldSet): boolean {
    if (this.members !== undefined && other.members !== undefined) for (const k of this.members.keys()) if (other.members.has(k)) return true;
    if (this.children !== undefined && other.children !== undefined)
      for (const [k, c] of this.children) {
        const o = other.children.get(k);
        if (o !== undefined && c.set.intersects(o.set)) return true;
      }
    return false;
  }

  /** True when `pe` is a member at this level. */
  hasMember(pe: PathElement): boolean {
    return this.members?.has(serializePathElement(pe)) === true;
  }

  /** The paths below `pe` (without `pe` itself), as fieldpath.Set.WithPrefix; undefined when none. */
  child(pe: PathElement): FieldSet | undefined {
    const c = this.children?.get(serializePathElement(pe));
    return c === undefined || c.set.empty() ? undefined : c.set;
  }

  private addAll(other: FieldSet): void {
    if (other.members !== undefined) for (const [k, pe] of other.members) this.insertMember(pe, k);
    if (other.children !== undefined) for (const [k, c] of other.children) this.descend(c.pe, k).addAll(c.set);
  }

  /** A deep copy. */
  clone(): FieldSet {
    const out = new FieldSet();
    out.addAll(this);
    return out;
  }

  /** Paths of `this` not in `other`; children of a removed member stay (fieldpath.Set.Difference). */
  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    if (this.members !== undefined) for (const [k, pe] of this.members) if (other.members?.has(k) !== true) out.insertMember(pe, k);
    if (this.children !== undefined)
      for (const [k, c] of this.children) {
        const o = other.children?.get(k);
        const diff = o ? c.set.difference(o.set) : c.set.clone();
        if (!diff.empty()) (out.children ??= new Map<string, Child>()).set(k, { pe: c.pe, set: diff });
      }
    return out;
  }

  /** Paths of `this` neither in `other` nor below a member of `other` (fieldpath.Set.RecursiveDifference). */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    if (this.members !== undefined) for (const [k, pe] of this.members) if (other.members?.has(k) !== true) out.insertMember(pe, k);
    if (this.children !== undefined)
      for (const [k, c] of this.children) {
        if (other.members?.has(k) === true) continue;
        const o = other.children?.get(k);
        const diff = o ? c.set.recursiveDifference(o.set) : c.set.clone();
        if (!diff.empty()) (out.children ??= new Map<string, Child>()).set(k, { pe: c.pe, set: diff });
      }
    return out;
  }

  /** `difference`, in place: removes the paths of `other` from this set (see the class comment). */
  remove(other: FieldSet): void {
    if (this.members !== undefined && other.members !== undefined) for (const k of other.members.keys()) this.members.delete(k);
    if (this.children !== undefined)
      for (const [k, c] of this.children) {
        const o = other.children?.get(k);
        if (o !== undefined) c.set.remove(o.set);
        if (c.set.empty()) this.children.delete(k);
      }
  }

  /** `recursiveDifference`, in place: removes the paths of `other` and everything below its members. */
  removeRecursively(other: FieldSet): void {
    if (this.members !== undefined && other.members !== undefined) for (const k of other.members.keys()) this.members.delete(k);
    if (this.children !== undefined)
      for (const [k, c] of this.children) {
        if (other.members?.has(k) === true) {
          this.children.delete(k);
          continue;
        }
        const o = other.children?.get(k);
        if (o !== undefined) c.set.removeRecursively(o.set);
        if (c.set.empty()) this.children.delete(k);
      }
  }

  /** Paths in both sets. */
  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    if (this.members !== undefined && other.members !== undefined) for (const [k, pe] of this.members) if (other.members.has(k)) out.insertMember(pe, k);
    if (this.children !== undefined && other.children !== undefined)
      for (const [k, c] of this.children) {
        const o = other.children.get(k);
        if (!o) continue;
        const inter = c.set.intersection(o.set);
        if (!inter.empty()) (out.children ??= new Map<string, Child>()).set(k, { pe: c.pe, set: inter });
      }
    return out;
  }

  /** True when both sets hold the same paths. */
  equals(other: FieldSet): boolean {
    return this.covers(other) && other.covers(this);
  }

  /** True when every path of `other` is in this set (without building a set). */
  covers(other: FieldSet): boolean {
    if (other.members !== undefined) for (const k of other.members.keys()) if (this.members?.has(k) !== true) return false;
    if (other.children !== undefined)
      for (const [k, o] of other.children) {
        const c = this.children?.get(k);
        if (c === undefined ? !o.set.empty() : !c.set.covers(o.set)) return false;
      }
    return true;
  }

  /**
   * Every member path, in structured-merge-diff's Set.Iterate order: at each level the members
   * first (sorted by path element), then each subtree (sorted) in turn.
   */
  paths(): FieldPath[] {
    const out: FieldPath[] = [];
    this.collect([], out);
    return out;
  }

  private collect(prefix: PathElement[], out: FieldPath[]): void {
    const entries = this.entries();
    for (const { pe, member } of entries) if (member) out.push([...prefix, pe]);
    for (const { pe, child } of entries) child?.collect([...prefix, pe], out);
  }

  /**
   * The members and non-empty subtrees at this level, merged and sorted by path element, each with
   * its string form, whether it is a member and its subtree if any (what fieldsV1 writes, key by key).
   */
  entries(): FieldSetEntry[] {
    const out: FieldSetEntry[] = [];
    const { members, children } = this;
    if (members !== undefined)
      for (const [key, pe] of members) {
        const c = children?.get(key);
        out.push({ pe, key, member: true, child: c === undefined || c.set.empty() ? undefined : c.set });
      }
    if (children !== undefined)
      for (const [key, c] of children) if (members?.has(key) !== true && !c.set.empty()) out.push({ pe: c.pe, key, member: false, child: c.set });
    if (out.length > 1) out.sort(byElement);
    return out;
  }
}

function byElement(a: FieldSetEntry, b: FieldSetEntry): number {
  return comparePathElements(a.pe, b.pe);
}

/** One element of a set's level: see FieldSet.entries. */
export interface FieldSetEntry {
  pe: PathElement;
  /** The element's string form (its fieldsV1 key). */
  key: string;
  member: boolean;
  child: FieldSet | undefined;
}
