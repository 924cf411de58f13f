/**
 * Keeps a client's HTTP/2 connections on one worker. A Go program holds one connection per
 * transport, and kube-controller-manager holds two: its informers authenticate with its client
 * certificate, its controllers with their service accounts' tokens (another TLS configuration,
 * so another connection). When the two land on different workers, each controller's write
 * reaches its own informer only through the other worker's stream reader, after the response, and
 * kube-controller-manager requeues the controller whose cache is older than its write.
 *
 * A client is known by the address it connects from and the start of its user agent (program,
 * version, platform and build: client-go puts each controller's name after those). Two
 * connections of one client that present different client certificates (or one none) are two
 * transports of one program, and belong on one worker. Connections that present the same
 * certificate are left where they are: they are as likely several processes (parallel test
 * runners with one kubeconfig) as one, and gathering them would pile them onto one worker.
 *
 * Guarantees:
 * - A connection reported from a worker other than the one serving its client's connections of
 *   another credential is moved there (once per report): the worker is asked to send GOAWAY on it,
 *   and the next connection from its address within PIN_MS goes to that worker.
 * - A client is moved at most MAX_MOVES times per MOVES_WINDOW_MS, so clients that share an
 *   address and a user agent and catch each other's pins cannot bounce for ever.
 * - Nothing is remembered of a connection after it is reported gone, nor of a lost worker.
 */
import type { ClientConnection } from '../server/client-connections.js';

/** How long the next connection from an address goes to the worker a moved connection belongs on. */
const PIN_MS = 2000;
const MAX_MOVES = 5;
const MOVES_WINDOW_MS = 60_000;
/** Past this many clients with moves on record, those without a recent one are forgotten. */
const MAX_REMEMBERED_CLIENTS = 1000;

interface Entry<W> {
  worker: W;
  session: number;
  credential: string;
}

interface Pin<W> {
  address: string;
  worker: W;
  until: number;
}

/** The primary's record of which worker serves which client's connections (W: a worker). */
export class ClientAffinity<W> {
  private readonly clients = new Map<string, Entry<W>[]>();
  private readonly bySession = new Map<W, Map<number, string>>();
  private pins: Pin<W>[] = [];
  private readonly moves = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * `worker` serves `connection`. Returns the worker it belongs on when it should move (the caller
   * asks `worker` to send GOAWAY on it), undefined when it stays.
   */
  opened(worker: W, connection: ClientConnection): W | undefined {
    const entries = this.clients.get(connection.client) ?? [];
    const home = homeOf(entries, worker, connection.credential);
    if (home !== undefined && this.mayMove(connection.client)) {
      this.pins.push({ address: connection.address, worker: home, until: this.now() + PIN_MS });
      return home;
    }
    entries.push({ worker, session: connection.session, credential: connection.credential });
    this.clients.set(connection.client, entries);
    let sessions = this.bySession.get(worker);
    if (sessions === undefined) this.bySession.set(worker, (sessions = new Map<number, string>()));
    sessions.set(connection.session, connection.client);
    return undefined;
  }

  /** `worker`'s connection `session` closed, or its client was asked to reconnect. */
  gone(worker: W, session: number): void {
    const sessions = this.bySession.get(worker);
    const client = sessions?.get(session);
    if (client === undefined || sessions === undefined) return;
    sessions.delete(session);
    const left = (this.clients.get(client) ?? []).filter((e) => e.worker !== worker || e.session !== session);
    if (left.length > 0) this.clients.set(client, left);
    else this.clients.delete(client);
  }

  /** `worker` exited: its connections are gone, and no pin sends a connection to it. */
  lost(worker: W): void {
    for (const session of [...(this.bySession.get(worker)?.keys() ?? [])]) this.gone(worker, session);
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

  private mayMove(client: string): boolean {
    const now = this.now();
    if (this.moves.size > MAX_REMEMBERED_CLIENTS) {
      for (const [key, times] of this.moves) if (times.every((t) => t <= now - MOVES_WINDOW_MS)) this.moves.delete(key);
    }
    const recent = (this.moves.get(client) ?? []).filter((t) => t > now - MOVES_WINDOW_MS);
    if (recent.length >= MAX_MOVES) {
      this.moves.set(client, recent);
      return false;
    }
    recent.push(now);
    this.moves.set(client, recent);
    return true;
  }
}

/**
 * Where a connection of `credential` reported from `worker` belongs: the other worker serving most
 * of its client's connections of another credential, when there is one.
 */
function homeOf<W>(entries: readonly Entry<W>[], worker: W, credential: string): W | undefined {
  if (entries.some((e) => e.worker === worker && e.credential !== credential)) return undefined;
  const counts = new Map<W, number>();
  for (const e of entries) if (e.worker !== worker && e.credential !== credential) counts.set(e.worker, (counts.get(e.worker) ?? 0) + 1);
  let home: W | undefined;
  let most = 0;
  for (const [w, n] of counts) if (n > most) [home, most] = [w, n];
  return home;
}
