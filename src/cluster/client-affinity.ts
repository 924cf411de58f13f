/**
 * Keeps a client's HTTP/2 connections on one worker. A Go program holds one connection per
 * transport, and kube-controller-manager holds several: its informers authenticate with its client
 * certificate, its controllers with their service accounts' tokens (another TLS configuration,
 * so another connection), and its delegated authentication client may hold one more. When its
 * informers and its controllers land on different workers, each controller's write reaches its own
 * informer only through the other worker's stream reader, after the response, and
 * kube-controller-manager requeues the controller whose cache is older than its write.
 *
 * A client is known by the address it connects from and the start of its user agent (program,
 * version, platform and build: client-go puts each controller's name after those). A client whose
 * open connections present different client certificates (or one none) is one program with
 * several transports, and all its connections belong on one worker. A client whose connections all
 * present the same certificate is left alone: its connections are as likely several processes
 * (parallel test runners with one kubeconfig) as one, and gathering them would pile them onto one
 * worker.
 *
 * Guarantees:
 * - When a connection is reported and its client's open connections present more than one
 *   credential, every one of them not on the client's home worker (the worker serving most of
 *   them; on a tie the one serving the oldest) is moved there: its worker is asked to send GOAWAY on
 *   it, and for each one moved, one next connection from its address within PIN_MS goes to the home.
 * - A client has at most MAX_MOVES connections moved per MOVES_WINDOW_MS, so clients that share an
 *   address and a user agent and catch each other's pins cannot bounce for ever.
 * - A client whose connection a busy worker shed (ShedConnectionMessage) is `settling` for SETTLE_MS:
 *   the next shed requests name it, and no worker sheds it again before then, so the rebalancer
 *   cannot send one client back and forth between two workers whose loads it flips.
 * - Nothing is remembered of a connection after it is moved or reported gone, nor of a lost worker.
 */
import type { ClientConnection } from '../server/client-connections.js';

/** How long the next connection from an address goes to the worker a moved connection belongs on. */
const PIN_MS = 2000;
const MAX_MOVES = 8;
const MOVES_WINDOW_MS = 60_000;
/** Past this many clients with moves on record, those without a recent one are forgotten. */
const MAX_REMEMBERED_CLIENTS = 1000;
/**
 * How long a client shed by a busy worker is left where it reconnected: eight rebalancing intervals
 * of the default 15 s. Its load needs a few load reports to show on its new worker, and a client
 * that is most of a worker's load, moved, makes the other worker the busy one.
 */
export const SETTLE_MS = 120_000;

interface Entry<W> {
  worker: W;
  session: number;
  credential: string;
  /** Report order: the oldest connection has the smallest. */
  order: number;
}

interface Pin<W> {
  address: string;
  worker: W;
  until: number;
}

/** A connection to move: worker `worker`'s connection `session`, to worker `to`. */
export interface ConnectionMove<W> {
  worker: W;
  session: number;
  to: W;
}

