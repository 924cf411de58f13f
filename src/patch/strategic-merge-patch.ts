import type { ApiError } from '../api/errors.js';
import type { SchemaNode } from '../schema/openapi-schema.js';
import { goSliceStable } from './go-stable-sort.js';
import { cloneJson, goFormat, goFormatS, goJsonKind, goTypeName, hasOwn, setOwn, type JsonObject } from '../codec/json-value.js';
import { patchBadRequest, patchRejected, patchUnprocessable } from './patch-errors.js';
import { isObject } from '../api/values.js';

/**
 * Strategic merge patch, applied the way kube-apiserver applies it to built-in types
 * (k8s.io/apimachinery/pkg/util/strategicpatch `StrategicMergeMapPatch`, server-side options:
 * parallel lists merged, unmatched nulls ignored). Patch metadata comes from the OpenAPI schema
 * (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`), which kube generates from the same
 * struct tags it uses.
 *
 * Behaviour:
 * - maps merge recursively, `null` deletes a key, scalars and differently-typed values replace;
 * - lists with strategy `merge` and a merge key merge element-wise by key (new elements follow the
 *   patch order, server-only elements keep their place relative to the live list); `merge` lists of
 *   scalars are a union; every other list is replaced;
 * - directives: `$patch: replace|delete` on maps, `$patch: replace|delete` elements in merge lists,
 *   `$retainKeys`, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`;
 * - a value for a key absent from the original is stored verbatim (as kube does), so directives nested
 *   in it are left for the decoder to drop as unknown fields;
 * - fields without schema (unknown to the OpenAPI document) merge like JSON merge patch.
 *
 * Errors use kube's mapping: malformed directives 400 BadRequest, lists of lists 422 Invalid. Anything
 * else (missing merge keys, bad `$patch` values, `$setElementOrder` mismatches) keeps the library's
 * text but answers 400 BadRequest where kube-apiserver answers 500 (see patchRejected).
 */

type ErrorKind = 'badRequest' | 'unprocessable' | 'rejected';

