import type { OutgoingHttpHeaders } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { queryBool } from '../api/request-options.js';
import type { User } from '../api/user.js';
import { writePlainText } from '../codec/plain-text.js';
import { logger } from '../logging/logger.js';
import { goNetError } from '../webhook/webhook-client.js';
import {
  connectionTokens,
  forwardedResponseHeaders,
  HOP_BY_HOP,
  isPseudoHeader,
  isUpgradeRequest,
  rawResponseHead,
  withClose,
} from '../proxy/proxy-headers.js';
import { spliceUpgraded } from '../proxy/splice-upgraded.js';
import type { ApiServiceInfo } from './api-service.js';
import type { ApiServiceRegistry } from './api-service-registry.js';
import { setAuthProxyHeaders, type ProxyTransport } from './proxy-transport.js';
import { RouteError, type Endpoint, type ServiceRoutes } from './service-routes.js';
import { takeUpgradeConnection, type UpgradeConnection } from './upgrade-requests.js';

/** What the proxy needs. */
export interface ProxyDependencies {
  registry: ApiServiceRegistry;
  routes: ServiceRoutes;
  transport: ProxyTransport;
  /** `--aggregator-reject-forwarding-redirect`: a redirect from the backend becomes a 502. */
  rejectForwardingRedirects: boolean;
  /** How to end each open long-running exchange (watches, upgraded connections), for shutdown. */
  streams: Set<() => void>;
  /** The user the auth filter established for the request (the handlers' layer knows where it is kept). */
  userOf: (res: Response) => User;
}

/** How long kube's aggregator waits for an extension server's discovery document (`/apis/GROUP/VERSION`). */
const DISCOVERY_TIMEOUT_MS = 5000;

/** The group and version of an `/apis/GROUP/VERSION[/...]` path, and whether it is that path exactly. */
export function aggregatedPathOf(url: string): { group: string; version: string; discovery: boolean } | undefined {
  if (!url.startsWith('/apis/')) return undefined;
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const segments = path.slice('/apis/'.length).split('/');
  if (segments.length < 2 || segments[0] === '' || segments[1] === '') return undefined;
  return { group: segments[0], version: segments[1], discovery: segments.length === 2 || (segments.length === 3 && segments[2] === '') };
}

/** Go's `http.Error`: plain text, nosniff, the message and a newline. */
function httpError(res: Response, code: number, message: string): void {
  writePlainText(res, code, `${message}\n`, true);
}

/**
 * The request headers sent to the backend: the client's, less hop-by-hop ones (unless `keepUpgrade`),
 * the credentials the aggregator consumed (`Authorization`, `Impersonate-*`) and front-proxy headers
 * a client sent; plus `X-Forwarded-For` and `X-Forwarded-Uri` as kube's proxy sets them, the
 * request's audit ID, and the user in front-proxy headers.
 */
function backendHeaders(req: Request, res: Response, user: User, keepUpgrade: boolean): OutgoingHttpHeaders {
  const raw = req.rawHeaders;
  const listed = connectionTokens(raw);
  const headers: OutgoingHttpHeaders = {};
  const add = (name: string, value: string): void => {
    const current = headers[name];
    headers[name] = current === undefined ? value : Array.isArray(current) ? [...current, value] : [String(current), value];
  };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    const lower = name.toLowerCase();
    if (lower === 'host' || lower === 'authorization' || lower.startsWith('impersonate-') || lower.startsWith('x-remote-')) continue;
    if (isPseudoHeader(lower)) continue;
    if (!keepUpgrade && (HOP_BY_HOP.has(lower) || listed.has(lower))) continue;
    if (keepUpgrade && lower !== 'connection' && lower !== 'upgrade' && (HOP_BY_HOP.has(lower) || listed.has(lower))) continue;
    add(lower === 'x-forwarded-for' ? 'X-Forwarded-For' : name, raw[i + 1]);
  }
  const client = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  if (client !== '') {
    const prior = headers['X-Forwarded-For'];
    headers['X-Forwarded-For'] = prior === undefined ? client : `${Array.isArray(prior) ? prior.join(', ') : String(prior)}, ${client}`;
  }
  const q = req.originalUrl.indexOf('?');
  headers['X-Forwarded-Uri'] = q < 0 ? req.originalUrl : req.originalUrl.slice(0, q);
  const auditId = res.getHeader('Audit-Id');
  if (typeof auditId === 'string') headers['Audit-Id'] = auditId;
  setAuthProxyHeaders(headers, user);
  return headers;
}

/**
 * kube-aggregator's proxy handler as Express middleware, placed after authentication and
 * authorization (so the user was authorized here first, as kube does): a request for
 * `/apis/GROUP/VERSION[/...]` of an APIService with a service reference is sent to that service,
 * streamed both ways (watches flow event by event), with the user in front-proxy headers over the
 * aggregator's TLS client certificate. An APIService whose `Available` condition is not True, or a
 * service that cannot be resolved, answers kube's 503 `service unavailable`; a backend that cannot
 * be reached answers 503 `error trying to reach service: ...`. Upgrade requests (SPDY, WebSocket) are
 * passed on and, once the backend switches protocols, spliced byte for byte. Every other request
 * goes on, at the cost of one map lookup when no APIService names a service.
 */
