import { tooLarge } from '../api/errors.js';
import { cloneJson, goJsonKind, hasOwn, jsonEqual, setOwn, type JsonObject } from '../codec/json-value.js';
import { patchBadRequest, patchUnprocessable } from './patch-errors.js';
import { isObject } from '../api/values.js';

/**
 * JSON Patch (RFC 6902) with the semantics of the library kube-apiserver uses (evanphx/json-patch v4),
 * including its deviations from the RFC that clients can observe:
 * - `replace` of a missing object member adds it; `test` of a missing or null member with a null or
 *   absent `value` succeeds; `copy` from a missing member copies null;
 * - negative array indices count from the end;
 * - `add`/`remove` on the root path "" fail.
 *
 * Failures while applying yield 422 Invalid with kube's fixed message; a body that is not a list of
 * operations yields 400 BadRequest; more than 10000 operations yield 413. Copies may add at most 3 MiB
 * in all (kube's bound): a patch of repeated copies cannot build a huge document.
 */

/** kube-apiserver's limit on operations in one JSON patch. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

/** kube-apiserver's default bound on what `copy` operations may add to a document (JSONPatchMaxCopyBytes). */
export const MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024;

export interface JsonPatchOptions {
  /** Strict or Warn field validation: kube decodes the body strictly first, which changes decode errors. */
  strictDecoding?: boolean;
  /** Most operations accepted (default MAX_JSON_PATCH_OPERATIONS); 413 above. */
  maxOperations?: number;
  /** Most bytes (JSON form) that copy operations may add together (default MAX_JSON_PATCH_COPY_BYTES); 422 above. */
  maxCopyBytes?: number;
  /** `original` is the caller's own copy: the operations change it in place rather than a clone. */
  inPlace?: boolean;
}

/** An applied-operation failure; its text follows evanphx/json-patch and travels as the 422's cause. */
class OpError extends Error {}

type Container = JsonObject | unknown[];

const MISSING = 'missing value';
const INVALID_INDEX = 'invalid index referenced';

function decodeKey(k: string): string {
  return k.replace(/~[01]/g, (m) => (m === '~1' ? '/' : '~'));
}

