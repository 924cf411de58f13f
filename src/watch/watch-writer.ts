import type { Socket } from 'node:net';
import type { Response } from 'express';

const CRLF = Buffer.from('\r\n');

/** Below this many watchers with frames to write, frames go out as soon as the code that queued them has run. */
export const WATCH_IMMEDIATE_BELOW = 200;
/** How long frames may wait to be written together once there are more watchers. */
export const WATCH_FLUSH_DELAY_MS = 5;
/** The longest wait, reached with many watchers (bounds the added delivery latency). */
export const WATCH_FLUSH_MAX_DELAY_MS = 50;
/** Watchers to write per millisecond of delay: the wait grows with the number of sockets to write. */
const WATCHERS_PER_DELAY_MS = 100;

/**
 * HTTP/1.1 chunks of shared frames: a change's frame is one Buffer for every watcher of its
 * encoding (event-encoding.ts), and a flush that writes it alone writes the same chunk, so the
 * chunk is built once, not once per watcher.
 */
const chunks = new WeakMap<Buffer, Buffer>();

/** The HTTP/1.1 chunk of `data`; kept for reuse when `data` is a shared frame. */
function chunkOf(data: Buffer, shared: boolean): Buffer {
  let chunk = shared ? chunks.get(data) : undefined;
  if (chunk === undefined) {
    chunk = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, CRLF]);
    if (shared) chunks.set(data, chunk);
  }
  return chunk;
}

/** Writers waiting for the next flush (each at most once: see `WatchWriter.isScheduled`). */
let scheduled: WatchWriter[] = [];
let timer: NodeJS.Timeout | undefined;
/** A flush (or the decision to wait for one) is queued as a microtask. */
let flushQueued = false;
/** The flush under way was not delayed (few watchers had frames). */
let flushingAtOnce = true;
/** Writers whose socket had a write in flight at their flush: they write in the check phase. */
let deferred: WatchWriter[] = [];
let deferredImmediate: NodeJS.Immediate | undefined;

function flushDeferred(): void {
  deferredImmediate = undefined;
  const writers = deferred;
  deferred = [];
  for (const w of writers) w.flushDeferred();
}

/**
 * Runs `send` (a write's response) once the watch frames put off to the check phase are written,
 * at once when none are: a write's watchers then get its event no later than the writer gets its
 * answer, even when their sockets were busy (see `WatchWriter.flushScheduled`).
 */
export function afterDeferredWatchFrames(send: () => void): void {
  if (deferredImmediate === undefined) send();
  // Immediates run in order: this one after the flush of the deferred writers.
  else setImmediate(send);
}

function flushAll(atOnce: boolean): void {
  timer = undefined;
  flushQueued = false;
  flushingAtOnce = atOnce;
  const writers = scheduled;
  scheduled = [];
  for (const w of writers) w.flushScheduled();
}

/**
 * How long queued frames wait for a flush when this many watches have frames to write: not at all
 * below 200, then 5 ms up to 500, 10 ms at 1,000, growing to 50 ms at 5,000 and beyond. Each flush
 * costs one socket write per watcher with frames, so when changes go to many watchers a longer
 * window puts several events in one write instead of spending the CPU on syscalls (the cost that
 * saturates the process first). Changes that reach few watches (a pod's change, which only its
 * node's watch is handed among a thousand kubelets') go out at once, however many watches are open.
 */
export function flushDelayMs(watchers: number): number {
  if (watchers < WATCH_IMMEDIATE_BELOW) return 0;
  return Math.min(WATCH_FLUSH_MAX_DELAY_MS, Math.max(WATCH_FLUSH_DELAY_MS, Math.round(watchers / WATCHERS_PER_DELAY_MS)));
}

/**
 * Queues the next flush. A microtask, after the code that queued the frames (every event of one
 * storage write or stream read shares it) but before the write's own response is encoded and sent,
 * counts the watches with frames: when few, it flushes them at once, so an informer sees its event
 * no later than the writer sees the response, as with kube-apiserver; when many, the flush waits
 * (`flushDelayMs`) and later frames join it.
 */
function requestFlush(): void {
  if (timer !== undefined || flushQueued) return;
  flushQueued = true;
  queueMicrotask(flushOrWait);
}

function flushOrWait(): void {
  const delay = flushDelayMs(scheduled.length);
  if (delay === 0) flushAll(true);
  else timer = setTimeout(() => flushAll(false), delay);
}

