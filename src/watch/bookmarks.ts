import type { WatchEncoder } from './watch-encoder.js';
import type { WatchOutput } from './watch-output.js';
import type { WatchProgress } from './watch-progress.js';

/** The annotation of the bookmark that closes the initial events of a `sendInitialEvents=true` watch. */
export const INITIAL_EVENTS_END: Readonly<Record<string, string>> = { 'k8s.io/initial-events-end': 'true' };

/**
 * The BOOKMARK events of one watch, sent only when the client allowed them, each at the newest
 * version the watch has seen: on demand (end of initial events, timeout) and, between `start` and
 * the end of the watch, periodically at a jittered 75-100% of `intervalMs` so that quiet watches
 * keep a recent version to resume from.
 */
export class WatchBookmarks {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly allowed: boolean,
    private readonly intervalMs: number,
    private readonly encoder: WatchEncoder,
    private readonly progress: WatchProgress,
    private readonly out: WatchOutput,
  ) {}

  /** Sends a bookmark now (when allowed), with `annotations` when given. */
  send(annotations?: Readonly<Record<string, string>>): void {
    if (this.allowed) this.out.write(this.encoder.bookmark(this.progress.resourceVersion, annotations && { ...annotations }));
  }

  /** Sends bookmarks periodically until `signal` aborts. */
  start(signal: AbortSignal): void {
    if (!this.allowed || signal.aborted) return;
    signal.addEventListener('abort', () => clearTimeout(this.timer), { once: true });
    const schedule = (): void => {
      this.timer = setTimeout(
        () => {
          this.send();
          if (!signal.aborted) schedule();
        },
        this.intervalMs * (0.75 + Math.random() * 0.25),
      );
    };
    schedule();
  }
}
