import { FieldSet } from './field-set.js';
import { fieldElement, keyElement, serializePathElement, type PathElement } from './path-element.js';
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
  const out: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  walk(lhs, rhs, type, [], out);
  return out;
}

function leaf(l: Value, r: Value, path: PathElement[], out: Comparison): void {
  if (l === undefined) out.added.insert(path);
  else if (r === undefined) out.removed.insert(path);
  else if (!valuesEqual(l, r)) out.modified.insert(path);
}

function walk(l: Value, r: Value, type: SmdType, path: PathElement[], out: Comparison): void {
  const sample = r !== undefined ? r : l;
  let isLeaf = true;
  if (type.kind === 'map' || type.kind === 'untyped') {
    const mapLike = (v: Value): boolean => v === undefined || v === null || isMap(v);
    // A value of another kind than the schema's (or a deduced scalar or list) is one leaf.
    if ((isMap(sample) || sample === null) && mapLike(l) && mapLike(r) && !(type.kind === 'untyped' && sample === null)) {
      const lm = isMap(l) ? l : undefined;
      const rm = isMap(r) ? r : undefined;
      const empty = (lm === undefined || Object.keys(lm).length === 0) && (rm === undefined || Object.keys(rm).length === 0);
      if (!type.atomic && !empty) {
        isLeaf = false;
        const keys = new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {})]);
        for (const k of keys) {
          const childType: SmdType = type.kind === 'map' ? type.field(k) : type;
          walk(lm?.[k], rm?.[k], childType, [...path, fieldElement(k)], out);
        }
      }
    }
  } else if (type.kind === 'list') {
    const listLike = (v: Value): boolean => v === undefined || v === null || Array.isArray(v);
    if ((Array.isArray(sample) || sample === null) && listLike(l) && listLike(r)) {
      const ll = Array.isArray(l) ? l : [];
      const rl = Array.isArray(r) ? r : [];
      if (!type.atomic && (ll.length > 0 || rl.length > 0)) {
        isLeaf = false;
        visitListItems(type, ll, rl, path, out);
      }
    }
  }
  if (isLeaf) leaf(l, r, path, out);
  else if (l === undefined) out.added.insert(path);
  else if (r === undefined) out.removed.insert(path);
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

function groupItems(type: ListType, list: Value[]): Map<string, { pe: PathElement; items: Value[] }> {
  const groups = new Map<string, { pe: PathElement; items: Value[] }>();
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

function visitListItems(type: ListType, l: Value[], r: Value[], path: PathElement[], out: Comparison): void {
  const lg = groupItems(type, l);
  const rg = groupItems(type, r);
  const keys = new Set([...lg.keys(), ...rg.keys()]);
  const elem = type.elem();
  for (const k of keys) {
    const left = lg.get(k);
    const right = rg.get(k);
    const pe = (right ?? left)?.pe;
    if (pe === undefined) continue;
    const lList = left?.items ?? [];
    const rList = right?.items ?? [];
    const childPath = [...path, pe];
    if (lList.length <= 1 && rList.length <= 1) {
      walk(lList[0], rList[0], elem, childPath, out);
    } else if (lList.length >= 2 && rList.length >= 2) {
      if (!valuesEqual(lList, rList)) out.modified.insert(childPath);
    } else if (lList.length >= 2) {
      if (rList.length !== 0) walk(undefined, rList[0], elem, childPath, out);
      out.removed.insert(childPath);
    } else {
      if (lList.length !== 0) walk(lList[0], undefined, elem, childPath, out);
      out.added.insert(childPath);
    }
  }
}
