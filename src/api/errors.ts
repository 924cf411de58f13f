import { logger } from '../logging/logger.js';
import { StorageError } from './storage-error.js';

/**
 * The ApiError family: every error a request can end with, mapped to a Kubernetes `Status` object in
 * exactly one place (`toStatus`). Reasons and messages follow kube-apiserver's wording so that clients
 * (kubectl, client-go's `apierrors.Is*`) classify them the same way.
 */

/** One entry of `Status.details.causes`. */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** `Status.details`. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** The `metav1.Status` wire object. */
export interface StatusObject {
  kind: 'Status';
  apiVersion: 'v1';
  /** ListMeta: only a 410 for an expired continue token fills it (`continue`). */
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

/** An error that becomes a `Status` response with `code` as its HTTP status. */
export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;
  /** Extra response headers (for example Retry-After). */
  readonly headers: Record<string, string>;

  constructor(code: number, reason: string, message: string, details?: StatusDetails, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.reason = reason;
    this.details = details;
    this.headers = headers;
  }

  /** The `Status` object for this error. */
  toStatus(): StatusObject {
    // kube's field order: details before code.
    const details = this.details && Object.keys(this.details).length > 0 ? { details: this.details } : {};
    const status: StatusObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      ...(this.reason === '' ? {} : { reason: this.reason }),
      ...details,
      code: this.code,
    };
    return status;
  }
}

/** Names the object an error is about, as kube-apiserver's `qualifiedResource` does ("pods", "deployments.apps"). */
export interface QualifiedResource {
  group: string;
  resource: string;
}

function qualified(r: QualifiedResource): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

export function notFound(r: QualifiedResource, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualified(r)} "${name}" not found`, { name, group: r.group || undefined, kind: r.resource });
}

export function alreadyExists(r: QualifiedResource, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualified(r)} "${name}" already exists`, { name, group: r.group || undefined, kind: r.resource });
}

/** 409 Conflict; `detail` is the reason text after the colon. */
export function conflict(r: QualifiedResource, name: string, detail: string): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(r)} "${name}": ${detail}`, {
    name,
    group: r.group || undefined,
    kind: r.resource,
  });
}

/** The conflict kube-apiserver reports for a stale resourceVersion precondition. */
export function staleConflict(r: QualifiedResource, name: string): ApiError {
  return conflict(r, name, 'the object has been modified; please apply your changes to the latest version and try again');
}

export function badRequest(message: string, details?: StatusDetails): ApiError {
  return new ApiError(400, 'BadRequest', message, details);
}

/** 422 Invalid, with one cause per field error. */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  // kube's aggregate error lists each distinct text once (the causes keep every error).
  const texts = [...new Set(causes.map((c) => (c.field ? `${c.field}: ${c.message ?? ''}` : (c.message ?? ''))))];
  const summary = texts.join(', ');
  const message = texts.length === 1 ? `${qualifiedKind} "${name}" is invalid: ${summary}` : `${qualifiedKind} "${name}" is invalid: [${summary}]`;
  // Go omits empty details fields (a patch's 422 names no kind or object).
  return new ApiError(422, 'Invalid', message, { name: name || undefined, group: group || undefined, kind: kind || undefined, causes });
}

/**
 * An answer of kube's NewGenericServerResponse (the 404 of a path no route serves, the 405 of a verb
 * a resource lacks): its Status always carries details, `"details":{}` when they name nothing, where
 * other errors omit empty details.
 */
class GenericResponseError extends ApiError {
  override toStatus(): StatusObject {
    const { code, ...rest } = super.toStatus();
    return { ...rest, details: rest.details ?? {}, code };
  }
}

/** kube's 404 for a resource path that no route serves. */
export function routeNotFound(): ApiError {
  return new GenericResponseError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function methodNotAllowed(message = 'the server does not allow this method on the requested resource'): ApiError {
  return new GenericResponseError(405, 'MethodNotAllowed', message, {});
}

export function forbidden(r: QualifiedResource, name: string, detail: string): ApiError {
  const target = name ? `${qualified(r)} "${name}"` : qualified(r);
  return new ApiError(403, 'Forbidden', `${target} is forbidden: ${detail}`, { name: name || undefined, group: r.group || undefined, kind: r.resource });
}

export function gone(message: string): ApiError {
  return new ApiError(410, 'Expired', message, {});
}

export function tooLarge(message = 'the server has received a request that is too large'): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`, {});
}

