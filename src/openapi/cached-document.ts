import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Request, Response } from 'express';

/** Bodies smaller than this are sent uncompressed, as Go's gziphandler does by default. */
const GZIP_MIN_BYTES = 1400;

/**
 * The encoded bytes of one OpenAPI document and its validators. The gzip form is computed on first use
 * and kept, so a large document is compressed once, not per request.
 */
export class CachedDocument {
  private gzipped: Buffer | undefined;

  /**
   * @param bytes the encoded document
   * @param hash the validator: uppercase hex SHA-512 of the document's JSON form, as kube-openapi
   *   computes it (the protobuf form shares its JSON form's hash)
   * @param lastModified when the document last changed (whole seconds are what HTTP dates carry)
   */
  constructor(
    readonly bytes: Buffer,
    readonly hash: string,
    readonly lastModified: Date,
  ) {}

  /** A document whose validator is the hash of BYTES themselves. */
  static of(bytes: Buffer, lastModified: Date): CachedDocument {
    return new CachedDocument(bytes, sha512Hex(bytes), lastModified);
  }

  /** The ETag header value: the hash in double quotes. */
  get etag(): string {
    return `"${this.hash}"`;
  }

  gzip(): Buffer {
    this.gzipped ??= gzipSync(this.bytes);
    return this.gzipped;
  }
}

/** Uppercase hexadecimal SHA-512, the form kube-openapi uses for ETags and `?hash=`. */
export function sha512Hex(bytes: Buffer): string {
  return createHash('sha512').update(bytes).digest('hex').toUpperCase();
}

function etagMatches(header: string, etag: string): boolean {
  const bare = etag.replace(/^W\//, '');
  for (const candidate of header.split(',')) {
    const tag = candidate.trim();
    if (tag === '*') return true;
    // If-None-Match uses the weak comparison (RFC 9110 13.1.2).
    if (tag.replace(/^W\//, '') === bare) return true;
  }
  return false;
}

function notModified(req: Request, doc: CachedDocument): boolean {
  const ifNoneMatch = req.get('If-None-Match');
  if (ifNoneMatch !== undefined) return etagMatches(ifNoneMatch, doc.etag);
  const ifModifiedSince = req.get('If-Modified-Since');
  if (ifModifiedSince === undefined) return false;
  const since = Date.parse(ifModifiedSince);
  return !Number.isNaN(since) && Math.floor(doc.lastModified.getTime() / 1000) * 1000 <= since;
}

function acceptsGzip(req: Request): boolean {
  const header = req.get('Accept-Encoding');
  if (header === undefined) return false;
  return header.split(',').some((part) => {
    const [coding = '', ...params] = part.split(';');
    if (coding.trim().toLowerCase() !== 'gzip') return false;
    return !params.some((p) => /^\s*q\s*=\s*0(\.0*)?\s*$/.test(p));
  });
}

/**
 * Sends DOC with CONTENT_TYPE the way Go's http.ServeContent does for kube-apiserver: ETag and
 * Last-Modified on every answer, 304 without a body when If-None-Match (or, without it,
 * If-Modified-Since) shows the client already has it, gzip when the client accepts it. Headers the
 * caller set before (Vary, Cache-Control) are kept.
 */
export function sendCachedDocument(req: Request, res: Response, doc: CachedDocument, contentType: string): void {
  res.setHeader('ETag', doc.etag);
  if (notModified(req, doc)) {
    res.status(304).end();
    return;
  }
  res.setHeader('Last-Modified', doc.lastModified.toUTCString());
  res.setHeader('Content-Type', contentType);
  let body = doc.bytes;
  if (body.length >= GZIP_MIN_BYTES) {
    res.vary('Accept-Encoding');
    if (acceptsGzip(req)) {
      body = doc.gzip();
      res.setHeader('Content-Encoding', 'gzip');
    }
  }
  res.setHeader('Content-Length', String(body.length));
  res.status(200).end(body);
}
