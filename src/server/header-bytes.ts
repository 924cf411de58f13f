/**
 * Header values carrying UTF-8 bytes are kept as latin1 strings (kube's Warning headers: Go writes a
 * header's bytes as they are, see codec/go-quote.ts), which Node writes byte for byte, except in one
 * case: an HTTP/1.1 response whose first write (or end) is a string while its header block is not
 * built yet goes out as one string, header block and body together, in the body's encoding, which
 * encodes those bytes a second time. The middleware here hands Node such a body as bytes instead.
 */
import type { NextFunction, Request, Response } from 'express';

type Writer = (...args: unknown[]) => unknown;

/** The string body of a write or end as bytes (Node's default encoding is UTF-8). */
function asBytes(args: unknown[]): unknown[] {
  const [chunk, encoding, ...rest] = args;
  if (typeof encoding === 'string') return [Buffer.from(chunk as string, encoding as BufferEncoding), ...rest];
  return [Buffer.from(chunk as string, 'utf8'), ...(encoding === undefined ? [] : [encoding]), ...rest];
}

/**
 * Wraps `res.write` and `res.end` of HTTP/1.1 responses: a string body written before the header
 * block is built goes as bytes, so Node writes the header block by itself (and frames the answer as
 * it would have: Content-Length for a whole body given to `end`).
 */
export function headerBytesPreserved(): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    if (req.httpVersionMajor >= 2) {
      next();
      return;
    }
    const write = res.write.bind(res) as Writer;
    const end = res.end.bind(res) as Writer;
    res.write = ((...args: unknown[]) => write(...(typeof args[0] === 'string' && !res.headersSent ? asBytes(args) : args))) as Response['write'];
    res.end = ((...args: unknown[]) => end(...(typeof args[0] === 'string' && !res.headersSent ? asBytes(args) : args))) as Response['end'];
    next();
  };
}
