import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  createSecureServer,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
  type IncomingHttpHeaders,
  type SecureServerOptions,
  type ServerHttp2Stream,
} from 'node:http2';
import type { SecureContextOptions, TLSSocket } from 'node:tls';
import { logger } from '../logging/logger.js';
import { connectionMoved, openWatches } from '../watch/connection-moves.js';
import { clientKey, type ClientConnections } from './client-connections.js';

/** What the HTTP/1 side of every server of Capstan is given (Node's `http.ServerOptions`). */
export interface Http1Options {
  keepAliveTimeout: number;
  requestTimeout: number;
  maxHeaderSize: number;
  IncomingMessage: typeof IncomingMessage;
  /** Node's default when absent. */
  ServerResponse?: typeof ServerResponse;
}

/** The classes of HTTP/2 requests and responses (Node's http2 server options of these names). */
export interface Http2Classes {
  Http2ServerRequest: typeof Http2ServerRequest;
  Http2ServerResponse: typeof Http2ServerResponse;
}

/** The secure port's server, and how to end its HTTP/2 connections gracefully. */
export interface SecureServer {
  server: Server;
  /** Sends GOAWAY on every HTTP/2 connection: streams in flight finish, no new ones start. */
  closeSessions(): void;
  /**
   * Sends GOAWAY on one HTTP/2 connection so that its client reconnects (to a less busy worker,
   * see ConnectionDistributor): the one whose requests since the last call come closest to `share`
   * of all of them, together with its client's connections of other credentials (clientGroups),
   * never one of a client in `settling` (moved lately: sending it on again would bounce it).
   * Its requests in flight finish on it; its watches end (connection-moves.ts), so the client opens
   * them again beside its requests. False when no connection carried a request since the last call.
   */
  shedSession(share: number, settling?: ReadonlySet<string>): boolean;
  /** Sends GOAWAY on connection `session` (as numbered in ClientConnections reports) and ends its watches; false when it is gone. */
  moveSession(session: number): boolean;
}

/** What the server knows of one open HTTP/2 connection. */
interface SessionState {
  /** Its number in ClientConnections reports. */
  readonly id: number;
  /** Streams it carried since the last shedSession. */
  requests: number;
  /** Its client's key and credential, once its first request named them. */
  client?: string;
  credential?: string;
  /** Its first request was read for its client. */
  described: boolean;
  /** Told to ClientConnections as opened, and not yet as gone. */
  reported: boolean;
}

/** kube-apiserver's window: 256 KiB of request body per stream in flight (a frame holds nearly every object). */
const STREAM_WINDOW_BYTES = 256 * 1024;
/**
 * Streams per connection unless the flag says otherwise: 1,000 where kube-apiserver allows 100. A
 * Go client with more requests in flight than a connection allows dials another connection for each
 * waiting request. kube-apiserver answers on every core; a Capstan process answers on one event loop,
 * so under load more requests wait in flight, and a scheduler binding pods faster than they were
 * answered dialled hundreds of connections that queued unaccepted behind the requests being served
 * (its lease renewal among them: it lost its lease). With 1,000, requests past what the server can
 * serve wait in flow control's queues or get its 429, on the connection they came on.
 */
const DEFAULT_MAX_STREAMS = 1000;

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
  http2: ({ maxStreamsPerConnection: number } & Partial<Http2Classes>) | undefined,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  clients?: ClientConnections,
): SecureServer {
  if (http2 === undefined) {
    return { server: createHttpsServer({ ...http1, ...tls }, handler), closeSessions: () => undefined, shedSession: () => false, moveSession: () => false };
  }
  const maxConcurrentStreams = http2.maxStreamsPerConnection > 0 ? http2.maxStreamsPerConnection : DEFAULT_MAX_STREAMS;
  const options: SecureServerOptions = {
    ...tls,
    allowHTTP1: true,
    Http1IncomingMessage: http1.IncomingMessage,
    ...(http1.ServerResponse === undefined ? {} : { Http1ServerResponse: http1.ServerResponse }),
    ...(http2.Http2ServerRequest === undefined ? {} : { Http2ServerRequest: http2.Http2ServerRequest }),
    ...(http2.Http2ServerResponse === undefined ? {} : { Http2ServerResponse: http2.Http2ServerResponse }),
    settings: { maxConcurrentStreams, initialWindowSize: STREAM_WINDOW_BYTES, maxHeaderListSize: http1.maxHeaderSize },
    // Node refuses new streams once a session buffers this much; a connection may carry
    // maxConcurrentStreams bodies of a window each (kube's MaxUploadBufferPerConnection).
    maxSessionMemory: Math.max(10, Math.ceil((maxConcurrentStreams * STREAM_WINDOW_BYTES) / (1 << 20))),
  };
  const h2 = createSecureServer(options, handler as unknown as Parameters<typeof createSecureServer>[1]);
  // The HTTP/1 fallback reads these from the server object, as http.Server does.
  Object.assign(h2, { keepAliveTimeout: http1.keepAliveTimeout, requestTimeout: http1.requestTimeout, maxHeaderSize: http1.maxHeaderSize });
  /** Every open HTTP/2 connection. */
  const sessions = new Map<Http2Session, SessionState>();
  const byId = new Map<number, Http2Session>();
  let lastId = 0;
  const gone = (state: SessionState, shed?: boolean): void => {
    if (!state.reported) return;
    state.reported = false;
    clients?.gone(state.id, shed);
  };
  h2.on('session', (session: Http2Session) => {
    const state: SessionState = { id: ++lastId, requests: 0, described: false, reported: false };
    sessions.set(session, state);
    byId.set(state.id, session);
    session.once('close', () => {
      sessions.delete(session);
      byId.delete(state.id);
      gone(state);
    });
  });
  h2.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    const session = stream.session;
    const state = session === undefined ? undefined : sessions.get(session);
    if (state === undefined || session === undefined) return;
    state.requests++;
    if (!state.described && clients !== undefined) describeClient(session, state, headers, clients);
  });
  // A broken connection (a protocol error, a reset) ends that connection only.
  h2.on('sessionError', (error: Error) => logger.debug('http2 connection error', { error: error.message }));
  /** GOAWAY on `session`; its watches end, so the client opens them again on its next connection. */
  const move = (session: Http2Session, state: SessionState, shed?: boolean): void => {
    gone(state, shed);
    session.close();
    connectionMoved(session);
  };
  return {
    server: h2 as unknown as Server,
    closeSessions: () => {
      for (const session of sessions.keys()) if (!session.closed) session.close();
    },
    shedSession: (share, settling) => {
      const open = [...sessions].filter(([session]) => !session.closed && !session.destroyed);
      const groups = clientGroups(open.map(([, state]) => state));
      const connections = groups.map((members) =>
        members.reduce(
          (a, i) => ({
            requests: a.requests + open[i][1].requests,
            watches: a.watches + openWatches(open[i][0]),
            settling: a.settling || settling?.has(open[i][1].client ?? '') === true,
          }),
          { requests: 0, watches: 0, settling: false },
        ),
      );
      for (const state of sessions.values()) state.requests = 0;
      const chosen = connectionToMove(connections, share);
      if (chosen === undefined) return false;
      logger.info('asking a client to reconnect, to a less busy worker', {
        requests: connections[chosen].requests,
        share: Math.round(share * 100) / 100,
        watches: connections[chosen].watches,
        connections: groups[chosen].length,
        ofRequests: connections.reduce((a, c) => a + c.requests, 0),
      });
      for (const i of groups[chosen]) move(open[i][0], open[i][1], true);
      return true;
    },
    moveSession: (id) => {
      const session = byId.get(id);
      const state = session === undefined ? undefined : sessions.get(session);
      if (session === undefined || state === undefined || session.closed || session.destroyed) return false;
      move(session, state);
      return true;
    },
  };
}

