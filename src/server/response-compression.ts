/**
 * Compression of API responses as kube-apiserver 1.36 does it (APIResponseCompression): gzip only,
 * at level 1 (kube chose it for CPU: ratios within 1.1-1.5x of higher levels), for responses of
 * 128 KiB or more whatever their media type (JSON, protobuf, YAML, CBOR, Table), and only when
 * `Accept-Encoding` lists the exact token `gzip` (kube reads the header that way: `gzip;q=1`,
 * `deflate` or `br` alone get an uncompressed answer).
 *
 * Most answers are far smaller than the threshold, and kubectl and client-go send
 * `Accept-Encoding: gzip` with every request. So a request only marks its response as a candidate;
 * the response's first `writeHead`, `write` or `end` (methods of the response prototypes, see
 * {@link compressionLayer}) decides, and only a body that may reach the threshold gets the
 * `compression` package's wrappers. A small answer is sent as it would be to any other client.
 */
import compression from 'compression';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Responses shorter than this are sent as they are (kube's defaultGzipThresholdBytes). */
export const COMPRESSION_THRESHOLD_BYTES = 128 * 1024;

/** Whether an `Accept-Encoding` value holds the token `gzip`, compared as kube does (trimmed, exact). */
export function acceptsGzipToken(header: string | undefined): boolean {
  if (header === undefined) return false;
  for (const token of header.split(',')) if (token.trim() === 'gzip') return true;
  return false;
}

/** A response as the layer sees it: Express's `locals` holds the candidate mark. */
type Candidate = ServerResponse & { req: IncomingMessage; locals?: { gzipCandidate?: boolean } };

type Method = (this: ServerResponse, ...args: unknown[]) => unknown;

/** Removes `token` from the response's Vary header (the header goes when nothing else is in it). */
function removeVaryToken(res: ServerResponse, token: string): void {
  const vary = res.getHeader('Vary');
  if (vary === undefined) return;
  const kept = String(vary)
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '' && v.toLowerCase() !== token.toLowerCase());
  if (kept.length === 0) res.removeHeader('Vary');
  else res.setHeader('Vary', kept.join(', '));
}

const gzip = compression({ threshold: COMPRESSION_THRESHOLD_BYTES, level: 1, filter: () => true });

/**
 * Gives one response the `compression` package's wrappers. The package negotiates among gzip,
 * deflate and br by itself; it is handed `Accept-Encoding: gzip` so that it picks kube's one. It
 * also adds `Vary: Accept-Encoding` to answers it leaves uncompressed, which kube does not: that is
 * taken back as the headers go out.
 */
function installCompression(res: Candidate): void {
  res.req.headers['accept-encoding'] = 'gzip';
  // Installed before the package's own hook, so it runs after it (each hook calls the one before).
  const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
  res.writeHead = (...args: unknown[]) => {
    if (res.getHeader('Content-Encoding') !== 'gzip') removeVaryToken(res, 'Accept-Encoding');
    return writeHead(...args);
  };
  gzip(res.req as Request, res as unknown as Response, () => undefined);
}

/** Bytes of a body given to `end` (a callback in its place counts as none). */
function bodyBytes(chunk: unknown, encoding: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}

/** Whether a declared Content-Length is under the threshold (undefined when none is declared). */
function declaredSmall(res: ServerResponse): boolean | undefined {
  const declared = res.getHeader('Content-Length');
  return declared === undefined ? undefined : Number(declared) < COMPRESSION_THRESHOLD_BYTES;
}

/**
 * `writeHead`, `write` and `end` for a layer of responses above `base`. A candidate's first call
 * clears the mark and decides as the package would: `end` with a body under the threshold (or a
 * declared Content-Length under it) and `write` with a declared Content-Length under it are sent
 * as they are; anything else gets the package's wrappers, and the call goes to them.
 */
export function compressionLayer(base: object): PropertyDescriptorMap {
  const { writeHead, write, end } = base as { writeHead: Method; write: Method; end: Method };
  /** True when the response now has the package's wrappers (the call must go through them). */
  const decide = (res: Candidate, small: boolean | undefined): boolean => {
    (res.locals as { gzipCandidate?: boolean }).gzipCandidate = false;
    if (small === true || res.headersSent) return false;
    installCompression(res);
    return true;
  };
  const method = (value: Method): PropertyDescriptor => ({ value, writable: true, configurable: true });
  const marked = (res: ServerResponse): boolean => (res as Candidate).locals?.gzipCandidate === true;
  return {
    writeHead: method(function (this: ServerResponse, ...args: unknown[]) {
      if (marked(this) && decide(this, undefined)) return (this.writeHead as Method)(...args);
      return writeHead.apply(this, args);
    }),
    write: method(function (this: ServerResponse, ...args: unknown[]) {
      if (marked(this) && decide(this, declaredSmall(this))) return (this.write as Method)(...args);
      return write.apply(this, args);
    }),
    end: method(function (this: ServerResponse, ...args: unknown[]) {
      if (marked(this) && decide(this, declaredSmall(this) ?? bodyBytes(args[0], args[1]) < COMPRESSION_THRESHOLD_BYTES)) {
        return (this.end as Method)(...args);
      }
      return end.apply(this, args);
    }),
  };
}

/**
 * The request stage: marks the response of a request `applies` accepts (the caller leaves out
 * streams: watches, logs, proxied answers) whose client accepts gzip. The response prototypes'
 * {@link compressionLayer} does the rest.
 */
export function responseCompression(applies: (req: Request) => boolean): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (acceptsGzipToken(req.headers['accept-encoding']) && applies(req)) res.locals.gzipCandidate = true;
    next();
  };
}
