import type { Worker } from 'node:cluster';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { logger } from '../logging/logger.js';
import {
  isConnectionRefusedMessage, isConnectionTakenMessage, isDrainingMessage, type ConnectionMessage,
} from './messages.js';

/** Options of {@link ConnectionDistributor}. */
export interface DistributorOptions {
  /**
   * A hand-off a live worker has not acknowledged for this long is given up: the primary closes its
   * copy (the worker keeps its own if the socket reached it). Guards against a socket lost inside
   * Node's IPC layer without the worker dying, which would otherwise stay open for ever.
   */
  handoffTimeoutMs?: number;
  /** A connection handed this many times without being taken is closed (only a broken cluster gets there). */
  maxHandoffs?: number;
  /**
   * A worker with this many unacknowledged hand-offs (stopped, or its event loop blocked) is passed
   * over while another ready worker has fewer.
   */
  maxUnacknowledged?: number;
}

interface Handoff {
  id: number;
  socket: Socket;
  worker: Worker;
  handoffs: number;
  timer: NodeJS.Timeout;
}

interface Waiting {
  socket: Socket;
  handoffs: number;
}

/** How often, and how long, to wait for the IPC channel of an exited worker to reach its end. */
const CHANNEL_POLL_MS = 10;
const CHANNEL_WAIT_MS = 2000;

/**
 * The primary's listener and connection hand-off. Replaces the cluster module's round-robin, which
 * leaves a connection open and unanswered when the worker it was handed to dies before taking it.
 *
 * Guarantees:
 * - The primary accepts with reading paused, so it never reads a byte of any connection.
 * - Each connection goes to the next ready worker in turn (consecutive connections alternate over
 *   the ready workers), passing over a worker that has not acknowledged `maxUnacknowledged`
 *   hand-offs while another has not. Only workers added with {@link addWorker} (they reported
 *   ready) receive connections, and none after they report draining.
 * - The primary keeps its own copy of every handed socket until the worker acknowledges it. The
 *   worker acknowledges before it first reads from the socket, so when the worker exits, its send
 *   fails or its IPC channel closes without an acknowledgement, the socket is unread and is handed
 *   to another worker: the client never notices.
 * - No socket is left without an owner: with no worker to take it, it waits for one (a restart);
 *   after {@link shutdown}, once no worker serves, the listener closes and such sockets are closed.
 */
export class ConnectionDistributor {
  /** `http://host:port` of the listener. */
  readonly url: string;
  readonly port: number;
  private readonly ready: Worker[] = [];
  private readonly draining = new Set<Worker>();
  private readonly known = new WeakSet<Worker>();
  private readonly pending = new Map<number, Handoff>();
  private readonly unacknowledged = new Map<Worker, number>();
  private waiting: Waiting[] = [];
  private cursor = 0;
  private nextId = 0;
  private shuttingDown = false;
  private closed = false;
  private readonly handoffTimeoutMs: number;
  private readonly maxHandoffs: number;
  private readonly maxUnacknowledged: number;

  private constructor(private readonly server: Server, options: DistributorOptions) {
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.url = `http://${host}:${address.port}`;
    this.port = address.port;
    this.handoffTimeoutMs = options.handoffTimeoutMs ?? 30_000;
    this.maxHandoffs = options.maxHandoffs ?? 8;
    this.maxUnacknowledged = options.maxUnacknowledged ?? 8;
    server.on('connection', (socket: Socket) => {
      // The worker sees the same error on its copy; the primary's copy only waits.
      socket.on('error', () => undefined);
      this.hand(socket, 0);
    });
    server.on('error', (err: unknown) => logger.error('accepting a connection failed', { error: err }));
  }

  /** Binds `port` (0: a free one) on `host`; rejects when the port cannot be bound. */
  static async listen(port: number, host: string, options: DistributorOptions = {}): Promise<ConnectionDistributor> {
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new ConnectionDistributor(server, options);
  }

  /** `worker` serves: from now on it receives connections in turn (idempotent). */
  addWorker(worker: Worker): void {
    if (!this.known.has(worker)) {
      this.known.add(worker);
      worker.on('message', (msg: unknown) => this.onMessage(worker, msg));
      worker.on('disconnect', () => this.lost(worker));
      worker.on('exit', () => this.lost(worker));
    }
    if (worker.isDead() || !worker.isConnected() || this.ready.includes(worker) || this.draining.has(worker)) return;
    this.ready.push(worker);
    this.flushWaiting();
  }

  /**
   * The cluster is stopping: keep handing connections to ready workers, and close the listener as
   * soon as none is left (they drain, exit or crash; no new worker is added after this).
   */
  shutdown(): void {
    this.shuttingDown = true;
    this.closeIfIdle();
  }

  private onMessage(worker: Worker, msg: unknown): void {
    if (isConnectionTakenMessage(msg)) {
      const handoff = this.take(msg.id, worker);
      handoff?.socket.destroy();
    } else if (isConnectionRefusedMessage(msg)) {
      // A draining worker refuses once its server has closed: it is sent nothing more.
      const handoff = this.take(msg.id, worker);
      if (this.draining.delete(worker)) this.closeIfIdle();
      if (handoff !== undefined) this.hand(handoff.socket, handoff.handoffs);
    } else if (isDrainingMessage(msg)) {
      this.removeReady(worker);
      if (!worker.isDead()) this.draining.add(worker);
      this.closeIfIdle();
    }
  }