/** The primary's record of which worker serves which client's connections (W: a worker). */
export class ClientAffinity<W> {
  private readonly clients = new Map<string, Entry<W>[]>();
  private readonly bySession = new Map<W, Map<number, string>>();
  private pins: Pin<W>[] = [];
  private readonly moves = new Map<string, number[]>();
  /** When each client was last shed by a busy worker. */
  private readonly shedAt = new Map<string, number>();
  private reports = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * `worker` serves `connection`. Returns the connections of its client to move (the caller asks
   * each one's worker to send GOAWAY on it); empty when they stay where they are.
   */
  opened(worker: W, connection: ClientConnection): ConnectionMove<W>[] {
    const entries = this.clients.get(connection.client) ?? [];
    entries.push({ worker, session: connection.session, credential: connection.credential, order: ++this.reports });
    this.clients.set(connection.client, entries);
    let sessions = this.bySession.get(worker);
    if (sessions === undefined) this.bySession.set(worker, (sessions = new Map<number, string>()));
    sessions.set(connection.session, connection.client);

    if (new Set(entries.map((e) => e.credential)).size < 2) return [];
    const home = homeOf(entries);
    const away = entries.filter((e) => e.worker !== home);
    if (away.length === 0 || !this.mayMove(connection.client, away.length)) return [];
    const until = this.now() + PIN_MS;
    for (const e of away) {
      this.forget(e.worker, e.session);
      this.pins.push({ address: connection.address, worker: home, until });
    }
    return away.map((e) => ({ worker: e.worker, session: e.session, to: home }));
  }

  /** `worker`'s connection `session` closed, or its client was asked to reconnect (`shed`: by a busy worker). */
  gone(worker: W, session: number, shed = false): void {
    if (shed) {
      const client = this.bySession.get(worker)?.get(session);
      if (client !== undefined) this.shedAt.set(client, this.now());
    }
    this.forget(worker, session);
  }

  /** The clients shed within SETTLE_MS, which a busy worker is not to shed again yet. */
  settling(): string[] {
    const since = this.now() - SETTLE_MS;
    for (const [client, at] of this.shedAt) if (at <= since) this.shedAt.delete(client);
    return [...this.shedAt.keys()];
  }

  /** `worker` exited: its connections are gone, and no pin sends a connection to it. */
  lost(worker: W): void {
    for (const session of [...(this.bySession.get(worker)?.keys() ?? [])]) this.forget(worker, session);
    this.bySession.delete(worker);
    this.pins = this.pins.filter((p) => p.worker !== worker);
  }

  /** The worker a new connection from `address` should go to (and the pin is used up), if any of `usable`. */
  pinned(address: string | undefined, usable: (worker: W) => boolean): W | undefined {
    if (this.pins.length === 0 || address === undefined) return undefined;
    const now = this.now();
    this.pins = this.pins.filter((p) => p.until > now);
    const i = this.pins.findIndex((p) => p.address === address && usable(p.worker));
    if (i < 0) return undefined;
    const [pin] = this.pins.splice(i, 1);
    return pin.worker;
  }

  private forget(worker: W, session: number): void {
    const sessions = this.bySession.get(worker);
    const client = sessions?.get(session);
    if (client === undefined || sessions === undefined) return;
    sessions.delete(session);
    const left = (this.clients.get(client) ?? []).filter((e) => e.worker !== worker || e.session !== session);
    if (left.length > 0) this.clients.set(client, left);
    else this.clients.delete(client);
  }

  /** Whether `client` may have `count` more connections moved now (and counts them if so). */
  private mayMove(client: string, count: number): boolean {
    const now = this.now();
    if (this.moves.size > MAX_REMEMBERED_CLIENTS) {
      for (const [key, times] of this.moves) if (times.every((t) => t <= now - MOVES_WINDOW_MS)) this.moves.delete(key);
    }
    const recent = (this.moves.get(client) ?? []).filter((t) => t > now - MOVES_WINDOW_MS);
    if (recent.length + count > MAX_MOVES) {
      this.moves.set(client, recent);
      return false;
    }
    for (let i = 0; i < count; i++) recent.push(now);
    this.moves.set(client, recent);
    return true;
  }
}

/** The worker serving most of `entries`; on a tie, the one serving the oldest of them. */
function homeOf<W>(entries: readonly Entry<W>[]): W {
  const counts = new Map<W, { n: number; oldest: number }>();
  for (const e of entries) {
    const c = counts.get(e.worker);
    if (c === undefined) counts.set(e.worker, { n: 1, oldest: e.order });
    else {
      c.n++;
      c.oldest = Math.min(c.oldest, e.order);
    }
  }
  let home = entries[0].worker;
  let best = { n: 0, oldest: Infinity };
  for (const [w, c] of counts) {
    if (c.n > best.n || (c.n === best.n && c.oldest < best.oldest)) [home, best] = [w, c];
  }
  return home;
}