class SmpError extends Error {
  readonly kind: ErrorKind;
  constructor(message: string, kind: ErrorKind = 'rejected') {
    super(message);
    this.kind = kind;
  }
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

const errBadPatchFormatForPrimitiveList = (): SmpError => new SmpError('invalid patch format of primitive list', 'badRequest');
const errBadPatchFormatForRetainKeys = (): SmpError => new SmpError('invalid patch format of retainKeys', 'badRequest');
const errBadPatchFormatForSetElementOrderList = (): SmpError => new SmpError('invalid patch format of setElementOrder list', 'badRequest');
const errNoListOfLists = (): SmpError => new SmpError('lists of lists are not supported', 'unprocessable');

function errNoMergeKey(m: unknown, key: string): SmpError {
  return new SmpError(`map: ${goFormat(m)} does not contain declared merge key: ${key}`);
}

function errBadArgType(expected: string, actual: unknown): SmpError {
  const actualType = actual === null || actual === undefined ? '%!s(<nil>)' : goTypeName(actual);
  return new SmpError(`expected a ${expected}, but received a ${actualType}`);
}

function errBadPatchType(directive: unknown, m: JsonObject): SmpError {
  return new SmpError(`unknown patch type: ${goFormatS(directive)} in map: ${goFormat(m)}`);
}

const MAP_TYPE = 'map[string]interface {}';
const SLICE_TYPE = '[]interface {}';

/** Patch metadata of one field: its schema (list element schema for lists) and strategy. */
interface FieldMeta {
  schema: SchemaNode | undefined;
  strategy: string;
  mergeKey: string;
}

function extractStrategy(strategies: string[]): string {
  switch (strategies.length) {
    case 0:
      return '';
    case 1:
      return strategies[0] === 'retainKeys' ? '' : (strategies[0] ?? '');
    case 2:
      if (strategies[0] === 'retainKeys') return strategies[1] ?? '';
      if (strategies[1] === 'retainKeys') return strategies[0] ?? '';
      break;
    default:
      break;
  }
  throw new SmpError(`unexpected patch strategy: ${goFormat(strategies)}`);
}

function lookupField(schema: SchemaNode | undefined, key: string, slice: boolean): FieldMeta {
  const field = schema?.field(key);
  if (!field) return { schema: undefined, strategy: '', mergeKey: '' };
  return {
    schema: slice ? field.items() : field,
    strategy: extractStrategy(field.patchStrategies()),
    mergeKey: field.patchMergeKey() ?? '',
  };
}

/** Go's `==` on two decoded JSON values: scalars by value, nil equals nil, containers never equal. */
function goEq(a: unknown, b: unknown): boolean {
  return (a === undefined ? null : a) === (b === undefined ? null : b);
}

function mergeKeyValue(m: JsonObject, key: string): unknown {
  return hasOwn(m, key) ? m[key] : null;
}

/** The merge key path suffix after `<prefix>/`, or the directive's format error. */
function extractKey(s: string, prefix: string): string {
  const slash = s.indexOf('/');
  if (slash < 0 || s.slice(0, slash) !== prefix) {
    if (prefix === DELETE_FROM_PRIMITIVE_LIST) throw errBadPatchFormatForPrimitiveList();
    throw errBadPatchFormatForSetElementOrderList();
  }
  return s.slice(slash + 1);
}

type ElementKind = 'map' | 'scalar';

/** The common element type of the given lists, as `sliceElementType` checks it. */
function sliceElementKind(...slices: unknown[][]): ElementKind {
  let prev: string | undefined;
  for (const s of slices) {
    for (const v of s) {
      const t = goTypeName(v);
      if (prev === undefined) {
        prev = t;
        if (t === SLICE_TYPE) throw errNoListOfLists();
      } else if (prev !== t) {
        throw new SmpError(`list element types are not identical: ${goFormat(slices)}`);
      }
    }
  }
  if (prev === undefined) throw new SmpError('no elements in any of the given slices');
  return prev === MAP_TYPE ? 'map' : 'scalar';
}

function findMapInSlice(list: unknown[], key: string, value: unknown): number {
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    if (!isObject(v)) throw new SmpError(`value for key ${i} is not a map`);
    if (hasOwn(v, key) && goEq(v[key], value)) return i;
  }
  return -1;
}

function mergeKeyValueEqual(left: unknown, right: unknown, mergeKey: string): boolean {
  if (mergeKey === '') return goEq(left, right);
  if (!isObject(left)) throw errBadArgType(MAP_TYPE, left);
  if (!isObject(right)) throw errBadArgType(MAP_TYPE, right);
  if (!hasOwn(left, mergeKey)) throw errNoMergeKey(left, mergeKey);
  if (!hasOwn(right, mergeKey)) throw errNoMergeKey(right, mergeKey);
  return goEq(left[mergeKey], right[mergeKey]);
}

function extractToDeleteItems(list: unknown[]): { keep: unknown[]; toDelete: unknown[] } {
  const keep: unknown[] = [];
  const toDelete: unknown[] = [];
  for (const v of list) {
    if (!isObject(v)) throw errBadArgType(MAP_TYPE, v);
    if (hasOwn(v, DIRECTIVE) && v[DIRECTIVE] === 'delete') toDelete.push(v);
    else keep.push(v);
  }
  return { keep, toDelete };
}

function indexIn(list: unknown[], item: unknown, mergeKey: string, kind: ElementKind): number {
  const val = (x: unknown): unknown => {
    if (kind !== 'map') return x;
    return isObject(x) ? mergeKeyValue(x, mergeKey) : null;
  };
  const wanted = val(item);
  for (let i = 0; i < list.length; i++) {
    if (goEq(wanted, val(list[i]))) return i;
  }
  return -1;
}