export function aggregatorProxy(deps: ProxyDependencies) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!deps.registry.hasRemote) return next();
    const path = aggregatedPathOf(req.originalUrl);
    const info = path === undefined ? undefined : deps.registry.remote(path.group, path.version);
    if (path === undefined || info?.service === undefined) return next();
    if (!info.available) return httpError(res, 503, 'service unavailable');
    const ref = info.service;
    deps.routes.resolve(ref).then(
      (endpoint) => {
        try {
          const upgrade = isUpgradeRequest(req) ? takeUpgradeConnection(req, res) : undefined;
          if (upgrade !== undefined) proxyUpgrade(deps, info, endpoint, req, res, upgrade);
          else proxyRequest(deps, info, endpoint, req, res, path.discovery);
        } catch (err) {
          // kube's answer when the APIService's transport cannot be built.
          logger.warn('aggregator: cannot proxy', { error: err });
          if (!res.headersSent) httpError(res, 500, err instanceof Error ? err.message : String(err));
        }
      },
      (err: unknown) => {
        if (!(err instanceof RouteError)) logger.warn('aggregator: cannot resolve a service', { error: err });
        else logger.debug('aggregator: cannot resolve a service', { service: `${ref.namespace}/${ref.name}`, error: err.message });
        httpError(res, 503, 'service unavailable');
      },
    );
  };
}

/** Whether a request is a watch (`?watch=true` or a `/watch/` path), which stays open. */
function isWatch(req: Request): boolean {
  const q = req.originalUrl.indexOf('?');
  return (
    (q >= 0 && queryBool(new URLSearchParams(req.originalUrl.slice(q + 1)), 'watch')) || req.originalUrl.slice(0, q < 0 ? undefined : q).includes('/watch/')
  );
}

/** Whether a request carries no body (Node says so by its framing headers). */
function hasNoBody(req: Request): boolean {
  return req.headers['transfer-encoding'] === undefined && (req.headers['content-length'] === undefined || req.headers['content-length'] === '0');
}

/** A pooled connection the backend closed before answering (Go's transport retries such a request). */
function staleConnection(upstream: { reusedSocket: boolean }, err: NodeJS.ErrnoException): boolean {
  return upstream.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE');
}

function proxyRequest(deps: ProxyDependencies, info: ApiServiceInfo, endpoint: Endpoint, req: Request, res: Response, discovery: boolean): void {
  const controller = new AbortController();
  const signal = discovery ? AbortSignal.any([controller.signal, AbortSignal.timeout(DISCOVERY_TIMEOUT_MS)]) : controller.signal;
  const headers = backendHeaders(req, res, deps.userOf(res), false);
  const bodiless = hasNoBody(req);
  let answered = false;
  // The client went away (a watch it stopped): stop the backend request too.
  res.on('close', () => answered || controller.abort());
  let stream: { unpipe(): void } | undefined;
  if (isWatch(req)) {
    // At shutdown an open watch ends cleanly (the last chunk written), as Capstan's own watches do.
    const end = (): void => {
      stream?.unpipe();
      if (res.headersSent) res.end();
      else res.destroy();
      controller.abort();
    };
    deps.streams.add(end);
    res.on('close', () => deps.streams.delete(end));
  }
  const send = (retry: boolean): void => {
    const upstream = deps.transport.request(info, endpoint, req.method, req.originalUrl, headers, signal);
    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      if (retry && bodiless && staleConnection(upstream, err)) return send(false);
      const why = err.name === 'AbortError' || err.name === 'TimeoutError' ? 'context deadline exceeded' : goNetError(err);
      httpError(res, 503, `error trying to reach service: ${why}`);
    });
    upstream.on('response', (answer) => {
      answer.on('end', () => (answered = true));
      const status = answer.statusCode ?? 502;
      if (deps.rejectForwardingRedirects && status >= 300 && status <= 399 && answer.headers.location !== undefined) {
        answer.resume();
        writePlainText(res, 502, 'the backend attempted to redirect this request, which is not permitted', false);
        return;
      }
      res.writeHead(status, forwardedResponseHeaders(answer.rawHeaders));
      // A streamed answer (a watch) may send nothing for a while: the client gets the headers now.
      if (answer.headers['content-length'] === undefined) res.flushHeaders();
      // Each chunk is written as it arrives: watch events reach the client one by one.
      answer.pipe(res);
      stream = { unpipe: () => answer.unpipe(res) };
      answer.on('error', () => res.destroy());
    });
    if (bodiless) upstream.end();
    else req.pipe(upstream);
  };
  send(true);
}

/**
 * The upgrade path of kube's UpgradeAwareHandler: the request goes to the backend with its
 * `Connection`/`Upgrade` headers; a 101 answer is written to the client as it came and the two
 * connections are spliced until either closes; an error answer (400 and above) is passed on; any
 * other answer is a 503 `invalid upgrade response`.
 */
function proxyUpgrade(deps: ProxyDependencies, info: ApiServiceInfo, endpoint: Endpoint, req: Request, res: Response, client: UpgradeConnection): void {
  const { socket } = client;
  const upstream = deps.transport.request(info, endpoint, req.method, req.originalUrl, backendHeaders(req, res, deps.userOf(res), true));
  const fail = (message: string): void => {
    const body = `${message}\n`;
    socket.end(
      `HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
  socket.on('close', () => upstream.destroy());
  const end = (): void => {
    socket.destroy();
    upstream.destroy();
  };
  deps.streams.add(end);
  socket.on('close', () => deps.streams.delete(end));
  upstream.on('error', (err: Error) => fail(`error dialing backend: ${goNetError(err)}`));
  upstream.on('upgrade', (answer, backend, head) => spliceUpgraded(socket, client.head, answer, backend, head));
  upstream.on('response', (answer) => {
    const status = answer.statusCode ?? 0;
    if (status < 400) {
      answer.resume();
      fail(`invalid upgrade response: status code ${status}`);
      return;
    }
    socket.write(rawResponseHead(status, answer.statusMessage ?? '', withClose(answer.rawHeaders)));
    answer.pipe(socket);
  });
  upstream.end();
}
