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

  /** Queues a frame unless the watch is over. */
  write(frame: string | Buffer): void {
    if (!this.lifetime.ended) this.writer.push(frame);
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
