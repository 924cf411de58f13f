import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { unavailable, type ApiError } from '../api/errors.js';
import { goNetError } from '../webhook/webhook-client.js';
import { escapePath, joinPath } from './go-paths.js';
import { isRewrittenHtml, readHtmlAnswer } from './html-answer.js';
import { rewriteLocation } from './location-rewrite.js';
import { connectionTokens, forwardedResponseHeaders, HOP_BY_HOP, isPseudoHeader, requestHost } from './proxy-headers.js';

/** Where kube's proxy sends a request: its ResourceLocation with the proxy path joined on. */
export interface ProxyTarget {
  /** `http`, `https`, or '' for http. */
  scheme: string;
  /** The backend as a URL host: an IP (IPv6 in brackets) with `:port`, or without it for the scheme's port. */
  host: string;
  /** The decoded path on the backend ('' for none), as kube's Location.Path. */
  path: string;
  /** The agent of an HTTPS backend with TLS settings of its own (a kubelet); default: no verification. */
  httpsAgent?: HttpsAgent;
}

/** The client's request line as kube's handler reads it. */
export interface ProxiedRequestLine {
  /** The request's path, percent-escapes decoded. */
  path: string;
  /** The query as sent, without `?` ('' for none). */
  rawQuery: string;
}

/** Go's dialer gives up on a connection after 30 s (kube's proxy transport uses its defaults). */
const DIAL_TIMEOUT_MS = 30_000;

// Connections to pods are reused as Go's transport reuses them; idle ones do not keep the process alive.
const httpAgent = new HttpAgent({ keepAlive: true, maxFreeSockets: 64 });
// kube's proxy transport does not verify a pod's serving certificate (InsecureSkipVerify).
const httpsAgent = new HttpsAgent({ keepAlive: true, maxFreeSockets: 64, rejectUnauthorized: false });

/** The headers sent to the backend, as Go's reverse proxy behind kube's filters leaves them. */
function backendHeaders(req: IncomingMessage, forwardedUri: string): OutgoingHttpHeaders {
  const raw = req.rawHeaders;
  const listed = connectionTokens(raw);
  const headers: OutgoingHttpHeaders = {};
  const forwardedFor: string[] = [];
  let trailers = false;
  let authority: string | undefined;
  let host = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i];
    const lower = name.toLowerCase();
    if (lower === ':authority') authority = raw[i + 1];
    if (lower === 'host') host = true;
    // kube's authentication and impersonation filters consume these before any handler runs.
    if (lower === 'authorization' || lower.startsWith('impersonate-')) continue;
    if (lower === 'te' && raw[i + 1].split(',').some((t) => t.trim().toLowerCase() === 'trailers')) trailers = true;
    if (HOP_BY_HOP.has(lower) || listed.has(lower) || isPseudoHeader(lower)) continue;
    if (lower === 'x-forwarded-for') {
      forwardedFor.push(raw[i + 1]);
      continue;
    }
    const current = headers[name];
    headers[name] = current === undefined ? raw[i + 1] : Array.isArray(current) ? [...current, raw[i + 1]] : [String(current), raw[i + 1]];
  }
  // An HTTP/2 client names the host in `:authority`; Go's server makes it the request's Host, which
  // its proxy sends on as the backend request's Host header.
  if (!host && authority !== undefined) headers['Host'] = authority;
  // The client may learn trailers, so Go's proxy says the backend may send them.
  if (trailers) headers['Te'] = 'trailers';
  const client = (req.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
  if (client !== '') forwardedFor.push(client);
  if (forwardedFor.length > 0) headers['X-Forwarded-For'] = forwardedFor.join(', ');
  headers['X-Forwarded-Uri'] = forwardedUri;
  return headers;
}

/** Whether a request carries a body (Node says so by its framing headers). */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');
}

/** What rewriting the URLs of a backend's answer needs (the fields and request of kube's proxy.Transport). */
interface LinkRewrite {
  /** The backend as the URL host the request went to. */
  backendHost: string;
  /** The `Host` the client asked for. */
  requestHost: string;
  /** The proxy path of the client's URL (`/api/v1/namespaces/NS/pods/NAME/proxy`). */
  pathPrepend: string;
}

function rewriteUrl(url: string, links: LinkRewrite): string {
  return rewriteLocation(url, links.backendHost, links.requestHost, links.pathPrepend);
}

/**
 * Writes a backend answer's status and headers: merged with those already set (Cache-Control,
 * Audit-Id), `Location` rewritten, and `Content-Length` replaced by `bodyLength` when the body was.
 */
function writeHead(res: ServerResponse, answer: IncomingMessage, links: LinkRewrite, bodyLength?: number): void {
  const raw = forwardedResponseHeaders(answer.rawHeaders);
  const grouped = new Map<string, { name: string; values: string[] }>();
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i].toLowerCase();
    const entry = grouped.get(lower);
    if (entry === undefined) grouped.set(lower, { name: raw[i], values: [raw[i + 1]] });
    else entry.values.push(raw[i + 1]);
  }
  const location = grouped.get('location');
  if (location !== undefined) location.values = [rewriteUrl(location.values[0], links)];
  if (bodyLength !== undefined) grouped.set('content-length', { name: 'Content-Length', values: [String(bodyLength)] });
  for (const [lower, { name, values }] of grouped) {
    const existing = res.getHeader(lower);
    const before = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
    const all = [...before, ...values];
    res.setHeader(name, all.length === 1 ? all[0] : all);
  }
  res.writeHead(answer.statusCode ?? 502);
}

/** Passes a backend's answer on as it arrives, after `prefix` (what was read of it already). */
function relay(answer: IncomingMessage, res: ServerResponse, prefix: Buffer[] = []): void {
  for (const chunk of prefix) res.write(chunk);
  if (answer.readableEnded) {
    res.end();
    return;
  }
  answer.pipe(res);
  answer.resume();
}

