import type { Response } from 'express';
import { recordWatchDropped, recordWatchEventSent } from '../metrics/metrics.js';
import type { WatchLifetime } from './watch-lifetime.js';
import { WatchWriter } from './watch-writer.js';

/** How the response of a watch is written. */
export interface WatchOutputOptions {
  contentType: string;
  /** Send the 200 and headers now rather than with the first event or once storage accepted the watch. */
  flushHeaders: boolean;
  /** A watcher whose unsent backlog passes this many bytes is closed. */
  maxBacklogBytes: number;
  /** The resource named in the watch metrics. */
  metricResource: string;
}

/**
 * The response of one watch: a 200 chunked stream of frames. Frames written after the watch ended
 * are dropped; when the watch ends, queued frames are written and the response ends. A reader that
 * falls too far behind ends the watch (counted as dropped) rather than being buffered without bound.
 */
export class WatchOutput {
  private readonly writer: WatchWriter;
  /** Frames still being produced (custom resources converting by webhook), written in order after each other. */
  private tail: Promise<void> | undefined;
  private producing = 0;

  constructor(
    private readonly res: Response,
    private readonly lifetime: WatchLifetime,
    options: WatchOutputOptions,
  ) {
    res.status(200);
    res.setHeader('Content-Type', options.contentType);
    res.setHeader('Cache-Control', 'no-cache, private');
    if (options.flushHeaders) res.flushHeaders();
    const resource = options.metricResource;
    this.writer = new WatchWriter(
      res,
      options.maxBacklogBytes,
      () => {
        recordWatchDropped(resource);
        lifetime.end();
      },
      (frames) => recordWatchEventSent(resource, frames),
    );
    lifetime.onEnd(() => {
      this.writer.end();
      res.end();
    });
  }

  /**
   * Queues a frame unless the watch is over. A frame still being produced (a promise) is queued in
   * its turn (undefined: nothing to write): frames written after it wait for it, so every watcher
   * sees events in order. When it
   * fails, the frame `onFailure` makes of the error (an ERROR event) is the last one and the watch ends.
   */
  write(frame: string | Buffer | Promise<string | Buffer | undefined>, onFailure?: (err: unknown) => string | Buffer): void {
    if (this.lifetime.ended) return;
    if (this.producing === 0 && !(frame instanceof Promise)) {
      this.writer.push(frame);
      return;
    }
    if (frame instanceof Promise) frame.catch(() => undefined);
    this.producing++;
    this.tail = (this.tail ?? Promise.resolve()).then(async () => {
      try {
        const ready = await frame;
        if (ready !== undefined && !this.lifetime.ended) this.writer.push(ready);
      } catch (err) {
        if (!this.lifetime.ended && onFailure !== undefined) {
          this.writer.push(onFailure(err));
          this.lifetime.end();
        }
      } finally {
        this.producing--;
        if (this.producing === 0) this.tail = undefined;
      }
    });
  }

  /** Resolves once every frame still being produced was queued (or dropped). */
  async produced(): Promise<void> {
    while (this.tail !== undefined) await this.tail;
  }

  /** Bytes queued and not yet handed to the socket. */
  get queuedBytes(): number {
    return this.writer.queuedBytes;
  }

  /** Resolves once queued frames are with the socket and it takes more (or the watch is over). */
  ready(): Promise<void> {
    return this.writer.ready();
  }

  /** Whether the status line and headers were sent (an error can no longer be an HTTP status). */
  get started(): boolean {
    return this.res.headersSent;
  }

  /** Sends the status line and headers now, if not yet sent. */
  start(): void {
    if (!this.res.headersSent) this.res.flushHeaders();
  }
}
