import type { Response } from 'express';

/** How long frames of a watch may wait to be written together (bounds syscalls per watcher). */
export const WATCH_FLUSH_DELAY_MS = 5;

const scheduled = new Set<WatchWriter>();
let timer: NodeJS.Timeout | undefined;

function flushAll(): void {
  timer = undefined;
  const writers = [...scheduled];
  scheduled.clear();
  for (const w of writers) w.flush();
}

/**
 * The output side of one watch: frames are queued and written in batches (one `write` per watcher
 * per few milliseconds rather than per event), respecting the socket's backpressure. When the unsent
 * backlog (queued plus buffered by the socket) passes `maxBacklogBytes`, `onOverflow` is called once
 * and nothing more is queued: a slow reader is closed, never buffered without bound.
 */
export class WatchWriter {
  private pending: Array<string | Buffer> = [];
  private pendingBytes = 0;
  private waitingForDrain = false;
  /** Bytes the socket still held when it last refused more (0 after `drain`). */
  private socketBacklog = 0;
  private closed = false;
  private readonly drainWaiters: Array<() => void> = [];

  constructor(
    private readonly res: Response,
    private readonly maxBacklogBytes: number,
    private readonly onOverflow: () => void,
    /** Told how many frames each flush handed to the socket (metrics). */
    private readonly onWritten: (frames: number) => void = () => undefined,
  ) {
    res.on('drain', () => {
      this.waitingForDrain = false;
      this.socketBacklog = 0;
      if (this.pending.length > 0) this.schedule();
      for (const w of this.drainWaiters.splice(0)) w();
    });
    res.on('close', () => {
      this.close();
    });
  }

  /** Queues a frame; it is written within WATCH_FLUSH_DELAY_MS unless the socket is backed up. */
  push(frame: string | Buffer): void {
    if (this.closed) return;
    this.pending.push(frame);
    this.pendingBytes += frame.length;
    // The socket's own buffer is checked when it pushes back (flush), not per frame: it is costly.
    if (this.pendingBytes + this.socketBacklog > this.maxBacklogBytes) {
      this.overflow();
      return;
    }
    this.schedule();
  }

  /** Writes everything queued now (unless the socket asked to wait for `drain`). */
  flush(): void {
    if (this.closed || this.waitingForDrain || this.pending.length === 0) return;
    const frames = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const data = typeof frames[0] === 'string' && frames.every((f) => typeof f === 'string')
      ? (frames as string[]).join('')
      : Buffer.concat(frames.map((f) => (typeof f === 'string' ? Buffer.from(f) : f)));
    this.onWritten(frames.length);
    if (!this.res.write(data)) {
      this.waitingForDrain = true;
      this.socketBacklog = this.res.writableLength;
      if (this.socketBacklog > this.maxBacklogBytes) this.overflow();
    }
  }

  private overflow(): void {
    this.close();
    this.onOverflow();
  }

  /**
   * Resolves once queued frames are handed to the socket and it is ready for more. Producers of
   * large initial states await this between chunks so memory per watcher stays bounded.
   */
  async ready(): Promise<void> {
    this.flush();
    if (this.closed || !this.waitingForDrain) return;
    await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /** Bytes queued here (not yet handed to the socket). */
  get queuedBytes(): number {
    return this.pendingBytes;
  }

  /** Writes what is queued and stops accepting frames. */
  end(): void {
    if (this.closed) return;
    const wasWaiting = this.waitingForDrain;
    this.waitingForDrain = false;
    this.flush();
    this.waitingForDrain = wasWaiting;
    this.close();
  }

  private close(): void {
    this.closed = true;
    scheduled.delete(this);
    for (const w of this.drainWaiters.splice(0)) w();
  }

  private schedule(): void {
    if (this.waitingForDrain || scheduled.has(this)) return;
    scheduled.add(this);
    timer ??= setTimeout(flushAll, WATCH_FLUSH_DELAY_MS);
  }
}
