import { ApiError, type StatusObject } from '../api/errors.js';
import { type StorageError } from '../api/storage-error.js';

/**
 * The Status of the ERROR event ending a watch whose history no longer reaches `from` (the version
 * it was reading from): 410 Expired with kube's "too old resource version" words and the oldest
 * version still kept, which tells clients to relist.
 */
export function expiredStatus(from: string, err: StorageError): StatusObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `too old resource version: ${from} (${err.resourceVersion ?? ''})`,
    reason: 'Expired',
    code: 410,
  };
}

/**
 * The Status of the ERROR event ending a watch that failed after its stream started; `err` was
 * mapped by `storageErrorToApi` already. Anything but an ApiError is a 500 InternalError.
 */
export function failureStatus(err: unknown): StatusObject {
  if (err instanceof ApiError) return err.toStatus();
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: String(err), reason: 'InternalError', code: 500 };
}
