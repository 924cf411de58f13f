import type { Worker } from 'node:cluster';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { logger } from '../logging/logger.js';
import { LISTEN_BACKLOG } from '../server/listen-backlog.js';
import { ClientAffinity } from './client-affinity.js';
import {
  isClientConnectionGoneMessage,
  isClientConnectionMessage,
  isConnectionClaimMessage,
  isConnectionClosedMessage,
  isConnectionRefusedMessage,
  isDrainingMessage,
  isWorkerConnectionMessage,
  isWorkerLoadMessage,
  type ConnectionGrantMessage,
  type ConnectionMessage,
  type MoveConnectionMessage,
  type PingMessage,
  type ShedConnectionMessage,
} from './messages.js';

/** Options of {@link ConnectionDistributor}. */
export interface DistributorOptions {
  /**
   * A worker that has not claimed a connection handed to it for this long is stalled (stopped, or
   * its event loop blocked): everything it has not claimed goes to other workers, and it receives
   * nothing more until it answers again.
   */
  claimTimeoutMs?: number;
  /** A connection handed this many times without being served is answered 503 and closed. */
  maxHandoffs?: number;
  /** A worker with this many unclaimed hand-offs is passed over while another ready worker has fewer. */
  maxUnclaimed?: number;
  /** The least time between two requests to move a connection (see REBALANCE_BUSY); 0 turns rebalancing off. */
  rebalanceIntervalMs?: number;
}

interface Handoff {
  id: number;
  socket: Socket;
  worker: Worker;
  handoffs: number;
  timer: NodeJS.Timeout;
  /**
   * The worker claimed it and the grant is on its way. Node queues a message behind an unacknowledged
   * handle and drops the queue when the worker dies, so until the grant's send completes the worker
   * may never see it: the hand-off stays here and goes to another worker if this one is lost.
   */
  granting?: boolean;
}

interface Waiting {
  socket: Socket;
  handoffs: number;
}

/**
 * A worker whose event loop has been busy more than BUSY_FLOOR of its time, and more than
 * BUSY_MARGIN more than the least busy one's, receives no new connection while that one can take it.
 * Below the floor a worker has room, and connections go by count and in turn.
 */
const BUSY_FLOOR = 0.5;
const BUSY_MARGIN = 0.25;
/**
 * What each connection handed to a worker adds to its last reported busyness until its next report
 * (every half second), so a burst of new connections does not all follow one stale report.
 */
const BUSY_PER_HANDOFF = 0.02;

/**
 * Rebalancing of long-lived connections. Go clients carry all their requests on one HTTP/2
 * connection, so a control plane's few clients can leave one worker saturated and another idle
 * whatever the hand-off did when they connected. A worker busier than REBALANCE_BUSY for
 * REBALANCE_REPORTS reports in a row (two seconds), while another ready worker is at least
 * REBALANCE_GAP less busy, is asked to send GOAWAY on one connection (ShedConnectionMessage): the
 * one that carried about the share of its requests that would even the two out. The client
 * reconnects, and the new connection goes to the least busy worker. At most one such request per
 * `rebalanceIntervalMs` over all workers, and a client shed once is not shed again for SETTLE_MS
 * (the request names it; ClientAffinity.settling), so a client that is the whole load is not bounced
 * back and forth. With `rebalanceIntervalMs` 0 nothing moves, and the imbalance is logged instead
 * (at most once per UNBALANCED_LOG_INTERVAL_MS).
 */
const REBALANCE_BUSY = 0.85;
const REBALANCE_GAP = 0.4;
const REBALANCE_REPORTS = 4;
const UNBALANCED_LOG_INTERVAL_MS = 60_000;

/** How often, and how long, to wait for the IPC channel of an exited worker to reach its end. */
const CHANNEL_POLL_MS = 10;
const CHANNEL_WAIT_MS = 2000;

