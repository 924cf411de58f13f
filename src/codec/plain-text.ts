import type { Response } from 'express';

/** Writes a plain-text answer (health reports, kube's `404 page not found`) with an exact length. */
export function writePlainText(res: Response, status: number, text: string, nosniff: boolean): void {
  const body = Buffer.from(text, 'utf8');
  res.status(status);
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  if (nosniff) res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Content-Length', String(body.length));
  res.end(body);
}

/** kube-apiserver's answer for a path it has no handler for (Go's mux: plain text, nosniff). */
export function writeNotFoundPage(res: Response): void {
  writePlainText(res, 404, '404 page not found\n', true);
}
