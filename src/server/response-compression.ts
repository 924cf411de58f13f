/**
 * Compression of API responses as kube-apiserver 1.36 does it (APIResponseCompression): gzip only,
 * at level 1 (kube chose it for CPU: ratios within 1.1-1.5x of higher levels), for responses of
 * 128 KiB or more whatever their media type (JSON, protobuf, YAML, CBOR, Table), and only when
 * `Accept-Encoding` lists the exact token `gzip` (kube reads the header that way: `gzip;q=1`,
 * `deflate` or `br` alone get an uncompressed answer).
 */
import compression from 'compression';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** Responses shorter than this are sent as they are (kube's defaultGzipThresholdBytes). */
export const COMPRESSION_THRESHOLD_BYTES = 128 * 1024;

/** Whether an `Accept-Encoding` value holds the token `gzip`, compared as kube does (trimmed, exact). */
export function acceptsGzipToken(header: string | undefined): boolean {
  if (header === undefined) return false;
  for (const token of header.split(',')) if (token.trim() === 'gzip') return true;
  return false;
}

/** Removes `token` from the response's Vary header (the header goes when nothing else is in it). */
function removeVaryToken(res: Response, token: string): void {
  const vary = res.getHeader('Vary');
  if (vary === undefined) return;
  const kept = String(vary)
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '' && v.toLowerCase() !== token.toLowerCase());
  if (kept.length === 0) res.removeHeader('Vary');
  else res.setHeader('Vary', kept.join(', '));
}

/**
 * Middleware compressing the responses of requests `applies` accepts (the caller leaves out
 * streams: watches, logs, proxied answers). The `compression` package negotiates among gzip,
 * deflate and br by itself; it is handed `Accept-Encoding: gzip` so that it picks kube's one. It
 * also adds `Vary: Accept-Encoding` to answers it leaves uncompressed, which kube does not: that is
 * taken back as the headers go out.
 */
export function responseCompression(applies: (req: Request) => boolean): RequestHandler {
  const gzip = compression({ threshold: COMPRESSION_THRESHOLD_BYTES, level: 1, filter: () => true });
  return (req: Request, res: Response, next: NextFunction) => {
    if (!acceptsGzipToken(req.headers['accept-encoding']) || !applies(req)) {
      next();
      return;
    }
    req.headers['accept-encoding'] = 'gzip';
    // Installed before the package's own hook, so it runs after it (each hook calls the one before).
    const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => Response;
    res.writeHead = ((...args: unknown[]) => {
      if (res.getHeader('Content-Encoding') !== 'gzip') removeVaryToken(res, 'Accept-Encoding');
      return writeHead(...args);
    }) as Response['writeHead'];
    gzip(req, res, next);
  };
}
