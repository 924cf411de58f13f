import { alreadyExists, notFound, storageUnavailable, staleConflict, gone, timeout, tooLarge, writeTimeout } from '../api/errors.js';
import { StorageError } from '../storage/storage.js';
import type { ResourceTarget } from './resource-target.js';

/** Maps storage failures to Kubernetes errors about `name` of the request's resource: the one place this happens. */
export function storageErrorToApi(err: unknown, r: ResourceTarget, name: string): unknown {
  if (!(err instanceof StorageError)) return err;
  const qr = { group: r.info.group, resource: r.info.resource };
  switch (err.code) {
    case 'NotFound':
      return notFound(qr, name);
    case 'AlreadyExists':
      return alreadyExists(qr, name);
    case 'Conflict':
      return staleConflict(qr, name);
    case 'Gone':
      return gone(err.message);
    case 'TooLarge':
      return timeout('Too large resource version', 1);
    case 'ObjectTooLarge':
      return tooLarge(err.message);
    case 'Unavailable':
      return storageUnavailable(err);
    case 'Timeout':
      return writeTimeout(err.message);
  }
}

/** Runs a storage call, mapping its failures with `storageErrorToApi`. */
export async function withStorage<T>(r: ResourceTarget, name: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw storageErrorToApi(err, r, name);
  }
}
