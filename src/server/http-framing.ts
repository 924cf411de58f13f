import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { decodePath } from '../api/request-info.js';

/**
 * The HTTP layer's own refusals, as Go's net/http (kube-apiserver's server) makes them: a request it
 * cannot parse gets a plain-text `400 Bad Request` (or `431 Request Header Fields Too Large`) and the
 * connection is closed; nothing reaches the API handlers.
 */

/** kube-apiserver's limit on request line plus headers (Go's http.DefaultMaxHeaderBytes). */
export const MAX_HEADER_BYTES = 1 << 20;

function plainStatus(status: number, text: string): string {
  const body = `${status} ${text}`;
  return `HTTP/1.1 ${status} ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${body}`;
}

/** The response a socket is still writing, if any (Node keeps it on the socket while it is in flight). */
function inFlightResponse(socket: Socket): ServerResponse | undefined {
  const res = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  return res !== null && res !== undefined && !res.writableFinished ? res : undefined;
}

/**
 * Answers a request the HTTP parser refused, then closes the connection. When the bytes that fail
 * to parse follow a request still being answered (a client that sent a body the headers did not
 * announce), that answer goes out first and the 400 after it, in order, as Go's server, which reads
 * the next request only after answering the current one, sends them.
 */
function onClientError(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const reply = err.code === 'HPE_HEADER_OVERFLOW' ? plainStatus(431, 'Request Header Fields Too Large') : plainStatus(400, 'Bad Request');
  const pending = inFlightResponse(socket);
  // The parse error is in the body of the request being answered (it ended early): refuse it now.
  if (pending === undefined || (pending as ServerResponse & { req?: IncomingMessage }).req?.complete === false) {
    socket.end(reply);
    return;
  }
  const after = (): void => {
    if (socket.writable) socket.end(reply);
    else socket.destroy();
  };
  pending.once('finish', after);
  pending.once('close', () => {
    if (!pending.writableFinished) socket.destroy();
  });
}

function refuse(res: ServerResponse, text = 'Bad Request'): void {
  const body = `400 ${text}`;
  res.shouldKeepAlive = false;
  res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), Connection: 'close' });
  res.end(body);
}

/**
 * Checks what Node's parser lets through but Go's does not, before the app sees the request:
 * HTTP/0.9 request lines (no version), request targets that are neither a path nor an absolute URL,
 * and paths with malformed percent-escapes. An absolute-form target (`GET http://host/path`) is
 * served as its path, as Go serves it. Returns false when the request was answered here.
 */
export function acceptRequest(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.httpVersionMajor < 1) {
    refuse(res);
    return false;
  }
  let target = req.url ?? '';
  const absolute = /^https?:\/\/[^/?#]*/i.exec(target);
  if (absolute !== null) {
    target = target.slice(absolute[0].length);
    if (!target.startsWith('/')) target = `/${target}`;
    req.url = target;
  }
  if (!target.startsWith('/') && !(target === '*' && req.method === 'OPTIONS')) {
    refuse(res);
    return false;
  }
  const q = target.indexOf('?');
  if (decodePath(q < 0 ? target : target.slice(0, q)) === undefined) {
    refuse(res);
    return false;
  }
  return true;
}

/** How long a closing connection keeps reading a request body it answered early (Go's rstAvoidanceDelay). */
const LINGER_MS = 500;

const CURRENT_REQUEST = Symbol('capstan.currentRequest');

type LingeringSocket = Socket & { [CURRENT_REQUEST]?: IncomingMessage };

/**
 * Closes a connection whose request body has not all arrived (it was answered early, e.g. 413) the
 * way Go's server does: the response is followed by a FIN, the rest of the body is read and dropped
 * for up to {@link LINGER_MS}, then the socket is destroyed. Closing at once would make the kernel
 * answer the client's unread bytes with a reset, and a client still writing its body would see a
 * broken pipe instead of the answer.
 */
function lingeringClose(socket: Socket): void {
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.once('end', () => socket.destroy());
  socket.resume();
}

/**
 * Call for every request before it is handled: when its connection closes after the answer while
 * the request body is still arriving, the close lingers (see {@link lingeringClose}).
 */
export function lingerOnEarlyAnswer(req: IncomingMessage): void {
  const socket = req.socket as LingeringSocket;
  if (!(CURRENT_REQUEST in socket)) {
    const destroySoon = socket.destroySoon.bind(socket);
    socket.destroySoon = (): void => {
      if (socket[CURRENT_REQUEST]?.complete === false && !socket.destroyed) lingeringClose(socket);
      else destroySoon();
    };
  }
  socket[CURRENT_REQUEST] = req;
}

/** Installs Go's answers for connections whose requests Node's HTTP parser refuses. */
export function installClientErrorHandler(server: Server): void {
  server.on('clientError', onClientError);
}
