import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { ApiError } from '../api/errors.js';
import { goNetError } from '../webhook/webhook-client.js';
import type { ProxyTarget } from './forward-request.js';
import { escapePath } from './go-paths.js';
import { rawResponseHead, withClose } from './proxy-headers.js';
import { spliceUpgraded } from './splice-upgraded.js';

/** The client's connection, taken from the HTTP server once the backend agrees to switch protocols. */
export interface TakenConnection {
  socket: Socket;
  /** Bytes the client sent past its request's headers. */
  head: Buffer;
}

/** What a backend other than a pod or service needs (a kubelet): the query of its location, and TLS settings (default: no verification). */
export interface UpgradeBackend {
  query?: string;
  tls?: { cert?: string; key?: string; ca?: string; rejectUnauthorized: boolean };
}

/** The headers of an upgrade request sent to the backend: all of the client's, less the credentials kube's filters consumed, plus X-Forwarded-For. */
function upgradeHeaders(req: IncomingMessage): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {};
  const forwardedFor: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i].toLowerCase();
    if (lower === 'authorization' || lower.startsWith('impersonate-')) continue;
    if (lower === 'x-forwarded-for') {
      forwardedFor.push(raw[i + 1]);
      continue;
    }
    const current = headers[raw[i]];
    headers[raw[i]] = current === undefined ? raw[i + 1] : Array.isArray(current) ? [...current, raw[i + 1]] : [String(current), raw[i + 1]];
  }
  const client = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  if (client !== '') forwardedFor.push(client);
  if (forwardedFor.length > 0) headers['X-Forwarded-For'] = forwardedFor.join(', ');
  return headers;
}

/**
 * The upgrade path of kube's UpgradeAwareHandler (tryUpgrade), for a request with `Connection:
 * Upgrade` (WebSocket, SPDY): it goes to `target` on a connection of its own with its upgrade
 * headers, to the location's path alone (kube sends no query on a proxy's location; a kubelet's
 * location has one, `backend.query`), and redirects nothing.
 * A backend that switches protocols has its answer written to the client as it came, and the two
 * connections are spliced until either closes; an error answer (400 and above) is passed on and the
 * connection closed. A backend that cannot be reached is `onError`'s 500 `error dialing backend:
 * ...`, any other answer its 500 `invalid upgrade response: status code N` (kube's words, no reason).
 * `take` hands over the client's connection; undefined means the server did not let it leave HTTP.
 */
export function forwardProxyUpgrade(
  req: IncomingMessage,
  res: ServerResponse,
  target: ProxyTarget,
  take: () => TakenConnection | undefined,
  onError: (err: ApiError) => void,
  backend: UpgradeBackend = {},
): void {
  const https = target.scheme === 'https';
  const colon = target.host.lastIndexOf(':');
  const hasPort = colon > target.host.lastIndexOf(']');
  const hostname = (hasPort ? target.host.slice(0, colon) : target.host).replace(/^\[|\]$/g, '');
  const port = Number(hasPort ? target.host.slice(colon + 1) : https ? '443' : '80');
  const options = {
    host: hostname,
    port,
    method: req.method,
    path: escapePath(target.path === '' ? '/' : target.path) + (backend.query ? `?${backend.query}` : ''),
    headers: upgradeHeaders(req),
    setHost: false,
    // An upgraded connection is never returned to a pool.
    agent: false,
  };
  const upstream = https ? httpsRequest({ ...options, rejectUnauthorized: false, ...backend.tls }) : httpRequest(options);
  res.once('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  upstream.on('error', (err: Error) => {
    if (res.headersSent || res.destroyed) return;
    onError(new ApiError(500, '', `error dialing backend: ${goNetError(err)}`));
  });
  upstream.on('upgrade', (answer: IncomingMessage, backend: Socket, backendHead: Buffer) => {
    const client = take();
    if (client === undefined) {
      backend.destroy();
      onError(new ApiError(500, '', 'request connection cannot be hijacked'));
      return;
    }
    spliceUpgraded(client.socket, client.head, answer, backend, backendHead);
  });
  upstream.on('response', (answer: IncomingMessage) => {
    const status = answer.statusCode ?? 0;
    if (status < 400) {
      answer.resume();
      onError(new ApiError(500, '', `invalid upgrade response: status code ${status}`));
      return;
    }
    const client = take();
    if (client === undefined) {
      answer.resume();
      onError(new ApiError(500, '', 'request connection cannot be hijacked'));
      return;
    }
    client.socket.write(rawResponseHead(status, answer.statusMessage ?? '', withClose(answer.rawHeaders)));
    answer.pipe(client.socket);
    answer.on('error', () => client.socket.destroy());
  });
  upstream.end();
}