function validateMergeKeyInLists(mergeKey: string, ...lists: unknown[][]): void {
  for (const list of lists) {
    for (const item of list) {
      if (!isObject(item)) throw errBadArgType(MAP_TYPE, item);
      if (!hasOwn(item, mergeKey)) throw errNoMergeKey(item, mergeKey);
    }
  }
}

function normalizeSliceOrder(toSort: unknown[], order: unknown[], mergeKey: string, kind: ElementKind): unknown[] {
  let items = [...toSort];
  let toDelete: unknown[] = [];
  if (kind === 'map') {
    validateMergeKeyInLists(mergeKey, items, order);
    ({ keep: items, toDelete } = extractToDeleteItems(items));
  }
  goSliceStable(items, (a, b) => {
    const ia = indexIn(order, a, mergeKey, kind);
    if (ia >= 0) {
      const ib = indexIn(order, b, mergeKey, kind);
      if (ib >= 0) return ia < ib;
    }
    return true;
  });
  return [...items, ...toDelete];
}

/** Interleaves server-only items (left) into patch items (right), keeping each side's relative order. */
function mergeSortedSlice(left: unknown[], right: unknown[], serverOrder: unknown[], mergeKey: string, kind: ElementKind): unknown[] {
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, kind);
      const ri = indexIn(serverOrder, right[j], mergeKey, kind);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

function normalizeElementOrder(
  patch: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: ElementKind,
): unknown[] {
  const sortedPatch = normalizeSliceOrder(patch, patchOrder, mergeKey, kind);
  const sortedServer = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, kind);
  return mergeSortedSlice(sortedServer, sortedPatch, serverOrder, mergeKey, kind);
}

function partitionPrimitives(list: unknown[], by: unknown[]): { inBy: unknown[]; rest: unknown[] } {
  const inBy: unknown[] = [];
  const rest: unknown[] = [];
  for (const v of list) {
    if (by.some((b) => goEq(b, v))) inBy.push(v);
    else rest.push(v);
  }
  return { inBy, rest };
}

function partitionMaps(list: unknown[], by: unknown[], mergeKey: string): { inBy: unknown[]; rest: unknown[] } {
  const inBy: unknown[] = [];
  const rest: unknown[] = [];
  for (const v of list) {
    if (!isObject(v)) throw errBadArgType(MAP_TYPE, v);
    if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
    if (findMapInSlice(by, mergeKey, v[mergeKey]) >= 0) inBy.push(v);
    else rest.push(v);
  }
  return { inBy, rest };
}

