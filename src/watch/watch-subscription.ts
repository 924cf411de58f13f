import { storageErrorToApi } from '../rest/storage-errors.js';
import type { ResourceTarget } from '../rest/server-context.js';
import type { ChangeFeed } from '../rest/watch.js';
import { type ChangeEvent, type WatchTrigger } from '../storage/storage.js';
import type { WatchEventFilter } from './event-filter.js';
import type { WatchEncoder } from './watch-encoder.js';
import { expiredStatus, failureStatus } from './watch-errors.js';
import type { WatchLifetime } from './watch-lifetime.js';
import type { WatchOutput } from './watch-output.js';
import type { WatchProgress } from './watch-progress.js';
import { StorageError } from '../api/storage-error.js';

/** The parts of an open watch its change stream feeds. */
export interface OpenWatch {
  lifetime: WatchLifetime;
  out: WatchOutput;
  encoder: WatchEncoder;
  progress: WatchProgress;
  filter: WatchEventFilter;
  /** Narrows the changes storage hands the watch (see watch-trigger.ts); its filter still decides. */
  trigger?: WatchTrigger;
}

/**
 * Subscribes the watch to every change of the feed after its start version, delivering what the filter
 * passes, in order and exactly once, until the watch ends (the subscription ends with it).
 *
 * Errors: when storage refuses the subscription before anything was sent (other than 410), the watch
 * is abandoned and this rejects with the mapped ApiError, so the client gets an HTTP error status.
 * Once the stream has started, a refusal becomes an ERROR event (410 Expired naming the start version when the
 * history no longer reaches it) and the watch ends; so does a later loss of history, naming the
 * newest version the watch had seen.
 */
export async function followChanges(target: ResourceTarget, feed: ChangeFeed, watch: OpenWatch): Promise<void> {
  const from = feed.resourceVersion;
  const { lifetime, out, encoder, progress, filter, trigger } = watch;
  const onFailure = (err: unknown): string | Buffer => encoder.error(failureStatus(err));
  const onEvent = (event: ChangeEvent): void => {
    if (lifetime.ended) return;
    progress.advance(event.resourceVersion);
    const type = filter(event);
    if (type === undefined) return;
    if (type instanceof Promise)
      out.write(
        type.then((t) => (t === undefined ? undefined : encoder.change(event, t))),
        onFailure,
      );
    else out.write(encoder.change(event, type), onFailure);
  };
  const onHistoryLost = (err: StorageError): void => {
    out.write(encoder.error(expiredStatus(progress.resourceVersion, err)));
    lifetime.end();
  };
  try {
    await feed.subscribe(from, onEvent, lifetime.signal, onHistoryLost, trigger);
    if (!lifetime.ended) out.start();
  } catch (err) {
    const expired = err instanceof StorageError && err.code === 'Gone';
    if (!out.started && !expired) {
      lifetime.abandon();
      throw storageErrorToApi(err, target, target.ri.name);
    }
    out.write(encoder.error(err instanceof StorageError && expired ? expiredStatus(from, err) : failureStatus(storageErrorToApi(err, target, target.ri.name))));
    lifetime.end();
  }
}