/** What a client gets on a connection no worker could take (the server is still unread). */
const UNAVAILABLE_BODY = JSON.stringify({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server is currently unable to handle the request',
  reason: 'ServiceUnavailable',
  code: 503,
});
const UNAVAILABLE_RESPONSE =
  'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n' +
  `Content-Length: ${Buffer.byteLength(UNAVAILABLE_BODY)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${UNAVAILABLE_BODY}`;

/**
 * The primary's listener and connection hand-off. Replaces the cluster module's round-robin, which
 * leaves a connection open and unanswered when the worker it was handed to dies or stalls before
 * taking it.
 *
 * Guarantees:
 * - The primary accepts with reading paused, so it never reads a byte of any connection.
 * - Each connection goes to the ready worker serving the fewest connections (open ones it was
 *   granted, and hand-offs it has not claimed yet) among those not much busier than the least busy
 *   (event loop utilization, reported by each worker every half second; see BUSY_MARGIN), the next
 *   in turn among equals (so connections
 *   that come and go alternate over the workers), passing over a worker that holds `maxUnclaimed`
 *   unclaimed hand-offs while another does not. Clients hold few long-lived connections (HTTP/2
 *   carries all of a Go client's requests on one): a short first connection (discovery) then the
 *   long one would otherwise put every component's long one on the same worker. Only workers added with {@link addWorker} (they reported ready) receive
 *   connections, and none after they report draining.
 * - A client's HTTP/2 connections are gathered on one worker once they present more than one
 *   credential (see ClientAffinity): each one elsewhere is moved, and for each, the next connection
 *   from its address goes to that worker, ahead of the rule above.
 * - A worker serves a connection only after the primary grants its claim, and the primary grants
 *   only while the hand-off is still that worker's. Until the grant has been sent the primary keeps
 *   its own copy, and nothing has been read from the socket, so a connection is never lost and never
 *   read by two workers: when the worker exits before the grant left (unclaimed, or the grant still
 *   queued behind a handle), its send fails, or it does not claim within `claimTimeoutMs`, the
 *   connection is handed to another worker.
 * - A worker that let a claim time out is stalled: it receives no connection until it sends a
 *   message again (it is pinged), so one blocked event loop never holds up other clients.
 * - No socket is left without an owner: with no worker to take it, it waits for one (a restart, or
 *   a stalled worker coming back); after {@link shutdown}, once no worker serves, the listener
 *   closes and such sockets are closed. A socket handed `maxHandoffs` times is answered 503.
 */
export class ConnectionDistributor {
  /** `http://host:port` of the listener. */
  readonly url: string;
  readonly port: number;
  private readonly ready: Worker[] = [];
  private readonly draining = new Set<Worker>();
  private readonly known = new WeakSet<Worker>();
  private readonly stalled = new Set<Worker>();
  private readonly pending = new Map<number, Handoff>();
  private readonly unclaimed = new Map<Worker, number>();
  /** Connections each worker was granted and has not reported closed. */
  private readonly open = new Map<Worker, number>();
  /** Each worker's last reported event loop utilization (0-1), plus BUSY_PER_HANDOFF per hand-off since. */
  private readonly busy = new Map<Worker, number>();
  /** How many load reports in a row each worker was above REBALANCE_BUSY. */
  private readonly hot = new Map<Worker, number>();
  private lastRebalance = 0;
  /** Which worker serves which client's HTTP/2 connections (client-affinity.ts). */
  private readonly affinity = new ClientAffinity<Worker>();
  private readonly rebalanceIntervalMs: number;
  private waiting: Waiting[] = [];
  private cursor = 0;
  private nextId = 0;
  private shuttingDown = false;
  private closed = false;
  private readonly claimTimeoutMs: number;
  private readonly maxHandoffs: number;
  private readonly maxUnclaimed: number;

  /** Every listener: the first one, then those added by {@link listenAlso}. */
  private readonly servers: Server[];