/** Go's in-place deduplication; the resulting order is then normalised, but it is kept exact anyway. */
function deduplicateScalars(input: unknown[]): unknown[] {
  const s = [...input];
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (goEq(s[i], s[j])) {
        s[j] = s[length];
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

function deleteFromSlice(current: unknown[], toDelete: unknown[]): unknown[] {
  return current.filter((v) => !toDelete.some((d) => goEq(d, v)));
}

function mergeSliceWithSpecialElements(original: unknown[], patch: unknown[], mergeKey: string): { original: unknown[]; patch: unknown[] } {
  const plain: unknown[] = [];
  let replace = false;
  let current = original;
  for (const v of patch) {
    if (!isObject(v)) throw errBadArgType(MAP_TYPE, v);
    if (!hasOwn(v, DIRECTIVE)) {
      plain.push(v);
      continue;
    }
    const directive = v[DIRECTIVE];
    if (directive === 'delete') {
      if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
      const value = v[mergeKey];
      for (let idx = findMapInSlice(current, mergeKey, value); idx >= 0; idx = findMapInSlice(current, mergeKey, value)) {
        current = [...current.slice(0, idx), ...current.slice(idx + 1)];
      }
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      throw new SmpError('merging lists cannot yet be specified in the patch');
    } else {
      throw errBadPatchType(directive, v);
    }
  }
  return replace ? { original: plain, patch: [] } : { original: current, patch: plain };
}

function mergeSlice(original: unknown[], patch: unknown[], schema: SchemaNode | undefined, mergeKey: string, isDeleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementKind(original, patch);
  let merged: unknown[];
  let base = original;
  let patchItems = patch;
  if (kind !== 'map') {
    if (isDeleteList) return deleteFromSlice(original, patch);
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (mergeKey === '') throw new SmpError('cannot merge lists without merge key for struct');
    ({ original: base, patch: patchItems } = mergeSliceWithSpecialElements(original, patch, mergeKey));
    merged = [...base];
    for (const v of patchItems) {
      if (!isObject(v)) throw errBadArgType(MAP_TYPE, v);
      if (!hasOwn(v, mergeKey)) throw errNoMergeKey(v, mergeKey);
      const idx = findMapInSlice(merged, mergeKey, v[mergeKey]);
      if (idx >= 0) {
        const target = merged[idx];
        merged[idx] = mergeMap(isObject(target) ? target : {}, v, schema);
      } else {
        merged.push(v);
      }
    }
  }
  const { inBy, rest } = mergeKey === '' ? partitionPrimitives(merged, patchItems) : partitionMaps(merged, patchItems, mergeKey);
  return normalizeElementOrder(inBy, rest, patchItems, base, mergeKey, kind);
}

function mergeSliceHandler(original: unknown[], patch: unknown[], meta: FieldMeta, isDeleteList: boolean): unknown[] {
  if (meta.strategy === 'merge') return mergeSlice(original, patch, meta.schema, meta.mergeKey, isDeleteList);
  return patch;
}

function handleDirectiveInMergeMap(directive: unknown, patch: JsonObject): JsonObject {
  if (directive === 'replace') {
    delete patch[DIRECTIVE];
    return patch;
  }
  if (directive === 'delete') return {};
  throw errBadPatchType(directive, patch);
}

function applyRetainKeysDirective(original: JsonObject, patch: JsonObject): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return;
  const retain = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(retain)) throw errBadPatchFormatForRetainKeys();
  const keep = new Set<unknown>(retain);
  for (const k of Object.keys(patch)) {
    if (patch[k] === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!keep.has(k)) throw errBadPatchFormatForRetainKeys();
  }
  for (const k of Object.keys(original)) {
    if (!keep.has(k)) delete original[k];
  }
}

function validatePatchWithSetOrderList(patchList: unknown[], setOrder: unknown[], mergeKey: string): void {
  if (setOrder.length === 0 || patchList.length === 0) return;
  const nonDelete = mergeKey !== '' ? extractToDeleteItems(patchList).keep : patchList;
  let pi = 0;
  let si = 0;
  while (pi < nonDelete.length && si < setOrder.length) {
    const item = nonDelete[pi];
    if (isObject(item) && hasOwn(item, DIRECTIVE)) {
      pi++;
      continue;
    }
    if (mergeKeyValueEqual(item, setOrder[si], mergeKey)) pi++;
    si++;
  }
  if (pi < nonDelete.length && si >= setOrder.length) {
    throw new SmpError(`The order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goFormat(setOrder)}\n`);
  }
}

