/**
 * A watch client that behaves like client-go's reflector between relists: it keeps the
 * resourceVersion of the last event (or bookmark) it received and, whenever the stream ends or the
 * connection fails, re-opens the watch from that version on a fresh connection (any worker). It
 * stops on a 410 Expired ERROR event (a real client would relist). Everything it saw is recorded,
 * so tests can check that the changes arrived exactly once and in order across reconnects.
 */
import { request, type ClientRequest } from 'node:http';

export interface SeenEvent {
  type: string;
  object: any;
  /** metadata.resourceVersion of the object (for ERROR: ''). */
  rv: string;
  /** Which connection (1-based) delivered it. */
  connection: number;
}

export interface ConnectionRecord {
  /** HTTP status, or 0 when the connection failed before a response. */
  status: number;
  fromRv: string;
  /** Connection error message, or the body of a non-200 answer. */
  detail?: string;
  retryAfter?: string;
  openedAt: number;
  closedAt?: number;
}

export interface ResumingWatchOptions {
  /** Collection path without query, e.g. `/api/v1/configmaps`. */
  path: string;
  /** Start version (a watch from exactly this version: only later changes). */
  fromRv: string;
  /** Pause between reconnects (default 100 ms). */
  retryMs?: number;
}

export class ResumingWatch {
  readonly events: SeenEvent[] = [];
  readonly errors: SeenEvent[] = [];
  readonly connections: ConnectionRecord[] = [];
  lastRv: string;
  /** Set once a 410 ERROR event arrived: the watch stopped and the client must relist. */
  expired = false;
  private stopped = false;
  private current: ClientRequest | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly url: string;
  private readonly options: ResumingWatchOptions;
  private loop: Promise<void> | undefined;

  constructor(url: string, options: ResumingWatchOptions) {
    this.url = url;
    this.options = options;
    this.lastRv = options.fromRv;
  }

  /** Starts the connect/reconnect loop; resolves once the first connection got its response headers (or failed). */
  start(): Promise<void> {
    let first: () => void = () => undefined;
    const opened = new Promise<void>((r) => {
      first = r;
    });
    this.loop = this.run(first);
    return opened;
  }

  /** Resolves when `predicate` holds for the events so far; rejects after `timeoutMs`. */
  waitFor(predicate: (events: SeenEvent[]) => boolean, timeoutMs = 10_000, what = 'watch condition'): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!predicate(this.events)) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(
          new Error(
            `timed out waiting for ${what}; last rv ${this.lastRv}, ${this.events.length} events, connections: ${JSON.stringify(this.connections.slice(-5))}`,
          ),
        );
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Resolves once some event (or bookmark) at or past `rv` arrived. */
  waitForRv(rv: string, timeoutMs = 10_000): Promise<void> {
    return this.waitFor(() => BigInt(this.lastRv) >= BigInt(rv), timeoutMs, `resourceVersion ${rv}`);
  }

  /** Number of times the watch was (re)opened. */
  get opened(): number {
    return this.connections.length;
  }

  /** Cuts the current connection; the loop reconnects from the last version. */
  cut(): void {
    this.current?.destroy();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.destroy();
    await this.loop;
  }

  private notify(): void {
    for (const w of [...this.waiters]) w();
  }

  private async run(first: () => void): Promise<void> {
    let announced = false;
    while (!this.stopped && !this.expired) {
      await this.once(() => {
        if (!announced) {
          announced = true;
          first();
        }
      });
      if (!announced) {
        announced = true;
        first();
      }
      if (this.stopped || this.expired) break;
      await new Promise((r) => setTimeout(r, this.options.retryMs ?? 100));
    }
  }

  /** One watch connection, from `lastRv`, until it ends or fails. */
  private once(onResponse: () => void): Promise<void> {
    const record: ConnectionRecord = { status: 0, fromRv: this.lastRv, openedAt: Date.now() };
    this.connections.push(record);
    const n = this.connections.length;
    const query = `watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(this.lastRv)}`;
    return new Promise((resolve) => {
      const done = (detail?: string): void => {
        if (record.closedAt !== undefined) return;
        record.closedAt = Date.now();
        if (detail !== undefined && record.detail === undefined) record.detail = detail;
        this.current = undefined;
        this.notify();
        resolve();
      };
      const req = request(`${this.url}${this.options.path}?${query}`, { agent: false, headers: { accept: 'application/json' } }, (res) => {
        record.status = res.statusCode ?? 0;
        if (record.status === 410) this.expired = true;
        const retryAfter = res.headers['retry-after'];
        if (typeof retryAfter === 'string') record.retryAfter = retryAfter;
        onResponse();
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          if (record.status !== 200) return;
          let nl: number;
          while ((nl = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, nl).trim();
            buffer = buffer.slice(nl + 1);
            if (line !== '') this.take(line, n);
          }
        });
        res.on('end', () => done(record.status === 200 ? undefined : buffer));
        res.on('close', () => done(record.status === 200 ? undefined : buffer));
        res.on('error', (err) => done(err.message));
      });
      this.current = req;
      req.on('error', (err) => done(err.message));
      req.end();
    });
  }

  private take(line: string, connection: number): void {
    const event = JSON.parse(line) as { type: string; object: any };
    const rv = typeof event.object?.metadata?.resourceVersion === 'string' ? (event.object.metadata.resourceVersion as string) : '';
    if (event.type === 'BOOKMARK') {
      this.lastRv = rv;
    } else if (event.type === 'ERROR') {
      this.errors.push({ ...event, rv: '', connection });
      if (event.object?.code === 410) this.expired = true;
      this.current?.destroy();
    } else {
      this.events.push({ ...event, rv, connection });
      this.lastRv = rv;
    }
    this.notify();
  }
}

/**
 * Checks that `events` are exactly the changes `from`+1 .. `through`, each once, in order (the
 * resourceVersions of one type are consecutive integers, and a watch of the whole type sees them
 * all). Returns a description of the first mismatch, or undefined.
 */
export function contiguityProblem(events: readonly SeenEvent[], from: string, through: string): string | undefined {
  let expected = BigInt(from) + 1n;
  for (const [i, e] of events.entries()) {
    if (BigInt(e.rv) !== expected) {
      return (
        `event #${i} (${e.type} ${String(e.object?.metadata?.name)} on connection ${e.connection}) has rv ${e.rv}, expected ${expected}` +
        ` (previous: ${i > 0 ? events[i - 1]?.rv : from})`
      );
    }
    expected++;
  }
  if (expected - 1n !== BigInt(through)) return `events end at ${expected - 1n}, expected them to reach ${through}`;
  return undefined;
}
