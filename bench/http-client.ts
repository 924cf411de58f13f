/**
 * HTTP to the server under test: keep-alive requests with per-request latency, and a bounded
 * concurrency pool. Servers the benchmark spawns are contacted on 127.0.0.1 only; a server given by
 * URL (`--url`) may be HTTPS with a bearer token, and its certificate is not verified (reference
 * servers use self-signed ones) — for that target only.
 */
import { Agent, request } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** How to reach a server over HTTPS or with credentials: bearer token, client certificate, trust, connection reuse. */
export interface ServerAccess {
  token?: string;
  /** Accept any certificate (self-signed reference servers). Only for targets given by --url. */
  insecureTls?: boolean;
  /** PEM CA that signed the server's certificate (verified against it). */
  ca?: string;
  /** PEM client certificate and key presented in the TLS handshake. */
  cert?: string;
  key?: string;
  /** false: a new connection per request (with HTTPS, a full TLS handshake: no session resumption). Default true. */
  keepAlive?: boolean;
}

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

/**
 * A client for one server (up to `maxSockets` connections, kept alive unless `access.keepAlive` is
 * false). Without `access` the server must be plain HTTP on 127.0.0.1 (one the benchmark spawned).
 */
export class HttpClient {
  private readonly agent: Agent | HttpsAgent;
  private readonly send: typeof request;
  private readonly host: string;
  private readonly token: string | undefined;
  readonly port: number;

  constructor(baseUrl: string, maxSockets = 64, access?: ServerAccess) {
    const u = new URL(baseUrl);
    if (access === undefined && u.hostname !== '127.0.0.1') throw new Error(`refusing to benchmark ${baseUrl}: only 127.0.0.1 is allowed`);
    const https = u.protocol === 'https:';
    this.host = u.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(u.port !== '' ? u.port : https ? 443 : 80);
    this.token = access?.token;
    const keepAlive = access?.keepAlive !== false;
    const agentOptions = { keepAlive, maxSockets, maxFreeSockets: keepAlive ? maxSockets : 0 };
    this.agent = https
      ? new HttpsAgent({
          ...agentOptions,
          rejectUnauthorized: access?.insecureTls !== true,
          ...(access?.ca !== undefined ? { ca: access.ca } : {}),
          ...(access?.cert !== undefined && access.key !== undefined ? { cert: access.cert, key: access.key } : {}),
          ...(keepAlive ? {} : { maxCachedSessions: 0 }),
        })
      : new Agent(agentOptions);
    this.send = https ? httpsRequest : request;
  }

  /** Sends one request; rejects on network errors and timeouts, not on HTTP error statuses. */
  request(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const timeoutMs = options.timeoutMs ?? 60_000;
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
      if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
      if (options.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        headers['content-length'] = String(Buffer.byteLength(options.body));
      }
      const t0 = performance.now();
      const req = this.send({ host: this.host, port: this.port, method, path, agent: this.agent, headers }, (res) => {
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

  /**
   * Opens a long-lived GET (a watch) and hands each received chunk to `onData`. Resolves with the
   * response status once headers arrive (the stream goes on); `close` ends it. `onEnd` is told when
   * the server ends the stream or the connection fails.
   */
  stream(path: string, onData: (chunk: Buffer) => void, onEnd: (err?: Error) => void): Promise<{ status: number; close: () => void }> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
      const req = this.send({ host: this.host, port: this.port, method: 'GET', path, agent: this.agent, headers }, (res) => {
        res.on('data', onData);
        res.once('end', () => onEnd());
        res.once('error', (e) => onEnd(e));
        resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
      });
      req.once('error', (e) => {
        reject(e);
        onEnd(e);
      });
      req.end();
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
