import { storageErrorToApi as mapStorageError } from '../api/errors.js';
import type { ResourceTarget } from './server-context.js';

/** Maps a storage failure to the Kubernetes error about `name` of the request's resource (see api/errors.ts). */
export function storageErrorToApi(err: unknown, r: ResourceTarget, name: string): unknown {
  return mapStorageError(err, { group: r.info.group, resource: r.info.resource }, name);
}

/** Runs a storage call, mapping its failures with `storageErrorToApi`. */
export async function withStorage<T>(r: ResourceTarget, name: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    throw storageErrorToApi(err, r, name);
  }
}
