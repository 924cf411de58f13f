/**
 * `Unavailable`: nothing was done (the backend could not be reached). `Timeout`: a write was sent
 * but its outcome is unknown (it may have been applied), as with a connection lost mid-command.
 * `TooLarge`: a requested resourceVersion is newer than the type's. `ObjectTooLarge`: a write's
 * object is bigger than the backend stores (nothing was written).
 */
export type StorageErrorCode = 'NotFound' | 'AlreadyExists' | 'Conflict' | 'Gone' | 'TooLarge' | 'ObjectTooLarge' | 'Unavailable' | 'Timeout';

/** A storage failure; errors.ts maps it to a Kubernetes error (storageErrorToApi). */
export class StorageError extends Error {
  readonly code: StorageErrorCode;
  /** For `Conflict`: the object's current version; for `Gone`: the oldest version still kept. */
  readonly resourceVersion: string | undefined;

  constructor(code: StorageErrorCode, message: string, resourceVersion?: string) {
    super(message);
    this.name = 'StorageError';
    this.code = code;
    this.resourceVersion = resourceVersion;
  }
}
