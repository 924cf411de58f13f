import type { IncomingMessage } from 'node:http';

/**
 * The TLS connection a request came on, the same object for every request of it. An HTTP/2
 * request's `socket` is a fresh stand-in per stream; the connection is its session's socket, which
 * every stream of it shares.
 */
export function requestConnection(req: IncomingMessage): object {
  const stream = (req as { stream?: { session?: { socket?: object } } }).stream;
  return stream?.session?.socket ?? req.socket;
}
