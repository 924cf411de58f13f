import { conflict } from '../api/errors.js';
import { objectKey } from '../api/object-util.js';
import { withStorage } from './storage-errors.js';
import { type ResourceTarget } from './server-context.js';
import type { StoredObject } from '../storage/storage.js';
import { recordCachedCopyWrite } from '../metrics/metrics.js';

/** What an attempt answers when its compare-and-swap lost a race: read again and decide again. */
export const RETRY: unique symbol = Symbol('retry');

/** Attempts before a write that keeps losing races answers 409. */
const MAX_ATTEMPTS = 20;

/**
 * Told by an attempt just before it sends its compare-and-swap on the version it was given. From
 * then on the store decides: the outcome stands however the object was read (a success proves
 * the version was current; a write whose answer was lost may have taken effect, so it is not
 * decided again), unless the attempt reports a lost race (RETRY).
 */
export type SendingWrite = () => void;

/** How guaranteedUpdate reads the object its first attempt starts from. */
export interface GuaranteedUpdateOptions {
  /**
   * Start from this process's cached copy (Storage.peek) when it has one, as kube starts from its
   * watch cache's: the attempt must then call `sendingWrite` before its compare-and-swap.
   */
  startFromCache?: boolean;
}

/**
 * kube's GuaranteedUpdate, the one read-decide-write loop of every write to an existing object
 * (update, patch, the subresources, delete): reads the stored object (undefined when there is none),
 * lets `attempt` decide, check and write against exactly the version it read, and repeats while the
 * attempt reports a lost race. An attempt that throws ends the loop with its error.
 *
 * With `startFromCache`, the first attempt may start from a cached copy, saving a read of the
 * store when the copy is current. A copy that is behind makes the compare-and-swap fail (a lost
 * race: read again). An outcome decided on the copy without sending a write (an error, a write
 * that changes nothing, a dry run) stands only once a read of the store shows the copy was
 * current; otherwise the attempt runs again on what the store holds. So the answer is always one
 * decided on the store's current object, as without the cache; and a write sent is never decided
 * a second time (its answer may have been lost after it took effect).
 */
export async function guaranteedUpdate<T>(
  target: ResourceTarget,
  name: string,
  attempt: (stored: StoredObject | undefined, key: string, sendingWrite: SendingWrite) => Promise<T | typeof RETRY>,
  options: GuaranteedUpdateOptions = {},
): Promise<T> {
  const key = objectKey(target.info.namespaced ? target.ri.namespace : '', name);
  const storage = target.server.storage;
  const read = (): Promise<StoredObject | undefined> => withStorage(target, name, () => storage.get(target.type, key));
  let cached = options.startFromCache === true ? storage.peek?.(target.type, key) : undefined;
  for (let i = 0; i < MAX_ATTEMPTS; i++) {
    if (cached === undefined) {
      const outcome = await attempt(await read(), key, noteWrite);
      if (outcome !== RETRY) return outcome;
      continue;
    }
    const copy = cached;
    cached = undefined;
    let sent = false;
    let outcome: { value: T | typeof RETRY } | { error: unknown };
    try {
      outcome = { value: await attempt(copy, key, () => (sent = true)) };
    } catch (error) {
      outcome = { error };
    }
    if ('value' in outcome && outcome.value === RETRY) {
      recordCachedCopyWrite('behind');
      continue;
    }
    if (sent) {
      if ('error' in outcome) throw outcome.error;
      recordCachedCopyWrite('current');
      return outcome.value as T;
    }
    // Decided without a write: it stands only if the copy was the store's current object.
    const current = await read();
    if (current === undefined || current.resourceVersion !== copy.resourceVersion) {
      recordCachedCopyWrite('behind');
      const fresh = await attempt(current, key, noteWrite);
      if (fresh !== RETRY) return fresh;
      continue;
    }
    recordCachedCopyWrite('current');
    if ('error' in outcome) throw outcome.error;
    return outcome.value as T;
  }
  throw conflict({ group: target.info.group, resource: target.info.resource }, name, 'too many concurrent updates, please retry');
}

/** The write notice of an attempt on an object read from the store: nothing to decide by it. */
function noteWrite(): void {}
