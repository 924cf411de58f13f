import { FieldSet } from './field-set.js';
import { fieldEntry, keyElement, serializePathElement, type PathElement } from './path-element.js';
import type { SmdType } from './smd-type.js';

/** What changed between two versions of an object, as structured-merge-diff's Comparison reports it. */
export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

type Value = unknown;

function isMap(v: Value): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep equality of JSON values, numbers by value and maps regardless of key order. */
export function valuesEqual(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => valuesEqual(x, b[i]));
  }
  if (isMap(a) && isMap(b)) {
    const ak = Object.keys(a);
    if (ak.length !== Object.keys(b).length) return false;
    return ak.every((k) => Object.prototype.hasOwnProperty.call(b, k) && valuesEqual(a[k], b[k]));
  }
  return false;
}

/**
 * Compares `lhs` (the live object) with `rhs` (the new one) field by field under `type`, as
 * structured-merge-diff's TypedValue.Compare does: leaves (scalars, atomic maps and lists, and
 * maps or lists empty on both sides) are added, removed or modified as a whole; a map or list
 * present on one side only is itself added or removed along with what it holds; keyed and set list
 * items are matched by key or value, duplicates compared as a group. `null` is a present value.
 */
export function compareObjects(lhs: Value, rhs: Value, type: SmdType): Comparison {
  const added = new FieldSet();
  const modified = new FieldSet();
  const removed = new FieldSet();
  walk(lhs, rhs, type, new Cursor(undefined, undefined, '', [added, modified, removed]));
  return { added, modified, removed };
}

/** What changed between two versions, with added and modified fields in one set. */
export interface Changes {
  /** Added or modified fields. */
  changed: FieldSet;
  removed: FieldSet;
}

/** compareObjects with its added and modified sets as one (what the field manager records). */
export function compareChanges(lhs: Value, rhs: Value, type: SmdType): Changes {
  const changed = new FieldSet();
  const removed = new FieldSet();
  walk(lhs, rhs, type, new Cursor(undefined, undefined, '', [changed, changed, removed]));
  return { changed, removed };
}

const ADDED = 0;
const MODIFIED = 1;
const REMOVED = 2;

/**
 * One position of the walk: its element (with its string form) under its parent position, and,
 * per output set, the node of that set at this position, made on the first insertion below it, so
 * each element is serialised once and no path array is copied per field.
 */
class Cursor {
  private readonly nodes: (FieldSet | undefined)[];

  constructor(
    private readonly parent: Cursor | undefined,
    private readonly pe: PathElement | undefined,
    private readonly key: string,
    roots?: FieldSet[],
  ) {
    this.nodes = roots ?? [undefined, undefined, undefined];
  }

  /** The node of output `i` at this position. */
  private node(i: number): FieldSet {
    let n = this.nodes[i];
    if (n === undefined) {
      // Only the root has no parent, and its nodes are given.
      const parent = this.parent as Cursor;
      n = parent.node(i).descend(this.pe as PathElement, this.key);
      this.nodes[i] = n;
    }
    return n;
  }

  /** Adds this position's path to output `i` (the root, the empty path, is not tracked). */
  insert(i: number): void {
    if (this.parent !== undefined) this.parent.node(i).insertMember(this.pe as PathElement, this.key);
  }

  /** The position of child element `pe`, whose string form is `key`. */
  child(pe: PathElement, key: string): Cursor {
    return new Cursor(this, pe, key);
  }
}

function leaf(l: Value, r: Value, at: Cursor): void {
  if (l === undefined) at.insert(ADDED);
  else if (r === undefined) at.insert(REMOVED);
  else if (!valuesEqual(l, r)) at.insert(MODIFIED);
}

const mapLike = (v: Value): boolean => v === undefined || v === null || isMap(v);
const listLike = (v: Value): boolean => v === undefined || v === null || Array.isArray(v);

function hasKeys(m: Record<string, unknown> | undefined): boolean {
  if (m === undefined) return false;
  for (const k in m) if (Object.prototype.hasOwnProperty.call(m, k)) return true;
  return false;
}

