import { ApiError } from '../api/errors.js';
import { isObject, type Obj } from '../api/object-util.js';
import type { StoredObject } from '../storage/storage.js';
import { decodeStoredJson } from '../storage/stored-json.js';
import type { ResourceTarget } from './server-context.js';

/** kube's storage error code for an object that cannot be transformed or decoded (`ErrCodeCorruptObj`). */
const CORRUPT_OBJECT_CODE = 7;

/**
 * A read of a stored object whose bytes do not decode. With `AllowUnsafeMalformedObjectDeletion`
 * on, kube's storage reports it as a corrupt object (500 InternalError, "StorageError: corrupt
 * object, ..."), the error its unsafe deleter recognises; with the gate off, kube answers the
 * decoder's own error as a reason-less 500.
 */
export class CorruptObjectError extends ApiError {
  constructor(code: number, reason: string, message: string, causes: Array<{ message: string }> | undefined) {
    super(code, reason, message, causes ? { causes } : {});
    this.name = 'CorruptObjectError';
  }
}

/** The etcd key kube would keep the object under, named in its storage errors. */
function registryKey(target: ResourceTarget, key: string): string {
  const prefix = target.info.custom === true ? `${target.info.group}/${target.info.resource}` : target.info.resource;
  return `/registry/${prefix}/${key}`;
}

function goType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

/** Why `json` is not an object Capstan can serve (in words close to kube's decoder), or undefined. */
export function decodeFailure(json: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return `couldn't get version/kind; json parse error: ${detail.charAt(0).toLowerCase()}${detail.slice(1)}`;
  }
  if (!isObject(value)) {
    return (
      "couldn't get version/kind; json parse error: json: cannot unmarshal " +
      `${goType(value)} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`
    );
  }
  if (!isObject(value.metadata)) return 'Object has no metadata';
  return undefined;
}

/** The error a read of undecodable `stored` ends with, as kube's storage words it for the gate's state. */
export function corruptObjectError(target: ResourceTarget, stored: StoredObject, failure: string): CorruptObjectError {
  if (target.server.featureGates.AllowUnsafeMalformedObjectDeletion !== true) return new CorruptObjectError(500, '', failure, undefined);
  const storageError =
    `StorageError: corrupt object, Code: ${CORRUPT_OBJECT_CODE}, Key: ${registryKey(target, stored.key)}, ResourceVersion: 0, ` +
    `AdditionalErrorMsg: object not decodable revision=${stored.resourceVersion}: ${failure}`;
  return new CorruptObjectError(500, 'InternalError', `Internal error occurred: ${storageError}`, [{ message: storageError }]);
}

/**
 * The stored object, decoded. Throws `CorruptObjectError` (500) when its bytes are not a JSON
 * object with metadata: kube's corrupt-object read error, which only the unsafe deleter gets past.
 */
export function decodeStored(target: ResourceTarget, stored: StoredObject): Obj {
  const obj = decodeStoredJson(stored.json);
  if (obj !== undefined) return obj;
  throw corruptObjectError(target, stored, decodeFailure(stored.json) ?? 'undecodable object');
}

/** kube aggregates at most this many unreadable objects of a list, then adds a "too many" cause. */
const MAX_LIST_ERRORS = 100;

/**
 * Whether stored JSON is framed as one object: O(1), so lists can check every item without
 * decoding it (a full decode would double the cost of large lists). Truncated or foreign bytes
 * fail it; only the objects that fail are decoded to say why.
 */
function framedAsObject(json: string): boolean {
  return json.charCodeAt(0) === 0x7b && json.charCodeAt(json.length - 1) === 0x7d;
}

/**
 * The error a list (or a watch's initial list) holding unreadable objects ends with, undefined when
 * every item is framed as an object. As kube's storage: with the gate on, 500 StorageReadError
 * "failed to read one or more <resource> from the storage", one cause per unreadable object (its
 * key in `field`), at most 100; with the gate off, the first object's decode error.
 */
export function listReadError(target: ResourceTarget, items: readonly StoredObject[]): ApiError | undefined {
  const causes: Array<{ reason: string; message: string; field?: string }> = [];
  for (const item of items) {
    if (framedAsObject(item.json)) continue;
    const failure = decodeFailure(item.json);
    if (failure === undefined) continue;
    if (target.server.featureGates.AllowUnsafeMalformedObjectDeletion !== true) return corruptObjectError(target, item, failure);
    if (causes.length >= MAX_LIST_ERRORS) {
      causes.push({ reason: 'FieldValueTooMany', message: 'too many errors, the list is truncated' });
      break;
    }
    const message = corruptObjectError(target, item, failure).message.slice('Internal error occurred: '.length);
    causes.push({ reason: 'UnexpectedServerResponse', message, field: registryKey(target, item.key) });
  }
  if (causes.length === 0) return undefined;
  const qualified = target.info.group !== '' ? `${target.info.resource}.${target.info.group}` : target.info.resource;
  return new ApiError(500, 'StorageReadError', `failed to read one or more ${qualified} from the storage`, {
    group: target.info.group || undefined,
    kind: target.info.resource,
    name: 'list',
    causes,
  });
}
