/**
 * Header values carrying UTF-8 bytes are kept as latin1 strings (kube's Warning headers: Go writes a
 * header's bytes as they are, see codec/go-quote.ts), which Node writes byte for byte, except in one
 * case: an HTTP/1.1 response whose first write (or end) is a string while its header block is not
 * built yet goes out as one string, header block and body together, in the body's encoding, which
 * encodes those bytes a second time. The response methods here hand Node such a body as bytes instead.
 */
import type { ServerResponse } from 'node:http';

type Write = (this: ServerResponse, chunk: unknown, encoding?: unknown, callback?: unknown) => unknown;

/**
 * `write` and `end` for a layer of HTTP/1.1 responses above `base` (the app's response prototype): a
 * string body written before the header block is built goes as bytes, so Node writes the header
 * block by itself (and frames the answer as it would have: Content-Length for a whole body given to
 * `end`). Methods of the prototype rather than of each response: a response keeps Node's shape, and
 * costs no wrapper of its own.
 */
export function headerBytesPreserving(base: object): PropertyDescriptorMap {
  const method = (inner: Write): PropertyDescriptor => ({
    value(this: ServerResponse, chunk: unknown, encoding?: unknown, callback?: unknown): unknown {
      if (typeof chunk !== 'string' || this.headersSent) return inner.call(this, chunk, encoding, callback);
      if (typeof encoding === 'string') return inner.call(this, Buffer.from(chunk, encoding as BufferEncoding), callback);
      return inner.call(this, Buffer.from(chunk, 'utf8'), encoding, callback);
    },
    writable: true,
    configurable: true,
  });
  const { write, end } = base as { write: Write; end: Write };
  return { write: method(write), end: method(end) };
}