function mergePatchIntoOriginal(original: JsonObject, patch: JsonObject, schema: SchemaNode | undefined): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER) || !hasOwn(patch, key)) continue;
    const setOrder = patch[key];
    delete patch[key];
    if (!Array.isArray(setOrder)) throw errBadArgType(SLICE_TYPE, setOrder);
    const field = extractKey(key, SET_ELEMENT_ORDER);
    const foundOriginal = hasOwn(original, field);
    const foundPatch = hasOwn(patch, field);
    let originalList: unknown[] = [];
    let patchList: unknown[] = [];
    if (foundOriginal) {
      const v = original[field];
      if (!Array.isArray(v)) throw errBadArgType(SLICE_TYPE, v);
      originalList = v;
    }
    if (foundPatch) {
      const v = patch[field];
      if (!Array.isArray(v)) throw errBadArgType(SLICE_TYPE, v);
      patchList = v;
    }
    const meta = lookupField(schema, field, true);
    validatePatchWithSetOrderList(patchList, setOrder, meta.mergeKey);

    let merged: unknown[];
    if (foundOriginal && !foundPatch) merged = originalList;
    else if (!foundOriginal && foundPatch) merged = patchList;
    else if (foundOriginal && foundPatch) merged = mergeSliceHandler(originalList, patchList, meta, false);
    else continue;

    const { inBy, rest } = meta.mergeKey === '' ? partitionPrimitives(merged, setOrder) : partitionMaps(merged, setOrder, meta.mergeKey);
    const kind = sliceElementKind(originalList, patchList);
    setOwn(original, field, normalizeElementOrder(inBy, rest, setOrder, originalList, meta.mergeKey, kind));
    delete patch[field];
  }
}

/** Merges `patch` into `original`; both are private copies that may be modified and shared with the result. */
function mergeMap(original: JsonObject, patch: JsonObject, schema: SchemaNode | undefined): JsonObject {
  if (hasOwn(patch, DIRECTIVE)) return handleDirectiveInMergeMap(patch[DIRECTIVE], patch);

  applyRetainKeysDirective(original, patch);
  mergePatchIntoOriginal(original, patch, schema);

  for (const rawKey of Object.keys(patch)) {
    const patchV = patch[rawKey];
    let key = rawKey;
    let isDeleteList = false;
    if (rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      key = extractKey(rawKey, DELETE_FROM_PRIMITIVE_LIST);
      isDeleteList = true;
    }
    if (patchV === null) {
      delete original[key];
      continue;
    }
    if (!hasOwn(original, key)) {
      if (!isDeleteList) setOwn(original, key, patchV);
      continue;
    }
    const originalV = original[key];
    if (goTypeName(originalV) !== goTypeName(patchV)) {
      if (!isDeleteList) setOwn(original, key, patchV);
      continue;
    }
    if (isObject(originalV) && isObject(patchV)) {
      const meta = lookupField(schema, key, false);
      setOwn(original, key, meta.strategy === 'replace' ? patchV : mergeMap(originalV, patchV, meta.schema));
    } else if (Array.isArray(originalV) && Array.isArray(patchV)) {
      setOwn(original, key, mergeSliceHandler(originalV, patchV, lookupField(schema, key, true), isDeleteList));
    } else {
      setOwn(original, key, patchV);
    }
  }
  return original;
}

/** Options mirroring the PATCH request's `fieldValidation` query parameter (decode errors are the same). */
export interface StrategicMergePatchOptions {
  strictDecoding?: boolean;
}

function toApiError(e: SmpError): ApiError {
  switch (e.kind) {
    case 'badRequest':
      return patchBadRequest(e.message);
    case 'unprocessable':
      return patchUnprocessable(e.message);
    default:
      return patchRejected(e.message);
  }
}

/**
 * Applies a strategic merge patch (the parsed JSON value) to `original`, using `schema` (the kind's
 * top-level definition) for patch strategies and merge keys. Neither input is modified; the result
 * shares no objects with them. A null patch leaves the object unchanged; a patch that is not a JSON
 * object is 400 BadRequest. Other failures follow kube-apiserver's statuses (see the module comment).
 */
export function applyStrategicMergePatch(
  original: unknown,
  patch: unknown,
  schema: SchemaNode | undefined,
  _options: StrategicMergePatchOptions = {},
): unknown {
  if (patch === null || patch === undefined) return cloneJson(original);
  if (!isObject(patch)) {
    throw patchBadRequest(`json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`);
  }
  const base = isObject(original) ? cloneJson(original) : {};
  try {
    return mergeMap(base, cloneJson(patch), schema);
  } catch (e) {
    if (e instanceof SmpError) throw toApiError(e);
    throw e;
  }
}