  private constructor(server: Server, options: DistributorOptions) {
    this.servers = [server];
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.url = `http://${host}:${address.port}`;
    this.port = address.port;
    this.claimTimeoutMs = options.claimTimeoutMs ?? 2000;
    this.maxHandoffs = options.maxHandoffs ?? 8;
    this.maxUnclaimed = options.maxUnclaimed ?? 8;
    this.rebalanceIntervalMs = options.rebalanceIntervalMs ?? 15_000;
    this.accept(server);
  }

  private accept(server: Server): void {
    server.on('connection', (socket: Socket) => {
      // The worker sees the same error on its copy; the primary's copy only waits.
      socket.on('error', () => undefined);
      this.hand(socket, 0);
    });
    server.on('error', (err: unknown) => logger.error('accepting a connection failed', { error: err }));
  }

  private static async bind(port: number, host: string): Promise<Server> {
    const server = createServer({ pauseOnConnect: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host, backlog: LISTEN_BACKLOG }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    return server;
  }

  /** Binds `port` (0: a free one) on `host`; rejects when the port cannot be bound. */
  static async listen(port: number, host: string, options: DistributorOptions = {}): Promise<ConnectionDistributor> {
    return new ConnectionDistributor(await ConnectionDistributor.bind(port, host), options);
  }

  /**
   * Binds one more listener whose connections are handed out the same way (a worker tells them
   * apart by their local port). Resolves with the port bound; rejects when it cannot be bound.
   */
  async listenAlso(port: number, host: string): Promise<number> {
    const server = await ConnectionDistributor.bind(port, host);
    this.servers.push(server);
    this.accept(server);
    return (server.address() as AddressInfo).port;
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
    if (!isWorkerConnectionMessage(msg)) return;
    this.answers(worker);
    if (isConnectionClaimMessage(msg)) {
      const handoff = this.pending.get(msg.id);
      if (handoff === undefined || handoff.worker !== worker || handoff.granting === true) {
        // Handed to another worker after this one stalled: it closes its copy unread.
        this.sendGrant(worker, msg.id, false, () => undefined);
        return;
      }
      this.markGranting(handoff);
      this.sendGrant(worker, msg.id, true, (err) => {
        if (this.pending.get(handoff.id) !== handoff) return; // the worker was lost first; handed on
        this.untrack(handoff);
        if (err === null) {
          handoff.socket.destroy();
          this.open.set(worker, (this.open.get(worker) ?? 0) + 1);
          return;
        }
        // The grant never left: the worker cannot serve the connection, which is still unread.
        this.stopSending(worker);
        this.hand(handoff.socket, handoff.handoffs);
      });
    } else if (isConnectionRefusedMessage(msg)) {
      // A draining worker refuses once its server has closed: it is sent nothing more.
      const handoff = this.take(msg.id, worker);
      if (this.draining.delete(worker)) this.closeIfIdle();
      if (handoff !== undefined) this.hand(handoff.socket, handoff.handoffs);
    } else if (isWorkerLoadMessage(msg)) {
      this.busy.set(worker, msg.busy);
      this.rebalance(worker, msg.busy);
    } else if (isClientConnectionMessage(msg)) {
      for (const move of this.affinity.opened(worker, msg)) {
        logger.info("moving a connection to the worker serving its client's other connections", {
          client: msg.client,
          from: move.worker.process.pid,
          to: move.to.process.pid,
        });
        const message: MoveConnectionMessage = { type: 'capstan:move-connection', session: move.session };
        try {
          move.worker.send(message, undefined, {}, () => undefined);
        } catch {
          // The worker is going away: its connections are moving anyway.
        }
      }
    } else if (isClientConnectionGoneMessage(msg)) {
      this.affinity.gone(worker, msg.session, msg.shed === true);
    } else if (isConnectionClosedMessage(msg)) {
      const left = (this.open.get(worker) ?? 1) - 1;
      if (left > 0) this.open.set(worker, left);
      else this.open.delete(worker);
    } else if (isDrainingMessage(msg)) {
      this.removeReady(worker);
      if (!worker.isDead()) this.draining.add(worker);
      this.closeIfIdle();
    }
  }

  /** After a load report of `worker`: asks it to move a connection when it has stayed much busier than another (see REBALANCE_BUSY). */
  private rebalance(worker: Worker, busy: number): void {
    const hot = busy > REBALANCE_BUSY ? (this.hot.get(worker) ?? 0) + 1 : 0;
    this.hot.set(worker, hot);
    if (hot < REBALANCE_REPORTS || !this.ready.includes(worker)) return;
    const off = this.rebalanceIntervalMs <= 0;
    const now = Date.now();
    if (now - this.lastRebalance < (off ? UNBALANCED_LOG_INTERVAL_MS : this.rebalanceIntervalMs)) return;
    let idlest = busy;
    for (const other of this.ready) if (other !== worker && !this.stalled.has(other)) idlest = Math.min(idlest, this.busy.get(other) ?? 0);
    if (busy - idlest < REBALANCE_GAP) return;
    this.lastRebalance = now;
    this.hot.set(worker, 0);
    if (off) {
      logger.info('a worker stays much busier than another; moving clients is off (--worker-rebalance-interval=0)', {
        pid: worker.process.pid,
        busy: Math.round(busy * 100) / 100,
        otherBusy: Math.round(idlest * 100) / 100,
      });
      return;
    }
    const share = Math.min(1, (busy - idlest) / (2 * busy));
    const message: ShedConnectionMessage = { type: 'capstan:shed-connection', share, settling: this.affinity.settling() };
    try {
      worker.send(message, undefined, {}, () => undefined);
    } catch {
      // The worker is going away: its connections are moving anyway.
    }
  }

  private sendGrant(worker: Worker, id: number, granted: boolean, done: (err: Error | null) => void): void {
    const message: ConnectionGrantMessage = { type: 'capstan:connection-grant', id, granted };
    try {
      worker.send(message, undefined, {}, (err: Error | null) => done(err));
    } catch (err) {
      done(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** `worker` sent a message, so its event loop runs: a stalled worker receives connections again. */
  private answers(worker: Worker): void {
    if (!this.stalled.delete(worker)) return;
    logger.info('a stalled worker answers again; handing it connections', { pid: worker.process.pid });
    this.flushWaiting();
  }

  /**
   * `worker` let a claim time out: it receives nothing more until it answers, and every hand-off it
   * has not claimed goes to another worker (it closes its copies unread when it wakes).
   */
  private stall(worker: Worker): void {
    if (this.stalled.has(worker)) return;
    this.stalled.add(worker);
    const orphans = [...this.pending.values()].filter((h) => h.worker === worker && h.granting !== true);
    logger.warn('a worker did not claim its connections in time; handing them to other workers', {
      pid: worker.process.pid,
      claimTimeoutMs: this.claimTimeoutMs,
      connections: orphans.length,
    });
    const ping: PingMessage = { type: 'capstan:ping' };
    try {
      worker.send(ping, undefined, {}, () => undefined);
    } catch {
      // Its channel is closed: 'disconnect' or 'exit' follows.
    }
    for (const handoff of orphans) {
      this.untrack(handoff);
      this.hand(handoff.socket, handoff.handoffs);
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
    this.unclaimed.set(handoff.worker, (this.unclaimed.get(handoff.worker) ?? 0) + 1);
  }

  /** `handoff` was claimed: it no longer counts as unclaimed nor can expire, but stays pending. */
  private markGranting(handoff: Handoff): void {
    clearTimeout(handoff.timer);
    this.countUnclaimed(handoff.worker);
    handoff.granting = true;
  }

  private untrack(handoff: Handoff): void {
    this.pending.delete(handoff.id);
    clearTimeout(handoff.timer);
    if (handoff.granting !== true) this.countUnclaimed(handoff.worker);
  }

  /** One fewer unclaimed hand-off on `worker`. */
  private countUnclaimed(worker: Worker): void {
    const left = (this.unclaimed.get(worker) ?? 1) - 1;
    if (left > 0) this.unclaimed.set(worker, left);
    else this.unclaimed.delete(worker);
  }

  /** The next worker to receive a connection, or undefined when none can. */
  private pick(): Worker | undefined {
    const candidates = this.ready.filter((w) => !this.stalled.has(w));
    if (candidates.length > 0) {
      let leastBusy = Infinity;
      for (const worker of candidates) {
        if ((this.unclaimed.get(worker) ?? 0) < this.maxUnclaimed) leastBusy = Math.min(leastBusy, this.busy.get(worker) ?? 0);
      }
      // Turn order is over `ready`, from the cursor: the first of the least loaded is chosen, and the
      // cursor moves past it.
      const n = this.ready.length;
      if (this.cursor >= n) this.cursor = 0;
      let chosen = -1;
      let fewest = Infinity;
      for (let k = 0; k < n; k++) {
        const i = (this.cursor + k) % n;
        const worker = this.ready[i];
        if (this.stalled.has(worker)) continue;
        if (chosen < 0) chosen = i;
        const unclaimed = this.unclaimed.get(worker) ?? 0;
        const busy = this.busy.get(worker) ?? 0;
        if (unclaimed >= this.maxUnclaimed || (busy > BUSY_FLOOR && busy > leastBusy + BUSY_MARGIN)) continue;
        const load = unclaimed + (this.open.get(worker) ?? 0);
        if (load < fewest) {
          fewest = load;
          chosen = i;
        }
      }
      this.cursor = (chosen + 1) % n;
      const picked = this.ready[chosen];
      this.busy.set(picked, (this.busy.get(picked) ?? 0) + BUSY_PER_HANDOFF);
      return picked;
    }
    // Shutting down with every worker draining: a connection re-handed from a worker that died is
    // still answered by one that drains (with `Connection: close`).
    if (this.shuttingDown) {
      for (const worker of this.draining) if (!worker.isDead() && worker.isConnected() && !this.stalled.has(worker)) return worker;
    }
    return undefined;
  }

  private hand(socket: Socket, handoffs: number): void {
    if (socket.destroyed) return;
    if (handoffs >= this.maxHandoffs) {
      logger.error('answering 503 on a connection no worker took', { handoffs });
      answerUnavailable(socket);
      return;
    }
    const pinned = handoffs === 0 ? this.affinity.pinned(socket.remoteAddress, (w) => this.ready.includes(w) && !this.stalled.has(w)) : undefined;
    const worker = pinned ?? this.pick();
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
    const timer = setTimeout(() => this.expire(id), this.claimTimeoutMs);
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

  /** Hand-off `id` was not claimed in time: its worker is stalled. */
  private expire(id: number): void {
    const handoff = this.pending.get(id);
    if (handoff !== undefined) this.stall(handoff.worker);
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
    this.stalled.delete(worker);
    this.closeIfIdle();
  }

  /**
   * `worker` exited or its IPC channel closed. Claims it wrote before dying may still sit
   * unread in the channel, so its pending hand-offs are re-handed only once the channel has reached
   * its end (Node emits no 'disconnect' for a channel with a handle in flight, hence the poll).
   */
  private lost(worker: Worker): void {
    this.stopSending(worker);
    this.open.delete(worker);
    this.busy.delete(worker);
    this.hot.delete(worker);
    this.affinity.lost(worker);
    const started = Date.now();
    const release = (): void => {
      if (worker.isConnected() && Date.now() - started < CHANNEL_WAIT_MS) {
        setTimeout(release, CHANNEL_POLL_MS);
        return;
      }
      const orphans = [...this.pending.values()].filter((h) => h.worker === worker);
      if (orphans.length === 0) return;
      // Unclaimed ones were never read; a grant whose send never completed never reached the worker.
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
    for (const server of this.servers) server.close();
    this.flushWaiting();
  }
}

/** Writes a 503 `Status` on a connection nothing has read from, then closes it. */
function answerUnavailable(socket: Socket): void {
  socket.end(UNAVAILABLE_RESPONSE);
  socket.setTimeout(5000, () => socket.destroy());
}
