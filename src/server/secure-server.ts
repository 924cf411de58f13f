import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createSecureServer, type Http2Session, type SecureServerOptions } from 'node:http2';
import type { SecureContextOptions } from 'node:tls';
import { logger } from '../logging/logger.js';

/** What the HTTP/1 side of every server of Capstan is given (Node's `http.ServerOptions`). */
export interface Http1Options {
  keepAliveTimeout: number;
  requestTimeout: number;
  maxHeaderSize: number;
  IncomingMessage: typeof IncomingMessage;
}

/** The secure port's server, and how to end its HTTP/2 connections gracefully. */
export interface SecureServer {
  server: Server;
  /** Sends GOAWAY on every HTTP/2 connection: streams in flight finish, no new ones start. */
  closeSessions(): void;
}

/**
 * kube-apiserver's HTTP/2 settings: 100 concurrent streams per connection unless the flag says
 * otherwise, and 256 KiB of request body per stream in flight (a frame holds nearly every object).
 */
const STREAM_WINDOW_BYTES = 256 * 1024;
const DEFAULT_MAX_STREAMS = 100;

/**
 * The HTTPS server of the secure port. With HTTP/2 (the default, as kube-apiserver), a client that
 * offers `h2` in ALPN gets HTTP/2 and every other client HTTP/1.1 on the same port, both handled by
 * `handler`. Why it matters: Go clients multiplex every request over one HTTP/2 connection; over
 * HTTP/1.1 they open a connection (and a TLS handshake) per request in flight, and a controller
 * manager or scheduler under load opens hundreds at once.
 */
export function secureServer(
  tls: SecureContextOptions & { requestCert: boolean; rejectUnauthorized: boolean },
  http1: Http1Options,
  http2: { maxStreamsPerConnection: number } | undefined,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): SecureServer {
  if (http2 === undefined) return { server: createHttpsServer({ ...http1, ...tls }, handler), closeSessions: () => undefined };
  const maxConcurrentStreams = http2.maxStreamsPerConnection > 0 ? http2.maxStreamsPerConnection : DEFAULT_MAX_STREAMS;
  const options: SecureServerOptions = {
    ...tls,
    allowHTTP1: true,
    Http1IncomingMessage: http1.IncomingMessage,
    settings: { maxConcurrentStreams, initialWindowSize: STREAM_WINDOW_BYTES, maxHeaderListSize: http1.maxHeaderSize },
    // Node refuses new streams once a session buffers this much; a connection may carry
    // maxConcurrentStreams bodies of a window each (kube's MaxUploadBufferPerConnection).
    maxSessionMemory: Math.max(10, Math.ceil((maxConcurrentStreams * STREAM_WINDOW_BYTES) / (1 << 20))),
  };
  const h2 = createSecureServer(options, handler as unknown as Parameters<typeof createSecureServer>[1]);
  // The HTTP/1 fallback reads these from the server object, as http.Server does.
  Object.assign(h2, { keepAliveTimeout: http1.keepAliveTimeout, requestTimeout: http1.requestTimeout, maxHeaderSize: http1.maxHeaderSize });
  const sessions = new Set<Http2Session>();
  h2.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  // A broken connection (a protocol error, a reset) ends that connection only.
  h2.on('sessionError', (error: Error) => logger.debug('http2 connection error', { error: error.message }));
  return {
    server: h2 as unknown as Server,
    closeSessions: () => {
      for (const session of sessions) if (!session.closed) session.close();
    },
  };
}

/** Closes the server's idle HTTP/1 connections where Node can (an HTTP/2 server closes them on `close()`). */
export function closeIdleConnections(server: Server): void {
  if (typeof server.closeIdleConnections === 'function') server.closeIdleConnections();
}