/**
 * The output side of one watch: frames are queued and written in batches (one `write` per watcher
 * per flush rather than per event, see `requestFlush`), respecting the socket's backpressure. When the unsent
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
  private readonly socket: Socket | undefined;
  /** In `scheduled` for the next flush. */
  private isScheduled = false;
  /** Chunks go straight to the socket from now on (see `writeChunk`). */
  private direct = false;

  constructor(
    private readonly res: Response,
    private readonly maxBacklogBytes: number,
    private readonly onOverflow: () => void,
    /** Told how many frames each flush handed to the socket (metrics). */
    private readonly onWritten: (frames: number) => void = () => undefined,
  ) {
    res.on('drain', this.onDrain);
    // Direct chunk writes (see `writeChunk`) make the socket, not the response, emit `drain`. An
    // HTTP/2 stream shares its connection with others: frames always go through the response.
    this.socket = res.req.httpVersionMajor === 2 ? undefined : (res.socket ?? undefined);
    this.socket?.on('drain', this.onDrain);
    res.on('close', () => {
      this.close();
    });
  }

  private readonly onDrain = (): void => {
    if (!this.waitingForDrain && this.drainWaiters.length === 0) return;
    this.waitingForDrain = false;
    this.socketBacklog = 0;
    if (this.pending.length > 0) this.schedule();
    for (const w of this.drainWaiters.splice(0)) w();
  };

  /** Queues a frame; it is written within the flush window unless the socket is backed up. */
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

  /** Called by the shared flush (timer or microtask). */
  flushScheduled(): void {
    this.isScheduled = false;
    // A TLS socket completes each write in the check phase of the loop turn, and writes made before
    // then queue behind it until the turn after (then `write` soon returns false and waits for
    // `drain`, another turn). Under load a turn is long: frames wait for the check phase instead,
    // when the socket is free again, and go out in one write.
    // Only while flushes are immediate (few watchers to write): with many, the flush spacing already
    // trades latency for fewer writes, and writes' responses are not held (see afterDeferredWatchFrames).
    if (flushingAtOnce && this.socket !== undefined && this.socket.writableLength > 0 && !this.closed && !this.waitingForDrain && this.pending.length > 0) {
      this.isScheduled = true;
      deferred.push(this);
      deferredImmediate ??= setImmediate(flushDeferred);
      return;
    }
    this.flush();
  }

  /** Called in the check phase for a writer `flushScheduled` put off. */
  flushDeferred(): void {
    this.isScheduled = false;
    this.flush();
  }

  /** Writes everything queued now (unless the socket asked to wait for `drain`). */
  flush(): void {
    if (this.closed || this.waitingForDrain || this.pending.length === 0) return;
    const frames = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const data =
      frames.length === 1
        ? frames[0]
        : typeof frames[0] === 'string' && frames.every((f) => typeof f === 'string')
          ? frames.join('')
          : Buffer.concat(frames.map((f) => (typeof f === 'string' ? Buffer.from(f) : f)));
    this.onWritten(frames.length);
    if (!this.writeChunk(data, frames.length === 1)) {
      this.waitingForDrain = true;
      this.socketBacklog = this.res.writableLength;
      if (this.socketBacklog > this.maxBacklogBytes) this.overflow();
    }
  }

  /**
   * Writes one piece of the body. Once the headers are out and nothing of the response waits
   * outside the socket, the HTTP/1.1 chunk (`<size>\r\n<data>\r\n`) goes to the socket as one
   * write, exactly the bytes `res.write` would produce, without its per-write corking (four
   * buffered writes and a `writev` per chunk, the main cost with thousands of watchers). `end()`
   * on the response still writes the last chunk. Until then `res.write` frames it.
   */
  private writeChunk(data: string | Buffer, shared: boolean): boolean {
    const res = this.res;
    const socket = this.socket;
    if (!this.direct) {
      // Once true it stays true: after the switch nothing else writes to the response until `end()`.
      this.direct = socket !== undefined && res.socket === socket && res.headersSent && res.chunkedEncoding && res.writableLength === socket.writableLength;
    }
    if (!this.direct || socket === undefined) return res.write(data);
    if (typeof data === 'string') return socket.write(`${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`);
    return socket.write(chunkOf(data, shared));
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
    if (this.closed) return;
    this.closed = true;
    // The socket outlives the response when the connection is kept alive.
    this.socket?.off('drain', this.onDrain);
    for (const w of this.drainWaiters.splice(0)) w();
  }

  private schedule(): void {
    if (this.waitingForDrain || this.isScheduled) return;
    this.isScheduled = true;
    scheduled.push(this);
    requestFlush();
  }
}
