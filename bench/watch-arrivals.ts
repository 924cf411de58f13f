/**
 * One JSON watch, as an informer holds it, recording when each event arrived (performance.now(),
 * in this process) by the resourceVersion of its object. Bookmarks are skipped.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Http2Session } from './http2-session.js';

export interface WatchArrivals {
  /** Arrival time of the event carrying each resourceVersion. */
  readonly arrivals: Map<string, number>;
  /** Resolves once every version of `rvs` has arrived, or after `timeoutMs` (then false). */
  waitFor(rvs: readonly string[], timeoutMs: number): Promise<boolean>;
  close(): void;
}

/** Where the watch goes: the server, its credentials and the collection path (with query). */
export interface WatchTarget {
  url: string;
  token: string | undefined;
  path: string;
}

/** Records arrivals from a watch's text chunks (newline-delimited JSON events). */
function arrivalsRecorder(): { arrivals: Map<string, number>; onChunk: (chunk: string) => void; waitFor: WatchArrivals['waitFor'] } {
  const arrivals = new Map<string, number>();
  let waiter: (() => void) | undefined;
  let buffered = '';
  const onChunk = (chunk: string): void => {
    const now = performance.now();
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      const rv = /"resourceVersion":"(\d+)"/.exec(line)?.[1];
      if (rv !== undefined && !line.startsWith('{"type":"BOOKMARK"')) arrivals.set(rv, now);
    }
    waiter?.();
  };
  const waitFor = (rvs: readonly string[], timeoutMs: number): Promise<boolean> =>
    new Promise((done) => {
      const check = (): boolean => rvs.every((rv) => arrivals.has(rv));
      if (check()) {
        done(true);
        return;
      }
      const timer = setTimeout(() => {
        waiter = undefined;
        done(false);
      }, timeoutMs);
      waiter = () => {
        if (!check()) return;
        clearTimeout(timer);
        waiter = undefined;
        done(true);
      };
    });
  return { arrivals, onChunk, waitFor };
}

/** Opens the watch on its own HTTP/1.1 connection; resolves once the server answered 200 (rejects otherwise). */
export function openWatchArrivals(target: WatchTarget): Promise<WatchArrivals> {
  const recorder = arrivalsRecorder();
  const u = new URL(target.url);
  const https = u.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (target.token !== undefined) headers.authorization = `Bearer ${target.token}`;
  return new Promise((resolve, reject) => {
    const req = send(
      { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port, path: target.path, headers, ...(https ? { rejectUnauthorized: false } : {}) },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`watch ${target.path}: HTTP ${String(res.statusCode)}`));
          return;
        }
        res.setEncoding('utf8');
        res.on('data', recorder.onChunk);
        res.on('error', () => undefined);
        resolve({ arrivals: recorder.arrivals, waitFor: recorder.waitFor, close: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Opens the watch as a stream of `session` (the caller's own HTTP/2 connection, as client-go's informers share it). */
export async function openWatchArrivalsOn(session: Http2Session, path: string): Promise<WatchArrivals> {
  const recorder = arrivalsRecorder();
  const stream = await session.stream(path, recorder.onChunk);
  return { arrivals: recorder.arrivals, waitFor: recorder.waitFor, close: () => stream.close() };
}
