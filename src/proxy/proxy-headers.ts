/**
 * The header rules kube's proxies share (Go's httputil.ReverseProxy under kube's UpgradeAwareHandler
 * and the aggregator's proxy): which headers are hop-by-hop and never forwarded, which backend CORS
 * headers are dropped, and how an upgrade request is recognised.
 */
import type { IncomingMessage } from 'node:http';

/** Hop-by-hop headers (RFC 9110 7.6.1) Go's reverse proxy never forwards, request or response. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** HTTP/2's pseudo-headers (`:path`, `:authority`, ...): the request line of an HTTP/2 request, never forwarded as headers. */
export function isPseudoHeader(lowerName: string): boolean {
  return lowerName.startsWith(':');
}

/** The Host of a request: the `Host` header, or the `:authority` of an HTTP/2 request. */
export function requestHost(req: IncomingMessage): string {
  const authority = req.headers[':authority'];
  return req.headers.host ?? (typeof authority === 'string' ? authority : '');
}

/** CORS headers kube's proxy removes from backend answers. */
export const CORS_HEADERS: ReadonlySet<string> = new Set([
  'access-control-allow-credentials',
  'access-control-allow-headers',
  'access-control-allow-methods',
  'access-control-allow-origin',
]);

/** Names of the headers `Connection` lists in a flat name/value list (hop-by-hop for this message too). */
export function connectionTokens(raw: string[]): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() !== 'connection') continue;
    for (const token of raw[i + 1].split(',')) if (token.trim() !== '') out.add(token.trim().toLowerCase());
  }
  return out;
}

/** Whether `Connection` names `upgrade` (apimachinery's httpstream.IsUpgradeRequest). */
export function isUpgradeRequest(req: IncomingMessage): boolean {
  const values = req.headersDistinct['connection'] ?? [];
  return values.some((v) => v.split(',').some((token) => token.trim().toLowerCase() === 'upgrade'));
}

/**
 * A backend answer's headers as Go's reverse proxy passes them on: hop-by-hop ones and those
 * `Connection` lists go, and so do CORS headers. Go's HTTP client drops the whole `Connection`
 * header of an answer that says `close` before the proxy sees it, so the headers such an answer
 * lists are kept, as kube-apiserver keeps them.
 */
export function forwardedResponseHeaders(raw: string[]): string[] {
  const listed = connectionTokens(raw);
  const dropListed = !listed.has('close');
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i].toLowerCase();
    if (HOP_BY_HOP.has(lower) || (dropListed && listed.has(lower)) || CORS_HEADERS.has(lower)) continue;
    out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/** A response's status line and headers as bytes. */
export function rawResponseHead(status: number, message: string, raw: string[]): string {
  let head = `HTTP/1.1 ${status} ${message}\r\n`;
  for (let i = 0; i < raw.length; i += 2) head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  return `${head}\r\n`;
}

/**
 * Headers of an answer the connection ends after (`Connection: close`): its body is written decoded,
 * so a chunked answer loses `Transfer-Encoding` and is delimited by the close.
 */
export function withClose(raw: string[]): string[] {
  const out: string[] = [];
  const dropped = new Set(['connection', 'keep-alive', 'transfer-encoding']);
  for (let i = 0; i < raw.length; i += 2) if (!dropped.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  out.push('Connection', 'close');
  return out;
}