/** Reads the client of `session` from its first request's headers, and tells `clients`. */
function describeClient(session: Http2Session, state: SessionState, headers: IncomingHttpHeaders, clients: ClientConnections): void {
  state.described = true;
  const socket = session.socket as TLSSocket | undefined;
  const address = socket?.remoteAddress;
  const client = clientKey(address, headers['user-agent']);
  if (client === undefined || address === undefined) return;
  state.client = client;
  state.credential = socket?.getPeerCertificate?.()?.fingerprint256 ?? '';
  state.reported = true;
  clients.opened({ session: state.id, client, address, credential: state.credential });
}

/**
 * The connections that move together: those of one client that presented different credentials
 * (kube-controller-manager's informers' and its controllers', kept on one worker by the primary)
 * form one group; every other connection is a group of its own. Indexes into `states`.
 */
export function clientGroups(states: readonly { client?: string; credential?: string }[]): number[][] {
  const byClient = new Map<string, number[]>();
  const groups: number[][] = [];
  states.forEach((state, i) => {
    if (state.client === undefined) {
      groups.push([i]);
      return;
    }
    const members = byClient.get(state.client);
    if (members === undefined) byClient.set(state.client, [i]);
    else members.push(i);
  });
  for (const members of byClient.values()) {
    const credentials = new Set(members.map((i) => states[i].credential));
    if (credentials.size > 1) groups.push(members);
    else for (const i of members) groups.push([i]);
  }
  return groups;
}

/**
 * Which connection (or group of one client's connections, clientGroups) to move off a busy worker,
 * given how many requests each carried lately, how many
 * watches each has open, and the `share` of the requests that would even the worker out with the
 * least busy one: the connection closest to that share, only if moving it at least halves the gap
 * between the two (it carried at most one and a half times the share; more would flip the hot spot
 * to the other worker, which would then send the client back), not a client moved lately (`settling`:
 * the primary's record, see ClientAffinity.settling), by enough to be worth a
 * reconnection (at least half the share; a client that sends a request now and then is left
 * alone), and only one with a watch open. A client's watches move
 * with its connection (connection-moves.ts); a connection without any may be one of several of its
 * client's that the primary could not tie together (a client whose user agent it cannot read):
 * moving it would part the client's writes from its watches, and its informers would see its own
 * writes late.
 * Undefined when none qualifies.
 */
export function connectionToMove(connections: readonly { requests: number; watches: number; settling?: boolean }[], share: number): number | undefined {
  const total = connections.reduce((a, c) => a + c.requests, 0);
  if (total === 0) return undefined;
  const target = share * total;
  let chosen: number | undefined;
  for (let i = 0; i < connections.length; i++) {
    const { requests, watches, settling } = connections[i];
    if (settling === true || watches === 0 || requests === 0 || requests < target / 2 || requests > 1.5 * target) continue;
    if (chosen === undefined || Math.abs(requests - target) < Math.abs(connections[chosen].requests - target)) chosen = i;
  }
  return chosen;
}

/** Closes the server's idle HTTP/1 connections where Node can (an HTTP/2 server closes them on `close()`). */
export function closeIdleConnections(server: Server): void {
  if (typeof server.closeIdleConnections === 'function') server.closeIdleConnections();
}
