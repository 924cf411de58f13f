import { cloneJson, goJsonKind, hasOwn, setOwn, type JsonObject } from '../codec/json-value.js';
import { patchBadRequest } from './patch-errors.js';
import { isObject } from '../api/values.js';

/**
 * JSON Merge Patch (RFC 7386) as kube-apiserver applies it (evanphx/json-patch v4 `MergePatch`):
 * members set to null are removed, objects merge recursively, anything else replaces. Where a patch
 * value is stored without merging (new members, replaced non-objects), nested null members are pruned
 * and null array elements dropped, as the library does.
 */

/** Options mirroring the PATCH request's `fieldValidation` query parameter. */
export interface MergePatchOptions {
  /** Strict or Warn field validation: kube decodes the body into a map first, which changes decode errors. */
  strictDecoding?: boolean;
  /** `original` is the caller's own copy: the patch is applied to it in place rather than to a clone. */
  inPlace?: boolean;
}

function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== null).map(pruneNulls);
  if (isObject(v)) {
    const out: JsonObject = {};
    for (const k of Object.keys(v)) {
      if (v[k] !== null) setOwn(out, k, pruneNulls(v[k]));
    }
    return out;
  }
  return v;
}

/** Merges `patch` into `doc` in place; `doc` is a private copy, `patch` is only read. */
function mergeDocs(doc: JsonObject, patch: JsonObject): void {
  for (const k of Object.keys(patch)) {
    const pv = patch[k];
    if (pv === null) {
      delete doc[k];
      continue;
    }
    const cur = hasOwn(doc, k) ? doc[k] : null;
    if (cur === null) {
      setOwn(doc, k, pruneNulls(pv));
    } else if (isObject(cur)) {
      if (isObject(pv)) mergeDocs(cur, pv);
      // An object replaced by a non-object takes the patch value as is (nulls in arrays kept).
      else setOwn(doc, k, cloneJson(pv));
    } else {
      setOwn(doc, k, pruneNulls(pv));
    }
  }
}

/**
 * Applies a merge patch (the parsed JSON value) to `original` and returns the result; neither input is
 * modified. A null or scalar patch is rejected with 400 "Invalid JSON Patch"; an array patch replaces
 * the whole document (the caller's decoding then rejects it for object kinds, as kube does).
 */
export function applyMergePatch(original: unknown, patch: unknown, options: MergePatchOptions = {}): unknown {
  if (options.strictDecoding === true && patch !== null && !isObject(patch)) {
    throw patchBadRequest(`error decoding patch: json: cannot unmarshal ${goJsonKind(patch)} into Go value of type map[string]interface {}`);
  }
  if (Array.isArray(patch)) return pruneNulls(patch);
  if (!isObject(patch)) throw patchBadRequest('Invalid JSON Patch');
  if (!isObject(original)) return pruneNulls(patch);
  const doc = options.inPlace === true ? original : cloneJson(original);
  mergeDocs(doc, patch);
  return doc;
}