function walk(l: Value, r: Value, type: SmdType, at: Cursor): void {
  // Equal values change nothing below them: one equality pass over what a write left alone (a
  // status write's spec and metadata) replaces the walk, its cursors and its keyed-list grouping.
  if (typeof l === 'object' && l !== null && r !== undefined && valuesEqual(l, r)) return;
  const sample = r !== undefined ? r : l;
  let isLeaf = true;
  if (type.kind === 'map' || type.kind === 'untyped') {
    // A value of another kind than the schema's (or a deduced scalar or list) is one leaf.
    if ((isMap(sample) || sample === null) && mapLike(l) && mapLike(r) && !(type.kind === 'untyped' && sample === null)) {
      const lm = isMap(l) ? l : undefined;
      const rm = isMap(r) ? r : undefined;
      if (!type.atomic && (hasKeys(lm) || hasKeys(rm))) {
        isLeaf = false;
        const visit = (k: string): void => {
          const childType: SmdType = type.kind === 'map' ? type.field(k) : type;
          const field = fieldEntry(k);
          walk(lm?.[k], rm?.[k], childType, at.child(field.pe, field.key));
        };
        if (rm !== undefined) for (const k of Object.keys(rm)) visit(k);
        if (lm !== undefined) for (const k of Object.keys(lm)) if (rm === undefined || !Object.prototype.hasOwnProperty.call(rm, k)) visit(k);
      }
    }
  } else if (type.kind === 'list') {
    if ((Array.isArray(sample) || sample === null) && listLike(l) && listLike(r)) {
      const ll = Array.isArray(l) ? l : [];
      const rl = Array.isArray(r) ? r : [];
      if (!type.atomic && (ll.length > 0 || rl.length > 0)) {
        isLeaf = false;
        visitListItems(type, ll, rl, at);
      }
    }
  }
  if (isLeaf) leaf(l, r, at);
  else if (l === undefined) at.insert(ADDED);
  else if (r === undefined) at.insert(REMOVED);
}

type ListType = Extract<SmdType, { kind: 'list' }>;

/** The element naming one list item: its key fields (with schema defaults) or its value; undefined when it has none. */
export function listItemElement(type: ListType, item: Value): PathElement | undefined {
  if (type.set) {
    if (isMap(item) || Array.isArray(item)) return undefined;
    return { kind: 'value', value: item };
  }
  if (!isMap(item)) return undefined;
  const fields: [string, unknown][] = [];
  for (const key of type.keys) {
    if (Object.prototype.hasOwnProperty.call(item, key)) fields.push([key, item[key]]);
    else {
      const def = type.keyDefault(key);
      if (def === undefined) return undefined;
      fields.push([key, def]);
    }
  }
  return keyElement(fields);
}

interface Group {
  pe: PathElement;
  items: Value[];
}

function groupItems(type: ListType, list: Value[]): Map<string, Group> {
  const groups = new Map<string, Group>();
  for (const item of list) {
    const pe = listItemElement(type, item);
    if (pe === undefined) continue;
    const k = serializePathElement(pe);
    const g = groups.get(k);
    if (g) g.items.push(item);
    else groups.set(k, { pe, items: [item] });
  }
  return groups;
}

function visitListItems(type: ListType, l: Value[], r: Value[], at: Cursor): void {
  const lg = groupItems(type, l);
  const rg = groupItems(type, r);
  const elem = type.elem();
  const visit = (k: string, left: Group | undefined, right: Group | undefined): void => {
    const pe = (right ?? left)?.pe;
    if (pe === undefined) return;
    const lList = left?.items ?? [];
    const rList = right?.items ?? [];
    const child = at.child(pe, k);
    if (lList.length <= 1 && rList.length <= 1) {
      walk(lList[0], rList[0], elem, child);
    } else if (lList.length >= 2 && rList.length >= 2) {
      if (!valuesEqual(lList, rList)) child.insert(MODIFIED);
    } else if (lList.length >= 2) {
      if (rList.length !== 0) walk(undefined, rList[0], elem, child);
      child.insert(REMOVED);
    } else {
      if (lList.length !== 0) walk(lList[0], undefined, elem, child);
      child.insert(ADDED);
    }
  };
  for (const [k, left] of lg) visit(k, left, rg.get(k));
  for (const [k, right] of rg) if (!lg.has(k)) visit(k, undefined, right);
}
