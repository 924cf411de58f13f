/**
 * A TCP proxy on 127.0.0.1 in front of a test server, so tests can break clients' connections the
 * way networks and load balancers do: `cutAll()` destroys every open connection (watches end
 * mid-stream), `pause()` keeps new connections from reaching the server until `resume()`.
 * It also records the HTTP/1.1 request lines clients send, so tests can tell a LIST from a WATCH.
 * `cutReplyTo(pattern)` loses the answer to one request: the server gets the request, the client
 * gets a closed connection instead of the reply (any TCP protocol, e.g. Redis's).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Transform } from 'node:stream';

export type PauseMode = 'hold' | 'refuse';

export interface RecordedRequest {
  /** When the request line passed the proxy (Date.now()). */
  at: number;
  method: string;
  /** Path and query, as sent. */
  target: string;
}

export interface TcpProxy {
  /** `http://127.0.0.1:PORT`: the URL clients use instead of the server's. */
  url: string;
  port: number;
  /** Destroys every open connection in both directions. New connections are still served. */
  cutAll(): void;
  /**
   * Cuts every open connection and stops serving new ones until `resume()`: `hold` accepts them
   * and keeps them waiting (forwarded on resume), `refuse` accepts and immediately resets them.
   */
  pause(mode?: PauseMode): void;
  /** Serves again; held connections are forwarded now. */
  resume(): void;
  /**
   * The next connection whose client sends bytes matching `pattern` (read as latin1) is cut when
   * the server's next bytes come back on it: they are dropped, and both sides closed. Resolves once
   * that happened.
   */
  cutReplyTo(pattern: RegExp): Promise<void>;
  /** HTTP request lines seen so far (client to server), in order. */
  requests(): RecordedRequest[];
  /** Open client connections (held ones included). */
  openConnections(): number;
  close(): Promise<void>;
}

const REQUEST_LINE = /(?:^|\r\n)(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) (\S+) HTTP\/1\.[01]\r\n/g;

/** Starts a proxy to `target` (an http://host:port URL) on a free port of 127.0.0.1. */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port: targetPort } = new URL(target);
  const upstreamPort = Number(targetPort);
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  const held: Socket[] = [];
  const recorded: RecordedRequest[] = [];
  let paused: PauseMode | undefined;
  let armed: { pattern: RegExp; cut: () => void } | undefined;

  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };

  const forward = (client: Socket): void => {
    if (client.destroyed) return;
    const upstream = connect({ host: hostname, port: upstreamPort });
    track(upstream);
    // Request lines may straddle chunks: keep the tail of the previous chunk for the scan.
    let carry = '';
    // Set once this connection's next reply is to be lost (cutReplyTo).
    let cutNextReply: (() => void) | undefined;
    client.on('data', (chunk: Buffer) => {
      const text = carry + chunk.toString('latin1');
      if (armed !== undefined && armed.pattern.test(text)) {
        cutNextReply = armed.cut;
        armed = undefined;
      }
      REQUEST_LINE.lastIndex = 0;
      let lastEnd = 0;
      for (let m = REQUEST_LINE.exec(text); m !== null; m = REQUEST_LINE.exec(text)) {
        recorded.push({ at: Date.now(), method: m[1], target: m[2] });
        lastEnd = REQUEST_LINE.lastIndex;
      }
      carry = text.slice(Math.max(lastEnd, text.length - 2048));
    });
    const both = (): void => {
      client.destroy();
      upstream.destroy();
    };
    const replies = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        const cut = cutNextReply;
        if (cut === undefined) return done(null, chunk);
        cutNextReply = undefined;
        both();
        cut();
        done();
      },
    });
    client.pipe(upstream);
    upstream.pipe(replies).pipe(client);
    client.on('close', both);
    upstream.on('close', both);
    client.resume();
  };

  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    track(client);
    clients.add(client);
    client.on('close', () => clients.delete(client));
    if (paused === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    if (paused === 'hold') {
      held.push(client);
      return;
    }
    forward(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no TCP address');
  const port = address.port;

  const cutAll = (): void => {
    for (const s of [...sockets]) if (!held.includes(s)) s.destroy();
  };

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    cutAll,
    pause: (mode = 'hold') => {
      paused = mode;
      cutAll();
    },
    resume: () => {
      paused = undefined;
      for (const s of held.splice(0)) forward(s);
    },
    cutReplyTo: (pattern) =>
      new Promise<void>((resolve) => {
        armed = { pattern, cut: resolve };
      }),
    requests: () => [...recorded],
    openConnections: () => clients.size,
    close: () =>
      new Promise<void>((resolve) => {
        paused = 'refuse';
        for (const s of [...sockets]) s.destroy();
        held.length = 0;
        server.close(() => resolve());
      }),
  };
}
