import { isObject, type Obj } from '../api/object-util.js';
import { additionalPropertiesOf, itemsOf, propertiesOf } from './cr-schema-nodes.js';

/** Equality of decoded JSON values as Go's reflect.DeepEqual sees unstructured objects (key order aside). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (!isObject(a) || !isObject(b) || Array.isArray(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** The item of OLD a map list correlates with ITEM: the one with the same values of KEYS. */
function correlatedItem(old: unknown[], item: unknown, keys: string[]): unknown {
  if (!isObject(item)) return undefined;
  return old.find((o) => isObject(o) && keys.every((k) => jsonEqual(o[k], item[k])));
}

/**
 * kube's validation ratcheting of custom resources on update (CRDValidationRatcheting): a finding at
 * ajv's INSTANCEPATH is dropped when the value there, or at any node above it that correlates with
 * the old object, is unchanged. Object properties correlate by name, items of map lists by their keys
 * and of set lists by value; items of other lists do not correlate, so a changed atomic list is
 * validated whole.
 */
export function isRatcheted(schema: Obj, obj: Obj, old: Obj, instancePath: string): boolean {
  let node: Obj | undefined = schema;
  let cur: unknown = obj;
  let prev: unknown = old;
  const segments = instancePath === '' ? [] : instancePath.slice(1).split('/');
  for (const raw of segments) {
    if (jsonEqual(cur, prev)) return true;
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cur)) {
      const item: unknown = cur[Number(seg)];
      const listType = node?.['x-kubernetes-list-type'];
      const keys = node?.['x-kubernetes-list-map-keys'];
      if (!Array.isArray(prev)) return false;
      if (listType === 'map' && Array.isArray(keys))
        prev = correlatedItem(
          prev,
          item,
          keys.filter((k): k is string => typeof k === 'string'),
        );
      else if (listType === 'set') prev = prev.find((o) => jsonEqual(o, item));
      else return false;
      node = node === undefined ? undefined : itemsOf(node);
      cur = item;
    } else {
      if (!isObject(cur) || !isObject(prev)) return false;
      node = node === undefined ? undefined : (propertiesOf(node)[seg] ?? additionalPropertiesOf(node));
      cur = cur[seg];
      prev = prev[seg];
    }
    if (prev === undefined) return false;
  }
  return jsonEqual(cur, prev);
}
