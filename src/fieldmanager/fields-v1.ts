import { FieldSet } from './field-set.js';
import { comparePathElements, deserializePathElement, PathElementError, serializePathElement, type PathElement } from './path-element.js';
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
  for (const { key, member, child } of entries) out[key] = child ? emit(child, member) : {};
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
  return decodeFieldsV1(fields).set;
}

/**
 * `fieldsV1ToSet`, also telling whether `fields` is canonical: exactly what `setToFieldsV1` writes
 * for the set, key order included (each key in its string form, keys in path-element order, `"."`
 * first and only beside children, no key of an unknown type).
 */
export function decodeFieldsV1(fields: unknown): { set: FieldSet; canonical: boolean } {
  if (!isObject(fields)) throw new FieldsV1Error('fieldsV1 must be an object');
  const set = new FieldSet();
  const state = { canonical: !Object.hasOwn(fields, '.') };
  read(fields, set, state);
  return { set, canonical: state.canonical };
}

function hasKeys(obj: Record<string, unknown>): boolean {
  for (const key in obj) if (Object.hasOwn(obj, key)) return true;
  return false;
}

/** A fieldsV1 key read: its element and that element's string form. */
interface ReadKey {
  readonly pe: PathElement;
  readonly element: string;
}

/**
 * Keys read before. The same keys (`f:spec`, `k:{"name":"app"}`, ...) recur in every object of a
 * kind and in every write of one, so each is parsed once; elements are never mutated, so sets may
 * share them. At most READ_KEYS_BOUND keys of at most READ_KEY_MAX_LENGTH characters (a client's
 * managedFields cannot make it hold much), emptied when full.
 */
const readKeys = new Map<string, ReadKey>();
const READ_KEYS_BOUND = 8192;
const READ_KEY_MAX_LENGTH = 256;

/** The element `key` names; undefined for a key of an unknown element type (skipped, as kube skips it). */
function readKey(key: string): ReadKey | undefined {
  const cached = readKeys.get(key);
  if (cached !== undefined) return cached;
  let pe: PathElement;
  try {
    pe = deserializePathElement(key);
  } catch (err) {
    if (err instanceof PathElementError && err.unknownType) return undefined;
    throw new FieldsV1Error(err instanceof Error ? err.message : String(err));
  }
  // The string form, not the key as written: keys spelled differently for one element meet. A
  // field's key is its string form already.
  const read: ReadKey = { pe, element: pe.kind === 'field' ? key : serializePathElement(pe) };
  if (key.length > READ_KEY_MAX_LENGTH) return read;
  if (readKeys.size >= READ_KEYS_BOUND) readKeys.clear();
  readKeys.set(key, read);
  return read;
}

/**
 * Reads `obj` into `into`, building each subtree in place (one pass over the tree); answers
 * whether the node itself is a member. Clears `state.canonical` on anything `emit` would write
 * otherwise.
 */
function read(obj: Record<string, unknown>, into: FieldSet, state: { canonical: boolean }): boolean {
  let isMember = false;
  let hasChildren = false;
  let previous: PathElement | undefined;
  let first = true;
  for (const [key, value] of Object.entries(obj)) {
    if (key === '.') {
      isMember = true;
      if (!first || !isObject(value) || hasKeys(value)) state.canonical = false;
      first = false;
      continue;
    }
    first = false;
    const known = readKey(key);
    if (known === undefined) {
      state.canonical = false;
      continue;
    }
    const { pe, element } = known;
    if (!isObject(value)) throw new FieldsV1Error(`expected an object for ${key}`);
    hasChildren = true;
    if (state.canonical && (element !== key || (previous !== undefined && comparePathElements(previous, pe) >= 0))) state.canonical = false;
    previous = pe;
    // `{}`: a member without children, the commonest node.
    if (!hasKeys(value)) {
      into.insertMember(pe, element);
      continue;
    }
    if (read(value, into.descend(pe, element), state)) into.insertMember(pe, element);
    into.pruneChild(element);
  }
  // A lone "." reads as a member, which is written `{}`.
  if (isMember && !hasChildren) state.canonical = false;
  return isMember || !hasChildren;
}
