import { decodePath, parseRequestInfo, type RequestInfo } from './request-info.js';

/** One request's target as every stage reads it: parsed once (kube's WithRequestInfo). */
export interface ParsedRequest {
  /** The path as sent (percent-escapes kept). */
  readonly rawPath: string;
  /** The path with percent-escapes decoded; undefined when an escape is malformed. */
  readonly path: string | undefined;
  readonly query: URLSearchParams;
  /** The resource request the path names; undefined for non-resource paths (discovery, health, ...). */
  readonly info: RequestInfo | undefined;
}

/** The parts of a request the parse reads (an Express request or Node's IncomingMessage). */
interface RequestLine {
  method?: string;
  url?: string;
  originalUrl?: string;
}

const parsed = new WeakMap<object, ParsedRequest>();

/** Parses a request target (`path?query`) with its method. */
export function parseRequest(method: string, target: string): ParsedRequest {
  const q = target.indexOf('?');
  const rawPath = q < 0 ? target : target.slice(0, q);
  const query = new URLSearchParams(q < 0 ? '' : target.slice(q + 1));
  const path = decodePath(rawPath);
  return { rawPath, path, query, info: path === undefined ? undefined : parseRequestInfo(method, path, query) };
}

/**
 * The request's parsed target, computed on first use and then shared by every stage that reads it
 * (metrics, logs, authentication, authorization, audit, routing). The target is the request line's
 * (Express's `originalUrl`, which routers never rewrite).
 */
export function parsedRequestOf(req: RequestLine): ParsedRequest {
  let p = parsed.get(req);
  if (p === undefined) {
    p = parseRequest(req.method ?? 'GET', req.originalUrl ?? req.url ?? '/');
    parsed.set(req, p);
  }
  return p;
}
