import type { StoredObject } from '../storage/storage.js';
import type { WatchEncoder } from './watch-encoder.js';
import { failureStatus } from './watch-errors.js';
import type { WatchLifetime } from './watch-lifetime.js';
import type { WatchOutput } from './watch-output.js';

/** Initial events are handed to the socket in chunks of about this size, waiting for it to drain. */
const INITIAL_CHUNK_BYTES = 256 * 1024;

/**
 * Sends `items` as synthetic ADDED events, in order, with backpressure: at most about one socket
 * buffer per watcher is held in memory. Resolves false when the watch ended before all were sent.
 */
export async function sendInitialEvents(items: readonly StoredObject[], encoder: WatchEncoder, out: WatchOutput, lifetime: WatchLifetime): Promise<boolean> {
  for (const item of items) {
    if (lifetime.ended) return false;
    const frame = encoder.added(item.json);
    out.write(frame, (err) => encoder.error(failureStatus(err)));
    // A frame converting by webhook is awaited before the next: one conversion at a time per watch.
    if (frame instanceof Promise) await out.produced();
    if (out.queuedBytes >= INITIAL_CHUNK_BYTES) await out.ready();
  }
  return true;
}
