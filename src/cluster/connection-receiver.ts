import type { Server } from 'node:http';
import { Socket } from 'node:net';
import { logger } from '../logging/logger.js';
import type { ClientConnections } from '../server/client-connections.js';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import { workerBusy, workerConnections } from '../metrics/metrics.js';
import {
  isConnectionGrantMessage,
  isConnectionMessage,
  isMoveConnectionMessage,
  isPingMessage,
  isShedConnectionMessage,
  type ClientConnectionGoneMessage,
  type ClientConnectionMessage,
  type ConnectionClaimMessage,
  type ConnectionClosedMessage,
  type ConnectionRefusedMessage,
  type DrainingMessage,
  type PongMessage,
  type WorkerLoadMessage,
} from './messages.js';

/** How often a worker tells the primary how busy its event loop was. */
const LOAD_REPORT_MS = 500;

/** Sends `message` to the primary; a closed channel (the primary is gone) is not an error here. */
function tell(
  message:
    | ClientConnectionGoneMessage
    | ClientConnectionMessage
    | ConnectionClaimMessage
    | ConnectionClosedMessage
    | ConnectionRefusedMessage
    | DrainingMessage
    | PongMessage
    | WorkerLoadMessage,
): void {
  const send = process.send?.bind(process);
  if (send === undefined) return;
  send(message, undefined, {}, (err: Error | null) => {
    if (err !== null) logger.debug('could not reach the primary', { type: message.type, error: err });
  });
}

/**
 * The libuv handle under a socket Node built from a handle passed over IPC. Node starts reading such
 * a socket as it builds it; the fields below are how net.Socket itself stops and restarts reading.
 */
interface StreamHandle {
  reading: boolean;
  readStart(): number;
  readStop(): number;
}

function streamHandle(socket: Socket): StreamHandle | undefined {
  const handle = (socket as unknown as { _handle?: Partial<StreamHandle> | null })._handle;
  return handle && typeof handle.readStart === 'function' && typeof handle.readStop === 'function' ? (handle as StreamHandle) : undefined;
}

/** Stops the socket from reading (synchronously, before the event loop could read a byte). */
function holdUnread(socket: Socket): void {
  const handle = streamHandle(socket);
  if (handle?.reading === true) {
    handle.reading = false;
    handle.readStop();
  }
}

/** Lets a socket held by {@link holdUnread} read again. */
function releaseReading(socket: Socket): void {
  const handle = streamHandle(socket);
  if (handle !== undefined && !handle.reading && !socket.destroyed) {
    handle.reading = true;
    const err = handle.readStart();
    if (err !== 0) socket.destroy(new Error(`cannot read from a handed connection (errno ${err})`));
  }
}

/**
 * The worker side of the primary's {@link ConnectionDistributor}. Guarantees:
 * - A socket handed over is held unread and claimed (`capstan:connection-claim`); it is served by
 *   the HTTP server only when the primary grants the claim, and closed unread when the primary
 *   denies it (it had given up on this worker and handed the connection to another). So a
 *   connection is read by exactly one worker, however late a stalled worker wakes up.
 * - A socket arriving after {@link close}, or a message without its socket, is refused
 *   (`capstan:connection-refused`): the primary hands it to another worker.
 * - A ping from the primary is answered (it asks after this worker stopped claiming in time).
 * - Sockets granted after {@link drain} are served (the server then answers with `Connection: close`).
 * - The primary is told when a connection it granted closes (`capstan:connection-closed`).
 */
export class ConnectionReceiver {
  private route: ((socket: Socket) => Server | undefined) | undefined;
  private closed = false;
  private readonly held = new Map<number, Socket>();
  /** Set by {@link close} while claims are outstanding; called when the last one is answered. */
  private settled: (() => void) | undefined;
  private loadTimer: NodeJS.Timeout | undefined;

  /** `index`: this worker's slot, the label of its connection gauge. */
  constructor(private readonly index: number) {}