  /** Removes and returns hand-off `id` when it is pending on `worker`. */
  private take(id: number, worker: Worker): Handoff | undefined {
    const handoff = this.pending.get(id);
    if (handoff === undefined || handoff.worker !== worker) return undefined;
    this.untrack(handoff);
    return handoff;
  }

  private track(handoff: Handoff): void {
    this.pending.set(handoff.id, handoff);
    this.unacknowledged.set(handoff.worker, (this.unacknowledged.get(handoff.worker) ?? 0) + 1);
  }

  private untrack(handoff: Handoff): void {
    this.pending.delete(handoff.id);
    clearTimeout(handoff.timer);
    const left = (this.unacknowledged.get(handoff.worker) ?? 1) - 1;
    if (left > 0) this.unacknowledged.set(handoff.worker, left);
    else this.unacknowledged.delete(handoff.worker);
  }

  /** The next worker to receive a connection, or undefined when none can. */
  private pick(): Worker | undefined {
    const n = this.ready.length;
    if (n > 0) {
      if (this.cursor >= n) this.cursor = 0;
      let chosen = this.cursor;
      for (let k = 0; k < n; k++) {
        const i = (this.cursor + k) % n;
        const worker = this.ready[i];
        if (worker !== undefined && (this.unacknowledged.get(worker) ?? 0) < this.maxUnacknowledged) {
          chosen = i;
          break;
        }
      }
      this.cursor = (chosen + 1) % n;
      return this.ready[chosen];
    }
    // Shutting down with every worker draining: a connection re-handed from a worker that died is
    // still answered by one that drains (with `Connection: close`).
    if (this.shuttingDown) {
      for (const worker of this.draining) if (!worker.isDead() && worker.isConnected()) return worker;
    }
    return undefined;
  }

  private hand(socket: Socket, handoffs: number): void {
    if (socket.destroyed) return;
    if (handoffs >= this.maxHandoffs) {
      logger.error('closing a connection no worker took', { handoffs });
      socket.destroy();
      return;
    }
    const worker = this.pick();
    if (worker === undefined) {
      if (this.closed) {
        logger.info('closing a connection: the cluster is shutting down and no worker is left to serve it', { handoffs });
        socket.destroy();
      } else {
        this.waiting.push({ socket, handoffs });
      }
      return;
    }
    const id = ++this.nextId;
    const timer = setTimeout(() => this.expire(id), this.handoffTimeoutMs);
    timer.unref();
    this.track({ id, socket, worker, handoffs: handoffs + 1, timer });
    const message: ConnectionMessage = { type: 'capstan:connection', id };
    const failed = (err: unknown): void => {
      const handoff = this.take(id, worker);
      logger.warn('handing a connection to a worker failed; trying another', { pid: worker.process.pid, error: err });
      this.stopSending(worker);
      if (handoff !== undefined) this.hand(handoff.socket, handoff.handoffs);
    };
    try {
      worker.send(message, socket, { keepOpen: true }, (err: Error | null) => {
        if (err !== null) failed(err);
      });
    } catch (err) {
      failed(err);
    }
  }

  /** A live worker never acknowledged hand-off `id`: give up the primary's copy (see handoffTimeoutMs). */
  private expire(id: number): void {
    const handoff = this.pending.get(id);
    if (handoff === undefined) return;
    this.untrack(handoff);
    logger.warn('a worker did not acknowledge a connection in time; closing the primary copy', {
      pid: handoff.worker.process.pid, timeoutMs: this.handoffTimeoutMs,
    });
    handoff.socket.destroy();
  }

  private removeReady(worker: Worker): void {
    const i = this.ready.indexOf(worker);
    if (i < 0) return;
    this.ready.splice(i, 1);
    if (i < this.cursor) this.cursor--;
    if (this.cursor >= this.ready.length) this.cursor = 0;
  }

  private stopSending(worker: Worker): void {
    this.removeReady(worker);
    this.draining.delete(worker);
    this.closeIfIdle();
  }

  /**
   * `worker` exited or its IPC channel closed. Acknowledgements it wrote before dying may still sit
   * unread in the channel, so its pending hand-offs are re-handed only once the channel has reached
   * its end (Node emits no 'disconnect' for a channel with a handle in flight, hence the poll).
   */
  private lost(worker: Worker): void {
    this.stopSending(worker);
    const started = Date.now();
    const release = (): void => {
      if (worker.isConnected() && Date.now() - started < CHANNEL_WAIT_MS) {
        setTimeout(release, CHANNEL_POLL_MS);
        return;
      }
      const orphans = [...this.pending.values()].filter((h) => h.worker === worker);
      if (orphans.length === 0) return;
      logger.warn('re-handing connections a worker did not take before it exited', { pid: worker.process.pid, connections: orphans.length });
      for (const handoff of orphans) {
        this.take(handoff.id, worker);
        this.hand(handoff.socket, handoff.handoffs);
      }
    };
    release();
  }

  private flushWaiting(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const w of waiting) this.hand(w.socket, w.handoffs);
  }

  private closeIfIdle(): void {
    if (!this.shuttingDown || this.closed || this.ready.length > 0) return;
    this.closed = true;
    this.server.close();
    this.flushWaiting();
  }
}
