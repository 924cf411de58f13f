/**
 * Header values carrying UTF-8 bytes are kept as latin1 strings (kube's Warning headers: Go writes a
 * header's bytes as they are, see codec/go-quote.ts), which Node writes byte for byte, except in one
 * case: an HTTP/1.1 response whose first write (or end) is a string while its header block is not
 * built yet goes out as one string, header block and body together, in the body's encoding, which
 * encodes those bytes a second time. The middleware here builds the header block first in that case.
 */
import type { NextFunction, Request, Response } from 'express';

type Writer = (...args: unknown[]) => unknown;

/** Wraps `res.write` and `res.end` of HTTP/1.1 responses so that a string body never carries the header block. */
export function headerBytesPreserved(): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    if (req.httpVersionMajor >= 2) {
      next();
      return;
    }
    const write = res.write.bind(res) as Writer;
    const end = res.end.bind(res) as Writer;
    res.write = ((...args: unknown[]) => {
      if (typeof args[0] === 'string' && !res.headersSent) res.writeHead(res.statusCode);
      return write(...args);
    }) as Response['write'];
    res.end = ((...args: unknown[]) => {
      if (typeof args[0] === 'string' && !res.headersSent) res.writeHead(res.statusCode);
      return end(...args);
    }) as Response['end'];
    next();
  };
}