/** A dial that took longer than Go's dialer allows, in Go's words. */
class DialTimeout extends Error {
  constructor(address: string) {
    super(`dial tcp ${address}: i/o timeout`);
  }
}

/**
 * kube's UpgradeAwareHandler for a plain (not upgraded) request, with kube-apiserver's proxy
 * transport: the request goes to `target` with the client's method, body (streamed), query and
 * headers (less hop-by-hop ones and the credentials kube's filters consumed, plus `X-Forwarded-For`
 * and `X-Forwarded-Uri`); the answer comes back streamed, its status and headers kept except
 * hop-by-hop and CORS headers, a redirect's `Location` put under the proxy path. A GET or HEAD
 * with no path at all is redirected (301) to the same URL with a slash. A backend that cannot be
 * reached is `onError`'s 503 `error trying to reach service: ...` (nothing is written then); one that
 * fails after its answer began has the client's connection cut, and a client that goes away has the
 * backend's cut. A request without a body that meets a kept-alive connection the backend had
 * closed is sent once more, as Go's transport does. There is no deadline beyond Go's 30 s to
 * connect: kube serves proxy requests as long-running.
 */
export function forwardProxyRequest(
  req: IncomingMessage,
  res: ServerResponse,
  line: ProxiedRequestLine,
  target: ProxyTarget,
  onError: (err: ApiError) => void,
): void {
  let path = target.path;
  if (!path.endsWith('/') && line.path.endsWith('/')) path += '/';
  if (path === '' && (req.method === 'GET' || req.method === 'HEAD')) {
    res.writeHead(301, { Location: `${line.path}/${line.rawQuery === '' ? '' : `?${line.rawQuery}`}` });
    res.end();
    return;
  }
  const https = target.scheme === 'https';
  const colon = target.host.lastIndexOf(':');
  const hasPort = colon > target.host.lastIndexOf(']');
  const hostname = (hasPort ? target.host.slice(0, colon) : target.host).replace(/^\[|\]$/g, '');
  const portText = hasPort ? target.host.slice(colon + 1) : https ? '443' : '80';
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) {
    onError(unavailable(`error trying to reach service: dial tcp: address ${portText}: invalid port`));
    return;
  }
  const address = `${hostname.includes(':') ? `[${hostname}]` : hostname}:${portText}`;
  if (Number(portText) === 0) {
    // Node would take port 0 for the scheme's default; Go dials it, and nothing listens there.
    onError(unavailable(`error trying to reach service: dial tcp ${address}: connect: connection refused`));
    return;
  }
  // The proxy path of the client's URL: what stays of it once the backend path is taken off its end.
  let suffix = target.path;
  if (line.path.endsWith('/') && !suffix.endsWith('/')) suffix += '/';
  const pathPrepend = suffix !== '' && line.path.endsWith(suffix) ? line.path.slice(0, -suffix.length) : line.path;
  const backendPath = escapePath(path === '' ? '/' : path);
  const forwardedUri = joinPath(pathPrepend, backendPath) + (backendPath.endsWith('/') ? '/' : '');
  const options = {
    host: hostname,
    port: Number(portText),
    method: req.method,
    path: `${backendPath}${line.rawQuery === '' ? '' : `?${line.rawQuery}`}`,
    headers: backendHeaders(req, forwardedUri),
    // Go's proxy sends the client's Host header on (kube sets no other).
    setHost: false,
  };
  const bodiless = !hasBody(req);
  let upstream: ClientRequest | undefined;
  // The client went away before the answer ended: the backend request goes too.
  res.once('close', () => {
    if (!res.writableFinished) upstream?.destroy();
  });
  const send = (retry: boolean): void => {
    const sent = https ? httpsRequest({ ...options, agent: target.httpsAgent ?? httpsAgent }) : httpRequest({ ...options, agent: httpAgent });
    upstream = sent;
    sent.on('socket', (socket: Socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(() => sent.destroy(new DialTimeout(address)), DIAL_TIMEOUT_MS);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    sent.on('error', (err: NodeJS.ErrnoException) => {
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      // A kept-alive connection the backend closed meanwhile: once more on a new one, as Go's transport retries.
      if (retry && bodiless && sent.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) return send(false);
      onError(unavailable(`error trying to reach service: ${err instanceof DialTimeout ? err.message : goNetError(err)}`));
    });
    sent.on('response', (answer) => respond(answer));
    if (bodiless) sent.end();
    else req.pipe(sent);
  };
  const respond = (answer: IncomingMessage): void => {
    const links: LinkRewrite = { backendHost: target.host, requestHost: requestHost(req), pathPrepend };
    // A backend that fails or closes before its answer is complete: the client's answer cannot be complete either.
    answer.on('error', () => res.destroy());
    answer.on('close', () => {
      if (!answer.complete) res.destroy();
    });
    // A HEAD answer has no page to rewrite: its headers pass as they came.
    if (req.method !== 'HEAD' && isRewrittenHtml(answer)) {
      readHtmlAnswer(
        answer,
        (url) => rewriteUrl(url, links),
        (html) => {
          if ('page' in html) {
            writeHead(res, answer, links, html.page.length);
            res.end(html.page);
            return;
          }
          writeHead(res, answer, links);
          relay(answer, res, html.prefix);
        },
      );
      return;
    }
    writeHead(res, answer, links);
    // An answer of unknown length may be a stream: the client gets the headers now, as Go's proxy flushes them.
    if (answer.headers['content-length'] === undefined) res.flushHeaders();
    relay(answer, res);
  };
  send(true);
}