/** Go's strconv.Atoi; throws its error text. */
function atoi(s: string): number {
  if (!/^[+-]?[0-9]+$/.test(s)) throw new OpError(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new OpError(`strconv.Atoi: parsing ${JSON.stringify(s)}: value out of range`);
  return n;
}

function invalidIndex(idx: number): OpError {
  return new OpError(`Unable to access invalid index: ${idx}: ${INVALID_INDEX}`);
}

/** The member at `key`; undefined for an absent or null member (the library cannot tell them apart). */
function get(con: Container, key: string): unknown {
  if (Array.isArray(con)) {
    let idx = atoi(key);
    if (idx < 0) {
      if (idx < -con.length) throw invalidIndex(idx);
      idx += con.length;
    }
    if (idx >= con.length) throw invalidIndex(idx);
    const v = con[idx];
    return v === null ? undefined : v;
  }
  if (!hasOwn(con, key)) return undefined;
  const v = con[key];
  return v === null ? undefined : v;
}

function add(con: Container, key: string, value: unknown): void {
  if (!Array.isArray(con)) {
    setOwn(con, key, value);
    return;
  }
  if (key === '-') {
    con.push(value);
    return;
  }
  let idx: number;
  try {
    idx = atoi(key);
  } catch (e) {
    throw new OpError(`value was not a proper array index: '${key}': ${e instanceof Error ? e.message : String(e)}`);
  }
  const size = con.length + 1;
  if (idx >= size) throw invalidIndex(idx);
  if (idx < 0) {
    if (idx < -size) throw invalidIndex(idx);
    idx += size;
  }
  con.splice(idx, 0, value);
}

function remove(con: Container, key: string): void {
  if (!Array.isArray(con)) {
    if (!hasOwn(con, key)) throw new OpError(`Unable to remove nonexistent key: ${key}: ${MISSING}`);
    delete con[key];
    return;
  }
  let idx = atoi(key);
  if (idx >= con.length) throw invalidIndex(idx);
  if (idx < 0) {
    if (idx < -con.length) throw invalidIndex(idx);
    idx += con.length;
  }
  con.splice(idx, 1);
}

/** Replaces an existing array element (callers check the index with `get` first) or sets a member. */
function set(con: Container, key: string, value: unknown): void {
  if (!Array.isArray(con)) {
    setOwn(con, key, value);
    return;
  }
  let idx = atoi(key);
  if (idx < 0) idx += con.length;
  con[idx] = value;
}

/** Resolves the parent container of `path` and the final (decoded) key, or undefined when unreachable. */
function findObject(doc: Container, path: string): { con: Container; key: string } | undefined {
  const split = path.split('/');
  if (split.length < 2) return undefined;
  let con: Container = doc;
  for (const part of split.slice(1, -1)) {
    let next: unknown;
    try {
      next = get(con, decodeKey(part));
    } catch {
      return undefined;
    }
    if (Array.isArray(next) || isObject(next)) con = next;
    else return undefined;
  }
  return { con, key: decodeKey(split[split.length - 1] ?? '') };
}

/** Reads a string member of an operation the way `Operation.Path()/From()` do. */
function stringMember(op: JsonObject, name: string, missing: string): { value?: string; error?: string } {
  const v = hasOwn(op, name) ? op[name] : null;
  if (v === null || v === undefined) return { error: `${missing}: ${MISSING}` };
  if (typeof v !== 'string') return { error: `json: cannot unmarshal ${goJsonKind(v)} into Go value of type string` };
  return { value: v };
}

function pathOf(op: JsonObject): { value?: string; error?: string } {
  return stringMember(op, 'path', 'operation missing path field');
}

function fromOf(op: JsonObject): { value?: string; error?: string } {
  return stringMember(op, 'from', 'operation, missing from field');
}

/** The operation's value (null when absent); `present` is false when there is no non-null value. */
function valueOf(op: JsonObject): { present: boolean; value: unknown } {
  if (!hasOwn(op, 'value') || op.value === null || op.value === undefined) return { present: false, value: null };
  return { present: true, value: op.value };
}

interface DocRef {
  doc: Container;
  /** Bytes added by copy operations so far, and the bound on them. */
  copied: number;
  maxCopyBytes: number;
}

function wrap(prefix: string, e: unknown): OpError {
  return new OpError(`${prefix}: ${e instanceof Error ? e.message : String(e)}`);
}

function opAdd(ref: DocRef, op: JsonObject): void {
  const p = pathOf(op);
  if (p.value === undefined) throw new OpError(`add operation failed to decode path: ${MISSING}`);
  const target = findObject(ref.doc, p.value);
  if (!target) throw new OpError(`add operation does not apply: doc is missing path: "${p.value}": ${MISSING}`);
  try {
    add(target.con, target.key, cloneJson(valueOf(op).value));
  } catch (e) {
    throw wrap(`error in add for path: '${p.value}'`, e);
  }
}

function opRemove(ref: DocRef, op: JsonObject): void {
  const p = pathOf(op);
  if (p.value === undefined) throw new OpError(`remove operation failed to decode path: ${MISSING}`);
  const target = findObject(ref.doc, p.value);
  if (!target) throw new OpError(`remove operation does not apply: doc is missing path: "${p.value}": ${MISSING}`);
  try {
    remove(target.con, target.key);
  } catch (e) {
    throw wrap(`error in remove for path: '${p.value}'`, e);
  }
}

function opReplace(ref: DocRef, op: JsonObject): void {
  const p = pathOf(op);
  if (p.value === undefined) throw new OpError(`replace operation failed to decode path: ${p.error ?? MISSING}`);
  const value = valueOf(op).value;
  if (p.value === '') {
    if (!Array.isArray(value) && !isObject(value)) {
      throw new OpError('replace operation value must be object or array: %!w(<nil>)');
    }
    ref.doc = cloneJson(value);
    return;
  }
  const target = findObject(ref.doc, p.value);
  if (!target) throw new OpError(`replace operation does not apply: doc is missing path: ${p.value}: ${MISSING}`);
  try {
    get(target.con, target.key);
  } catch {
    throw new OpError(`replace operation does not apply: doc is missing key: ${p.value}: ${MISSING}`);
  }
  set(target.con, target.key, cloneJson(value));
}

function opMove(ref: DocRef, op: JsonObject): void {
  const f = fromOf(op);
  if (f.value === undefined) throw new OpError(`move operation failed to decode from: ${f.error ?? MISSING}`);
  const source = findObject(ref.doc, f.value);
  if (!source) throw new OpError(`move operation does not apply: doc is missing from path: ${f.value}: ${MISSING}`);
  let value: unknown;
  try {
    value = get(source.con, source.key);
    remove(source.con, source.key);
  } catch (e) {
    throw wrap(`error in move for path: '${source.key}'`, e);
  }
  const p = pathOf(op);
  if (p.value === undefined) throw new OpError(`move operation failed to decode path: ${p.error ?? MISSING}`);
  const target = findObject(ref.doc, p.value);
  if (!target) throw new OpError(`move operation does not apply: doc is missing destination path: ${p.value}: ${MISSING}`);
  try {
    add(target.con, target.key, value === undefined ? null : value);
  } catch (e) {
    throw wrap(`error in move for path: '${p.value}'`, e);
  }
}

function opTest(ref: DocRef, op: JsonObject): void {
  const p = pathOf(op);
  if (p.value === undefined) throw new OpError(`test operation failed to decode path: ${p.error ?? MISSING}`);
  const expected = valueOf(op);
  const failed = new OpError(`testing value ${p.value} failed: test failed`);
  if (p.value === '') {
    if (!expected.present || !jsonEqual(ref.doc, expected.value)) throw failed;
    return;
  }
  const target = findObject(ref.doc, p.value);
  if (!target) throw new OpError(`test operation does not apply: is missing path: ${p.value}: ${MISSING}`);
  let actual: unknown;
  try {
    actual = get(target.con, target.key);
  } catch (e) {
    throw wrap(`error in test for path: '${p.value}'`, e);
  }
  if (actual === undefined) {
    if (!expected.present) return;
    throw failed;
  }
  if (!expected.present || !jsonEqual(actual, expected.value)) throw failed;
}

function opCopy(ref: DocRef, op: JsonObject): void {
  const f = fromOf(op);
  if (f.value === undefined) throw new OpError(`copy operation failed to decode from: ${f.error ?? MISSING}`);
  const source = findObject(ref.doc, f.value);
  if (!source) throw new OpError(`copy operation does not apply: doc is missing from path: ${f.value}: ${MISSING}`);
  let value: unknown;
  try {
    value = get(source.con, source.key);
  } catch (e) {
    throw wrap(`error in copy for from: '${f.value}'`, e);
  }
  const p = pathOf(op);
  if (p.value === undefined) throw new OpError(`copy operation failed to decode path: ${MISSING}`);
  const target = findObject(ref.doc, p.value);
  if (!target) throw new OpError(`copy operation does not apply: doc is missing destination path: ${p.value}: ${MISSING}`);
  // Counted before copying, as the library kube uses does, so repeated copies cannot grow a document
  // past the bound (each doubling copy would otherwise build gigabytes from a small patch).
  ref.copied += Buffer.byteLength(JSON.stringify(value === undefined ? null : value));
  if (ref.maxCopyBytes > 0 && ref.copied > ref.maxCopyBytes) {
    throw new OpError(`Unable to complete the copy, the accumulated size increase of copy is ${ref.copied}, exceeding the limit ${ref.maxCopyBytes}`);
  }
  try {
    add(target.con, target.key, value === undefined ? null : cloneJson(value));
  } catch (e) {
    throw wrap('error while adding value during copy', e);
  }
}

/** Validates the body as `[]jsonpatch.Operation` (or, strictly, `[]handlers.jsonPatchOp`) and returns the operations. */
function decodeOperations(body: unknown, strict: boolean): (JsonObject | null)[] {
  const listType = strict ? '[]handlers.jsonPatchOp' : 'jsonpatch.Patch';
  const elemType = strict ? 'handlers.jsonPatchOp' : 'jsonpatch.Operation';
  const fail = (msg: string): never => {
    throw patchBadRequest(strict ? `error decoding patch: ${msg}` : msg);
  };
  if (body === null || body === undefined) return [];
  if (!Array.isArray(body)) return fail(`json: cannot unmarshal ${goJsonKind(body)} into Go value of type ${listType}`);
  const ops: (JsonObject | null)[] = [];
  for (const el of body) {
    if (el === null) {
      ops.push(null);
      continue;
    }
    if (!isObject(el)) return fail(`json: cannot unmarshal ${goJsonKind(el)} into Go value of type ${elemType}`);
    if (strict) {
      for (const name of ['op', 'path', 'from']) {
        const v = hasOwn(el, name) ? el[name] : null;
        if (v !== null && typeof v !== 'string') {
          fail(`json: cannot unmarshal ${goJsonKind(v)} into Go struct field jsonPatchOp.${name} of type string`);
        }
      }
    }
    ops.push(el);
  }
  return ops;
}

/**
 * Applies an RFC 6902 patch body (the parsed JSON value) to `original` and returns the patched document.
 * Neither argument is modified. Throws ApiError: 400 for a body that is not a list of operations, 413
 * for more than 10000 operations, 422 (reason Invalid) when an operation cannot be applied.
 */
export function applyJsonPatch(original: unknown, patchBody: unknown, options: JsonPatchOptions = {}): unknown {
  const ops = decodeOperations(patchBody, options.strictDecoding === true);
  const maxOperations = options.maxOperations ?? MAX_JSON_PATCH_OPERATIONS;
  if (ops.length > maxOperations) {
    throw tooLarge(`The allowed maximum operations in a JSON patch is ${maxOperations}, got ${ops.length}`);
  }
  const start = options.inPlace === true ? original : cloneJson(original);
  if (!Array.isArray(start) && !isObject(start)) {
    throw patchUnprocessable('invalid state detected');
  }
  const ref: DocRef = { doc: start, copied: 0, maxCopyBytes: options.maxCopyBytes ?? MAX_JSON_PATCH_COPY_BYTES };
  for (const op of ops) {
    const kind = op !== null && typeof op.op === 'string' ? op.op : 'unknown';
    try {
      const o = op ?? {};
      switch (kind) {
        case 'add':
          opAdd(ref, o);
          break;
        case 'remove':
          opRemove(ref, o);
          break;
        case 'replace':
          opReplace(ref, o);
          break;
        case 'move':
          opMove(ref, o);
          break;
        case 'test':
          opTest(ref, o);
          break;
        case 'copy':
          opCopy(ref, o);
          break;
        default:
          throw new OpError(`Unexpected kind: ${kind}`);
      }
    } catch (e) {
      if (e instanceof OpError) throw patchUnprocessable(e.message);
      throw e;
    }
  }
  return ref.doc;
}
