/**
 * One JSON watch, as an informer holds it, recording when each event arrived (performance.now(),
 * in this process) by the resourceVersion of its object. Bookmarks are skipped.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';

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

/** Opens the watch; resolves once the server answered 200 (rejects otherwise). */
export function openWatchArrivals(target: WatchTarget): Promise<WatchArrivals> {
  const arrivals = new Map<string, number>();
  const u = new URL(target.url);
  const https = u.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (target.token !== undefined) headers.authorization = `Bearer ${target.token}`;
  let waiter: (() => void) | undefined;
  return new Promise((resolve, reject) => {
    const req = send(
      { host: u.hostname.replace(/^\[|\]$/g, ''), port: u.port, path: target.path, headers, ...(https ? { rejectUnauthorized: false } : {}) },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`watch ${target.path}: HTTP ${String(res.statusCode)}`));
          return;
        }
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
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
        });
        res.on('error', () => undefined);
        resolve({
          arrivals,
          waitFor: (rvs, timeoutMs) =>
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
            }),
          close: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}
