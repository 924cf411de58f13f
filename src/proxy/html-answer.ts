import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { deflateRaw, gzip, gunzip, inflateRaw } from 'node:zlib';
import { rewriteHtmlLinks } from './html-links.js';

/** Largest HTML page whose links are rewritten; a larger one passes as the backend sent it. */
export const MAX_REWRITTEN_HTML_BYTES = 16 * 1024 * 1024;

const codings: Record<string, { decode: (b: Buffer) => Promise<Buffer>; encode: (b: Buffer) => Promise<Buffer> }> = {
  '': { decode: async (b) => b, encode: async (b) => b },
  gzip: { decode: promisify(gunzip), encode: promisify(gzip) },
  // Go's flate package, which kube uses for `deflate`, reads and writes raw DEFLATE data.
  deflate: { decode: promisify(inflateRaw), encode: promisify(deflateRaw) },
};

/**
 * Whether kube's proxy transport rewrites the links of this answer: an HTML page (`text/html`,
 * exactly) that is not a redirect, in an encoding it can read (none, gzip or deflate).
 */
export function isRewrittenHtml(answer: IncomingMessage): boolean {
  if (answer.headers.location !== undefined) return false;
  const type = (answer.headers['content-type'] ?? '').split(';')[0].trim();
  return type === 'text/html' && codings[answer.headers['content-encoding'] ?? ''] !== undefined;
}

/** How an HTML answer goes on: the rewritten page whole, or (too large, or unreadable) the bytes read so far and the rest as it comes. */
export type HtmlAnswer = { page: Buffer } | { prefix: Buffer[] };

/**
 * Reads an HTML answer (kube reads the whole page too) and rewrites its links with `rewrite`, in
 * the answer's own encoding. A page larger than {@link MAX_REWRITTEN_HTML_BYTES}, or one that does
 * not decode, is not rewritten: `done` gets what was read and the caller passes on the rest, so
 * memory stays bounded. `done` is not called when the answer fails first (its 'error' or 'close').
 */
export function readHtmlAnswer(answer: IncomingMessage, rewrite: (url: string) => string, done: (result: HtmlAnswer) => void): void {
  const coding = codings[answer.headers['content-encoding'] ?? ''];
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    size += chunk.length;
    if (size <= MAX_REWRITTEN_HTML_BYTES) return;
    answer.off('data', onData);
    answer.off('end', onEnd);
    answer.pause();
    done({ prefix: chunks });
  };
  const onEnd = (): void => {
    const raw = Buffer.concat(chunks);
    coding
      .decode(raw)
      .then((decoded) => coding.encode(Buffer.from(rewriteHtmlLinks(decoded.toString('utf8'), rewrite), 'utf8')))
      .then(
        (page) => done({ page }),
        () => done({ prefix: [raw] }),
      );
  };
  answer.on('data', onData);
  answer.on('end', onEnd);
}
