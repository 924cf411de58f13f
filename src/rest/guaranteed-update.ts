import { conflict } from '../api/errors.js';
import { objectKey } from '../api/object-util.js';
import { withStorage } from './storage-errors.js';
import { type ResourceTarget } from './server-context.js';
import type { StoredObject } from '../storage/storage.js';

/** What an attempt answers when its compare-and-swap lost a race: read again and decide again. */
export const RETRY: unique symbol = Symbol('retry');

/** Attempts before a write that keeps losing races answers 409. */
const MAX_ATTEMPTS = 20;

/**
 * kube's GuaranteedUpdate, the one read-decide-write loop of every write to an existing object
 * (update, patch, the subresources, delete): reads the stored object (undefined when there is none),
 * lets `attempt` decide, check and write against exactly the version it read, and repeats while the
 * attempt reports a lost race. An attempt that throws ends the loop with its error.
 */
export async function guaranteedUpdate<T>(
  target: ResourceTarget,
  name: string,
  attempt: (stored: StoredObject | undefined, key: string) => Promise<T | typeof RETRY>,
): Promise<T> {
  const key = objectKey(target.info.namespaced ? target.ri.namespace : '', name);
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    const stored = await withStorage(target, name, () => target.server.storage.get(target.type, key));
    const outcome = await attempt(stored, key);
    if (outcome !== RETRY) return outcome;
  }
  throw conflict({ group: target.info.group, resource: target.info.resource }, name, 'too many concurrent updates, please retry');
}
