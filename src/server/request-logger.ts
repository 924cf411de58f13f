import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../api/errors.js';
import { labelRequest } from '../metrics/request-labels.js';
import { parsedRequestOf } from '../api/parsed-request.js';
import { logger as defaultLogger, type LogLevel, type Logger } from '../logging/logger.js';

/**
 * Query parameters whose values never reach a log line (bearer tokens in watch URLs, passwords,
 * signatures). Matched case-insensitively against the whole parameter name.
 */
const SECRET_PARAM = /(token|password|passwd|secret|signature|sig|key|credential|auth)/i;

/** `path?query` with secret-looking parameters removed; the rest is kept in order. */
export function redactedUrl(originalUrl: string): string {
  const q0 = originalUrl.indexOf('?');
  if (q0 < 0) return originalUrl;
  const rawPath = originalUrl.slice(0, q0);
  const query = new URLSearchParams(originalUrl.slice(q0 + 1));
  const kept = new URLSearchParams();
  for (const [k, v] of query) if (!SECRET_PARAM.test(k)) kept.append(k, v);
  const q = kept.toString();
  return q === '' ? rawPath : `${rawPath}?${q}`;
}

/** Options of {@link requestLogger}. */
export interface RequestLoggerOptions {
  /** Level of a request line for responses below 500 (`info` by default); 5xx lines are `warn`. */
  level?: LogLevel;
  logger?: Logger;
}

/**
 * One JSON line per finished request: method, path (secret query parameters dropped), verb,
 * resource, status code, duration in ms, user agent, remote address. Never logs bodies or headers
 * beyond the user agent (so no Authorization). Mount it first, before any router.
 */
export function requestLogger(options: RequestLoggerOptions = {}): (req: Request, res: Response, next: NextFunction) => void {
  const log = options.logger ?? defaultLogger;
  const level = options.level ?? 'info';
  return function capstanRequestLogger(req, res, next) {
    // Checked per request so a level change at run time applies at once; skipped lines cost nothing.
    if (!log.enabled(level) && !log.enabled('warn')) {
      next();
      return;
    }
    const started = performance.now();
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      const status = res.statusCode;
      const lineLevel: LogLevel = status >= 500 ? 'warn' : level;
      if (!log.enabled(lineLevel)) return;
      const { info, labels } = labelRequest(req.method, parsedRequestOf(req), '');
      const fields: Record<string, unknown> = {
        method: req.method,
        path: redactedUrl(req.originalUrl),
        verb: info?.verb ?? labels.verb.toLowerCase(),
        resource: info?.resource ?? '',
      };
      if (info?.subresource) fields.subresource = info.subresource;
      if (info?.namespace) fields.namespace = info.namespace;
      if (info?.name) fields.name = info.name;
      fields.status = status;
      fields.durationMs = Math.round((performance.now() - started) * 100) / 100;
      fields.userAgent = req.headers['user-agent'] ?? '';
      fields.remoteAddr = req.socket?.remoteAddress ?? '';
      if (!res.writableFinished) fields.aborted = true;
      log.logDeferred(lineLevel, 'request', fields);
    };
    // 'close' follows 'finish' on every response (HTTP/1 and HTTP/2), and comes alone when the
    // connection ends first: one listener sees both.
    res.on('close', finish);
    next();
  };
}

/**
 * Express error middleware that logs server-side failures (anything that is not an ApiError below
 * 500) with the stack trace, then passes the error on unchanged to the handler that writes the
 * Status. Mount it just before the final error handler.
 */
export function errorLogger(logger: Logger = defaultLogger): (err: unknown, req: Request, res: Response, next: NextFunction) => void {
  return function capstanErrorLogger(err, req, _res, next) {
    const clientError = err instanceof ApiError && err.code < 500;
    if (!clientError) {
      logger.error('request failed', { method: req.method, path: redactedUrl(req.originalUrl), error: err });
    }
    next(err);
  };
}
