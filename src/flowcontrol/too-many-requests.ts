import type { ServerResponse } from 'node:http';

const BODY = 'Too many requests, please try again later.\n';

/**
 * kube's tooManyRequests: a plain-text 429 (Go's http.Error: `text/plain; charset=utf-8`,
 * `X-Content-Type-Options: nosniff`) with `Retry-After` in seconds. Not a Status object: kube-apiserver
 * answers exactly this, and clients (client-go's retry logic) read only the code and the header.
 */
export function writeTooManyRequests(res: ServerResponse, retryAfterSeconds: number): void {
  if (res.headersSent || res.writableEnded) return;
  res.statusCode = 429;
  res.setHeader('Retry-After', String(retryAfterSeconds));
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', Buffer.byteLength(BODY));
  res.end(BODY);
}
