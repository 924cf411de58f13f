import type { EventEmitter } from 'node:events';

/**
 * The lifetime of one watch. Its `signal` aborts on the first of: a source's `close` (client
 * disconnect), server shutdown (or another stop signal), `end()` or `abandon()`. Once `begin` was called, an abort ends the
 * watch, as does `timeoutMs` elapsing. A watch ends exactly once: end hooks run once, in the order
 * they were added, and never after `abandon()`.
 */
export class WatchLifetime {
  private readonly controller = new AbortController();
  /** Aborts when the watch is over or its client or the server went away; pass it to storage. */
  readonly signal: AbortSignal = this.controller.signal;
  private over = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly endHooks: Array<() => void> = [];

  private readonly stopSignals: readonly AbortSignal[];

  /** SHUTDOWN: the server's shutdown signal, or several signals any of which stops the watch. */
  constructor(shutdown: AbortSignal | readonly AbortSignal[], ...sources: EventEmitter[]) {
    this.stopSignals = Array.isArray(shutdown) ? shutdown : [shutdown];
    for (const source of sources) source.on('close', this.stop);
    for (const signal of this.stopSignals) {
      if (signal.aborted) this.controller.abort();
      else signal.addEventListener('abort', this.stop, { once: true });
    }
  }

  private readonly stop = (): void => this.controller.abort();

  /** Whether the watch is over (ended or abandoned): nothing more may be written. */
  get ended(): boolean {
    return this.over;
  }

  /**
   * Starts the stream's clock: from now on an abort ends the watch, and after `timeoutMs` it ends by
   * itself, calling `onTimeout` first (for a last bookmark).
   */
  begin(timeoutMs: number, onTimeout: () => void): void {
    this.signal.addEventListener('abort', () => this.end(), { once: true });
    this.timer = setTimeout(() => {
      onTimeout();
      this.end();
    }, timeoutMs);
  }

  /** Runs `hook` when the watch ends (not when it is abandoned). */
  onEnd(hook: () => void): void {
    this.endHooks.push(hook);
  }

  /** Ends the watch: aborts the signal, stops the clock and runs the end hooks (once). */
  end(): void {
    if (this.over) return;
    this.over = true;
    this.controller.abort();
    this.release();
    for (const hook of this.endHooks) hook();
  }

  /**
   * Gives the watch up before anything was sent, without running the end hooks: the caller answers
   * with an error response instead of ending the stream.
   */
  abandon(): void {
    this.over = true;
    this.release();
    this.controller.abort();
  }

  private release(): void {
    clearTimeout(this.timer);
    for (const signal of this.stopSignals) signal.removeEventListener('abort', this.stop);
  }
}
