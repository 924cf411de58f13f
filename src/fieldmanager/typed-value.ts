import { listItemElement } from './compare-objects.js';
import { FieldSet } from './field-set.js';
import { fieldElement, serializePathElement, type PathElement } from './path-element.js';
import { DEDUCED, type SmdType } from './smd-type.js';

/**
 * structured-merge-diff's operations on one typed value, as typed.TypedValue offers them:
 * ToFieldSet, Merge and RemoveItems, and fieldpath.Set.EnsureNamedFieldsAreMembers. Values are
 * plain JSON; `undefined` is an absent value and `null` a present null.
 */

type Value = unknown;
type ListType = Extract<SmdType, { kind: 'list' }>;

/** Why a value cannot be merged (an applied list naming one item twice, an item without its keys). */
export class TypedValueError extends Error {}

function isMap(v: Value): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The shape a value takes under `type`: untyped positions are deduced from the value itself. */
type Resolved = { kind: 'scalar' } | { kind: 'map'; atomic: boolean; field: (n: string) => SmdType; named: (n: string) => boolean } | ListType;

const UNNAMED = (): boolean => false;
const DEDUCED_FIELD = (): SmdType => DEDUCED;

function resolve(type: SmdType, v: Value): Resolved {
  if (type.kind !== 'untyped') return type;
  if (isMap(v) || v === null || v === undefined) return { kind: 'map', atomic: type.atomic, field: DEDUCED_FIELD, named: UNNAMED };
  if (Array.isArray(v)) return { kind: 'list', atomic: true, set: false, keys: [], elem: () => DEDUCED, keyDefault: () => undefined };
  return { kind: 'scalar' };
}

/**
 * The set of fields `value` sets under `type` (typed.ToFieldSet): scalars, atomic lists and maps,
 * list items, null or empty map values and map entries that are not struct fields are members.
 */
export function toFieldSet(value: Value, type: SmdType): FieldSet {
  const set = new FieldSet();
  walkSet(value, type, [], set);
  return set;
}

function walkSet(v: Value, type: SmdType, path: PathElement[], set: FieldSet): void {
  const t = resolve(type, v);
  if (t.kind === 'scalar') {
    set.insert(path);
    return;
  }
  if (t.kind === 'list') {
    if (t.atomic) {
      set.insert(path);
      return;
    }
    if (!Array.isArray(v)) return;
    const seen = new Set<string>();
    const duplicates = new Set<string>();
    for (const item of v) {
      const pe = listItemElement(t, item);
      if (pe === undefined) continue;
      const k = serializePathElement(pe);
      if (seen.has(k)) {
        if (!duplicates.has(k)) set.insert([...path, pe]);
        duplicates.add(k);
      } else seen.add(k);
    }
    for (const item of v) {
      const pe = listItemElement(t, item);
      if (pe === undefined || duplicates.has(serializePathElement(pe))) continue;
      walkSet(item, t.elem(), [...path, pe], set);
      set.insert([...path, pe]);
    }
    return;
  }
  if (t.atomic) {
    set.insert(path);
    return;
  }
  if (!isMap(v)) return;
  for (const [k, child] of Object.entries(v)) {
    const childPath = [...path, fieldElement(k)];
    walkSet(child, t.field(k), childPath, set);
    if (child === null || (isMap(child) && Object.keys(child).length === 0) || !t.named(k)) set.insert(childPath);
  }
}

/**
 * `set` with every struct field that has members below it made a member too
 * (fieldpath.Set.EnsureNamedFieldsAreMembers), so that removing such a set removes whole structs.
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, type: SmdType | undefined): FieldSet {
  const out = new FieldSet();
  for (const { pe, member, child } of set.entries()) {
    let childType: SmdType | undefined;
    let named = false;
    if (pe.kind === 'field' && type !== undefined && (type.kind === 'map' || type.kind === 'untyped')) {
      childType = type.kind === 'map' ? type.field(pe.name) : DEDUCED;
      named = type.kind === 'map' && type.named(pe.name);
    } else if (pe.kind === 'key' && type?.kind === 'list') childType = type.elem();
    if (member || (child !== undefined && named)) out.insertMember(pe);
    if (child !== undefined) {
      const sub = ensureNamedFieldsAreMembers(child, childType);
      if (!sub.empty()) out.descend(pe).absorb(sub);
    }
  }
  return out;
}

/**
 * `value` without the fields of `toRemove` (typed.RemoveItems): a member is removed with
 * everything below it; a map or list left empty becomes null, as structured-merge-diff leaves it.
 */
export function removeItems(value: Value, toRemove: FieldSet, type: SmdType): Value {
  const t = resolve(type, value);
  if (t.kind === 'scalar') return value;
  if (t.kind === 'list') {
    if (!Array.isArray(value) || value.length === 0 || t.atomic) return null;
    const out: Value[] = [];
    for (const item of value) {
      const pe = listItemElement(t, item);
      if (pe === undefined) {
        out.push(item);
        continue;
      }
      if (toRemove.hasMember(pe)) continue;
      const sub = toRemove.child(pe);
      out.push(sub === undefined ? item : removeItems(item, sub, t.elem()));
    }
    return out.length > 0 ? out : null;
  }
  if (!isMap(value) || Object.keys(value).length === 0 || t.atomic) return null;
  const out: Record<string, unknown> = {};
  for (const [k, child] of Object.entries(value)) {
    const pe = fieldElement(k);
    if (toRemove.hasMember(pe)) continue;
    const sub = toRemove.child(pe);
    out[k] = sub === undefined ? child : removeItems(child, sub, t.field(k));
  }
  return Object.keys(out).length > 0 ? out : null;
}

