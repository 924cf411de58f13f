/**
 * HTTP to the server under test: keep-alive requests with per-request latency, and a bounded
 * concurrency pool. Only 127.0.0.1 is ever contacted.
 */
import { Agent, request } from 'node:http';

export interface HttpResponse {
  status: number;
  /** The body as text (empty when the caller asked to discard it). */
  body: string;
  /** Body size in bytes. */
  bytes: number;
  /** Milliseconds from sending the request to the last byte of the response. */
  ms: number;
}

export interface RequestOptions {
  body?: string;
  /** Count the body bytes but do not keep them. */
  discardBody?: boolean;
  timeoutMs?: number;
  headers?: Record<string, string>;
}

/** A keep-alive client for one server on 127.0.0.1 (up to `maxSockets` connections). */
export class HttpClient {
  private readonly agent: Agent;
  readonly port: number;

  constructor(baseUrl: string, maxSockets = 64) {
    const u = new URL(baseUrl);
    if (u.hostname !== '127.0.0.1') throw new Error(`refusing to benchmark ${baseUrl}: only 127.0.0.1 is allowed`);
    this.port = Number(u.port);
    this.agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  /** Sends one request; rejects on network errors and timeouts, not on HTTP error statuses. */
  request(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
      if (options.body !== undefined) {
        headers['content-type'] = 'application/json';
        headers['content-length'] = String(Buffer.byteLength(options.body));
      }
      const t0 = performance.now();
      const req = request({ host: '127.0.0.1', port: this.port, method, path, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          bytes += c.length;
          if (!options.discardBody) chunks.push(c);
        });
        res.once('end', () => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            body: options.discardBody ? '' : Buffer.concat(chunks).toString('utf8'),
            bytes,
            ms: performance.now() - t0,
          });
        });
        res.once('error', (e) => {
          clearTimeout(timer);
          reject(e);
        });
      });
      const timer = setTimeout(() => req.destroy(new Error(`${method} ${path}: no response within ${timeoutMs} ms`)), timeoutMs);
      req.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      req.end(options.body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Status of a GET on a fresh connection; 0 when the connection failed or timed out. */
export function httpGetStatus(host: string, port: number, path: string, timeoutMs: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host, port, path, method: 'GET', agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', () => resolve(0));
    });
    req.setTimeout(timeoutMs, () => req.destroy());
    req.once('error', () => resolve(0));
    req.end();
  });
}

/**
 * Runs `task(i)` for i in 0..count-1 with at most `concurrency` in flight; stops starting new tasks
 * after `deadlineMs` (absolute, performance.now()). Resolves with the number of tasks started.
 */
export async function runPool(count: number, concurrency: number, deadlineMs: number, task: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count && performance.now() < deadlineMs) {
      const i = next++;
      await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, count)) }, lane));
  return next;
}