export function unsupportedMediaType(contentType: string, supported: string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`,
    {},
    {},
  );
}

export function notAcceptable(supported: string[]): ApiError {
  return new ApiError(406, 'NotAcceptable', `only the following media types are accepted: ${supported.join(', ')}`, {});
}

export function internalError(err: unknown): ApiError {
  const detail = err instanceof Error ? err.message : String(err);
  return new ApiError(500, 'InternalError', `Internal error occurred: ${detail}`, { causes: [{ message: detail }] });
}

export function serviceUnavailable(message: string, retryAfterSeconds = 1): ApiError {
  return new ApiError(503, 'ServiceUnavailable', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
}

/** kube's errors.NewServiceUnavailable: 503 ServiceUnavailable with the message only (no details, no Retry-After). */
export function unavailable(message: string): ApiError {
  return new ApiError(503, 'ServiceUnavailable', message);
}

/**
 * 503 for storage that cannot be reached. The client gets kube's generic words for the condition;
 * the backend's own description (a client library's wording) goes to the log only.
 */
export function storageUnavailable(err: StorageError): ApiError {
  logger.warn('storage unavailable', { detail: err.message });
  return serviceUnavailable('the server is currently unable to handle the request', 1);
}

export function timeout(message: string, retryAfterSeconds = 1): ApiError {
  return new ApiError(504, 'Timeout', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
}

/**
 * kube's 504 for a read at a resourceVersion the storage has not reached
 * (storage.NewTooLargeResourceVersionError): `Timeout: Too large resource version: RV, current: CUR`
 * (the bare phrase when the versions are not known), cause ResourceVersionTooLarge, Retry-After 1.
 */
export function tooLargeResourceVersion(rv?: string, current?: string): ApiError {
  const versions = rv !== undefined && current !== undefined ? `: ${rv}, current: ${current}` : '';
  return new ApiError(
    504,
    'Timeout',
    `Timeout: Too large resource version${versions}`,
    { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
    { 'Retry-After': '1' },
  );
}

/**
 * 504 for a write whose outcome is unknown: storage did not confirm it in time, so it may have been
 * applied (or be lost in a failover). Written as kube-apiserver's request timeout filter writes it
 * when storage does not answer before the request's deadline (checked on kube-apiserver 1.36 with etcd
 * stopped): `text/plain` JSON of a Status without kind and apiVersion, `details` empty, no
 * Retry-After header, so client-go reports "the server was unable to return a response in the time
 * allotted, but may still be processing the request" instead of re-sending a create that may have
 * been stored.
 */
export class WriteTimeoutError extends ApiError {
  constructor() {
    super(504, 'Timeout', 'Timeout: request did not complete within the allotted timeout', {});
  }

  override toStatus(): StatusObject {
    const { code, ...rest } = super.toStatus();
    return { ...rest, details: {}, code };
  }

  /** The body as kube's timeout filter encodes it (Go's json.Encoder: no kind or apiVersion, a final newline). */
  filterBody(): string {
    const { metadata, status, message, reason, details, code } = this.toStatus();
    return `${JSON.stringify({ metadata, status, message, reason, details, code })}\n`;
  }
}

/** See WriteTimeoutError; `detail` (the storage's own words) goes to the log only. */
export function writeTimeout(detail?: string): ApiError {
  logger.warn('storage write outcome unknown', { detail });
  return new WriteTimeoutError();
}

/**
 * The one mapping of storage failures to Kubernetes errors. `resource` and `name` name the object
 * a NotFound, AlreadyExists or Conflict is about; without them those are internal errors. Values
 * other than StorageErrors are returned unchanged.
 */
export function storageErrorToApi(err: unknown, resource?: { group: string; resource: string }, name = ''): unknown {
  if (!(err instanceof StorageError)) return err;
  switch (err.code) {
    case 'NotFound':
      return resource === undefined ? internalError(err) : notFound(resource, name);
    case 'AlreadyExists':
      return resource === undefined ? internalError(err) : alreadyExists(resource, name);
    case 'Conflict':
      return resource === undefined ? internalError(err) : staleConflict(resource, name);
    case 'Gone':
      return gone(err.message);
    case 'TooLarge':
      return tooLargeResourceVersion();
    case 'ObjectTooLarge':
      return tooLarge(err.message);
    case 'Unavailable':
      return storageUnavailable(err);
    case 'Timeout':
      return writeTimeout(err.message);
  }
}

/**
 * Any thrown value as an ApiError. Storage failures that reached here without a resource to name
 * (for example from admission) still get their meaning: unavailable is 503, unknown outcome 504.
 * Other faults become 500 InternalError.
 */
export function asApiError(err: unknown): ApiError {
  const mapped = storageErrorToApi(err);
  return mapped instanceof ApiError ? mapped : internalError(mapped);
}