  /**
   * Starts serving handed connections with the server `route` picks for each (by its local port:
   * plain HTTP or HTTPS; servers that do not listen themselves). `shed` is called when the primary
   * asks this worker to move a client elsewhere (see ShedConnectionMessage), `move` when it asks to
   * move one connection to the worker serving its client's others (see MoveConnectionMessage). Call once.
   */
  serve(
    route: (socket: Socket) => Server | undefined,
    shed: (share: number, settling: ReadonlySet<string>) => boolean = () => false,
    move: (session: number) => boolean = () => false,
  ): void {
    if (this.route !== undefined) throw new Error('ConnectionReceiver.serve called twice');
    this.route = route;
    process.on('message', (msg: unknown, handle: unknown) => {
      if (isPingMessage(msg)) {
        tell({ type: 'capstan:pong' });
        return;
      }
      if (isShedConnectionMessage(msg)) {
        if (!this.closed) shed(msg.share, new Set(msg.settling));
        return;
      }
      if (isMoveConnectionMessage(msg)) {
        if (!this.closed) move(msg.session);
        return;
      }
      if (isConnectionGrantMessage(msg)) {
        this.granted(route, msg.id, msg.granted);
        return;
      }
      if (!isConnectionMessage(msg)) return;
      if (this.closed || !(handle instanceof Socket)) {
        if (handle instanceof Socket) handle.destroy();
        tell({ type: 'capstan:connection-refused', id: msg.id });
        return;
      }
      holdUnread(handle);
      this.held.set(msg.id, handle);
      tell({ type: 'capstan:connection-claim', id: msg.id });
    });
    this.reportLoad();
  }

  /** Tells the primary, every LOAD_REPORT_MS until {@link close}, how busy the event loop has been lately. */
  private reportLoad(): void {
    let last: EventLoopUtilization = performance.eventLoopUtilization();
    let busy = 0;
    const labels = { worker: String(this.index) };
    this.loadTimer = setInterval(() => {
      const now = performance.eventLoopUtilization();
      const recent = Math.min(1, Math.max(0, performance.eventLoopUtilization(now, last).utilization));
      last = now;
      // Smoothed over the last seconds: one long request or collection is not a busy worker.
      busy = (busy + recent) / 2;
      workerBusy.set(labels, busy);
      tell({ type: 'capstan:load', busy });
    }, LOAD_REPORT_MS);
    this.loadTimer.unref();
  }

  private granted(route: (socket: Socket) => Server | undefined, id: number, granted: boolean): void {
    const socket = this.held.get(id);
    if (socket === undefined) return;
    this.held.delete(id);
    if (!granted) {
      // Closes this process's descriptor only: the worker the primary chose instead keeps its own.
      socket.destroy();
    } else {
      const server = route(socket);
      if (server === undefined) {
        logger.error('a handed connection arrived on a port this worker does not serve', { port: socket.localPort });
        socket.destroy();
        return;
      }
      // The primary hands new connections to the worker serving the fewest.
      const labels = { worker: String(this.index) };
      workerConnections.inc(labels);
      socket.once('close', () => {
        workerConnections.dec(labels);
        tell({ type: 'capstan:connection-closed' });
      });
      server.emit('connection', socket);
      releaseReading(socket);
      socket.resume();
    }
    if (this.held.size === 0) this.settled?.();
  }

  /** Reports each HTTP/2 connection's client to the primary (client-affinity.ts), for HandedConnections.clients. */
  readonly clients: ClientConnections = {
    opened: (connection) => tell({ type: 'capstan:client-connection', ...connection }),
    gone: (session, shed) =>
      tell(shed === true ? { type: 'capstan:client-connection-gone', session, shed } : { type: 'capstan:client-connection-gone', session }),
  };

  /** The server starts draining: the primary sends no new connections to this worker. */
  drain(): void {
    tell({ type: 'capstan:draining' });
  }

  /**
   * The server has closed: every connection still arriving is refused and goes to another worker.
   * Resolves once no claimed connection awaits the primary's answer (at most `settleMs`): one the
   * primary grants meanwhile is served, since the primary has already let go of it.
   */
  close(settleMs = 5000): Promise<void> {
    this.closed = true;
    clearInterval(this.loadTimer);
    if (this.held.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, settleMs);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.settled = done;
    });
  }
}
