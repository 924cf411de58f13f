import { setTimeout as delay } from 'node:timers/promises';
import type { Storage } from '../storage/storage.js';
import type { WatchProgress } from './watch-progress.js';

/** The longest a watch of a removed type waits to pass on the changes made before the removal. */
const DRAIN_LIMIT_MS = 5_000;

/**
 * Stops a custom resource's watch (aborts STOP) once REMOVED says its type is no longer served, but
 * only after the watch has passed on every change of the type made until then: a CRD's cleanup
 * deletes its objects before the CRD goes, so watchers get those DELETED events before the stream
 * closes, on every worker, whichever of the type's and the CRD's change streams this process reads
 * first. Waits at most DRAIN_LIMIT_MS; a storage error ends the watch at once.
 */
export function stopWhenRemoved(
  removed: AbortSignal,
  stop: AbortController,
  watch: {
    storage: Storage;
    type: string;
    progress: WatchProgress;
    /** Resolves once the frames still being produced are queued. */
    produced: () => Promise<void>;
    /** Aborts when the watch is over. */
    ended: AbortSignal;
  },
): void {
  const drainThenStop = async (): Promise<void> => {
    try {
      const last = await watch.storage.currentResourceVersion(watch.type);
      await Promise.race([watch.progress.reached(last), delay(DRAIN_LIMIT_MS, undefined, { signal: watch.ended })]);
      await watch.produced();
    } catch {
      // Storage unreachable, or the watch ended meanwhile: stop now.
    }
    stop.abort();
  };
  if (removed.aborted) void drainThenStop();
  else removed.addEventListener('abort', () => void drainThenStop(), { once: true, signal: watch.ended });
}