/**
 * `rhs` merged into `lhs` under `type` (typed.Merge with the right side winning): scalars and
 * atomic values are taken from `rhs`; maps merge key by key; associative lists merge item by item,
 * in structured-merge-diff's order (the right side's order, with items only on the left kept
 * where they stood). Undefined when neither side has a value. Throws TypedValueError when the
 * right side lists an item twice or names an item without its keys.
 */
export function mergeValues(lhs: Value, rhs: Value, type: SmdType): Value {
  const sample = rhs !== undefined ? rhs : lhs;
  const t = resolve(type, sample);
  let l = lhs;
  if (type.kind === 'untyped' && rhs !== undefined && lhs !== undefined && resolve(type, lhs).kind !== t.kind) l = undefined;
  const leaf = (): Value => (rhs !== undefined ? rhs : l);
  if (t.kind === 'scalar') return leaf();
  if (t.kind === 'list') {
    const ll = Array.isArray(l) ? l : undefined;
    const rl = Array.isArray(rhs) ? rhs : undefined;
    if (t.atomic || ((ll === undefined || ll.length === 0) && (rl === undefined || rl.length === 0))) return leaf();
    const out = mergeListItems(t, ll ?? [], rl ?? []);
    return out.length > 0 ? out : undefined;
  }
  const lm = isMap(l) ? l : undefined;
  const rm = isMap(rhs) ? rhs : undefined;
  const emptyL = lm === undefined || Object.keys(lm).length === 0;
  const emptyR = rm === undefined || Object.keys(rm).length === 0;
  if (t.atomic || (emptyL && emptyR)) return leaf();
  const out: Record<string, unknown> = {};
  const keys = new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {})]);
  for (const k of keys) {
    const merged = mergeValues(lm?.[k], rm?.[k], t.field(k));
    if (merged !== undefined) out[k] = merged;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

interface Indexed {
  pes: { pe: PathElement; key: string }[];
  observed: Map<string, Value>;
}

function indexItems(t: ListType, list: Value[], allowDuplicates: boolean): Indexed {
  const pes: { pe: PathElement; key: string }[] = [];
  const observed = new Map<string, Value>();
  list.forEach((item, i) => {
    const pe = listItemElement(t, item);
    if (pe === undefined) throw new TypedValueError(`element ${i}: associative list without keys has an element that's a map type`);
    const key = serializePathElement(pe);
    if (observed.has(key)) {
      if (!allowDuplicates) throw new TypedValueError(`duplicate entries for key ${keyString(pe)}`);
      observed.set(key, null);
    } else observed.set(key, item);
    pes.push({ pe, key });
  });
  return { pes, observed };
}

function keyString(pe: PathElement): string {
  if (pe.kind === 'key') return `[${pe.fields.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
  if (pe.kind === 'value') return `[=${JSON.stringify(pe.value)}]`;
  return serializePathElement(pe);
}

/** structured-merge-diff's visitListItems order, step for step. */
function mergeListItems(t: ListType, lhs: Value[], rhs: Value[]): Value[] {
  const r = indexItems(t, rhs, false);
  const l = indexItems(t, lhs, true);
  const out: Value[] = [];
  const elem = t.elem();
  const push = (lv: Value, rv: Value): void => {
    const m = mergeValues(lv, rv, elem);
    if (m !== undefined) out.push(m);
  };
  const sharedOrder = r.pes.filter((p) => l.observed.has(p.key)).map((p) => p.key);
  let nextShared = sharedOrder.shift();
  const mergedRhs = new Set<string>();
  let li = 0;
  let ri = 0;
  while (li < l.pes.length || ri < r.pes.length) {
    if (li < l.pes.length && ri < r.pes.length) {
      const key = l.pes[li].key;
      if (key === r.pes[ri].key) {
        mergedRhs.add(key);
        push(l.observed.get(key), r.observed.get(key));
        li++;
        ri++;
        nextShared = sharedOrder.shift();
        continue;
      }
      if (r.observed.has(key) && nextShared !== undefined && nextShared !== key) {
        li++;
        continue;
      }
    }
    if (li < l.pes.length) {
      const key = l.pes[li].key;
      if (!r.observed.has(key)) {
        push(lhs[li], undefined);
        li++;
        continue;
      } else if (mergedRhs.has(key)) li++;
    }
    if (ri < r.pes.length) {
      const key = r.pes[ri].key;
      mergedRhs.add(key);
      push(l.observed.get(key), r.observed.get(key));
      ri++;
      if (nextShared !== undefined && nextShared === key) nextShared = sharedOrder.shift();
    }
  }
  return out;
}
