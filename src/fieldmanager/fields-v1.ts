import { FieldSet } from './field-set.js';
import { deserializePathElement, PathElementError, serializePathElement, type PathElement } from './path-element.js';
import { isObject } from '../api/values.js';

/** The JSON object of a `fieldsV1` entry. */
export type FieldsV1 = { [key: string]: FieldsV1 };

/**
 * Encodes a set as `fieldsV1`, as structured-merge-diff's Set.ToJSON writes it: keys in path-element
 * order, a member without children as `{}`, a member with children marked by a `"."` key first.
 */
export function setToFieldsV1(set: FieldSet): FieldsV1 {
  return emit(set, false);
}

function emit(set: FieldSet, includeSelf: boolean): FieldsV1 {
  const out: FieldsV1 = {};
  const entries = set.entries();
  if (includeSelf && entries.length > 0) out['.'] = {};
  for (const { pe, member, child } of entries) out[serializePathElement(pe)] = child ? emit(child, member) : {};
  return out;
}

/** Why a fieldsV1 value could not be decoded (kube's FieldsToSet error). */
export class FieldsV1Error extends Error {}

/**
 * Decodes `fieldsV1` into a set, as structured-merge-diff's Set.FromJSON reads it: `{}` is a member,
 * `"."` marks a node with children as a member too, keys of unknown element types are skipped.
 * Throws FieldsV1Error on anything else that is not well formed.
 */
export function fieldsV1ToSet(fields: unknown): FieldSet {
  if (!isObject(fields)) throw new FieldsV1Error('fieldsV1 must be an object');
  const set = new FieldSet();
  read(fields, set);
  return set;
}

/** Reads `obj` into `into`; answers whether the node itself is a member. */
function read(obj: Record<string, unknown>, into: FieldSet): boolean {
  let isMember = false;
  let hasChildren = false;
  for (const [key, value] of Object.entries(obj)) {
    if (key === '.') {
      isMember = true;
      continue;
    }
    let pe: PathElement;
    try {
      pe = deserializePathElement(key);
    } catch (err) {
      if (err instanceof PathElementError && err.unknownType) continue;
      throw new FieldsV1Error(err instanceof Error ? err.message : String(err));
    }
    if (!isObject(value)) throw new FieldsV1Error(`expected an object for ${key}`);
    hasChildren = true;
    const child = new FieldSet();
    if (read(value, child)) into.insertMember(pe);
    if (!child.empty()) {
      const target = into.descend(pe);
      for (const p of child.paths()) target.insert(p);
    }
  }
  return isMember || !hasChildren;
}
