/**
 * An HTTP proxy on 127.0.0.1 that sends each request to the next of several servers in turn (per
 * request, not per connection: a client's keep-alive connection still reaches every server), as a
 * Service in front of several API server pods does for clients that open new connections. Bodies
 * stream both ways, so watches work; a server that refuses the connection gets the request's 502.
 */
import { createServer, request, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SpreadingProxy {
  /** `http://127.0.0.1:PORT`. */
  url: string;
  /** Requests sent to each server so far, by URL. */
  counts(): Record<string, number>;
  close(): Promise<void>;
}

/** Headers that describe one connection, not the request (RFC 9110 section 7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

/** Starts a proxy spreading requests over `targets` (http://host:port URLs). */
export async function startSpreadingProxy(targets: readonly string[]): Promise<SpreadingProxy> {
  if (targets.length === 0) throw new Error('no servers to spread requests over');
  const agent = new Agent({ keepAlive: true });
  const counts: Record<string, number> = {};
  let next = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const target = targets[next++ % targets.length] ?? '';
    counts[target] = (counts[target] ?? 0) + 1;
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    const upstream = request(`${target}${req.url ?? '/'}`, { method: req.method, headers, agent }, (answer) => {
      const out: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
      res.writeHead(answer.statusCode ?? 502, out);
      // Watch events must reach the client as they come.
      res.flushHeaders();
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', () => {
      if (res.headersSent) res.destroy();
      else {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`proxy: ${target} did not answer\n`);
      }
    });
    // A client that goes away (a watch it stops) ends the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => ({ ...counts }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
