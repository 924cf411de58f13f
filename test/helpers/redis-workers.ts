/**
 * A spawned `capstan --storage=redis --workers 2` over its own redis-server, plus plain HTTP calls
 * that each open a fresh connection (the primary hands it to the worker with the fewest open
 * connections, so either worker may answer; the request log says which).
 * Used by the end-to-end and fault tests in test/faults.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFor } from '../../src/cli/kubeconfig.js';
import { spawnCluster, type ClusterProcess } from '../cluster/cluster-process.js';
import { CAPSTAN_MAIN } from './capstan.js';
import { freePort, startRedis, type RedisServer, type RedisServerOptions } from './redis-process.js';

export interface RedisWorkers {
  redis: RedisServer;
  cap: ClusterProcess;
  url: string;
  /** A kubeconfig file pointing at the cluster. */
  kubeconfig: string;
  /** Kills Capstan (SIGKILL) and Redis, removes temporary files. */
  stop(): Promise<void>;
}

export interface RedisWorkersOptions {
  redis?: RedisServerOptions;
  /** Extra capstan flags, e.g. ['--watch-cache-history=2s']. */
  args?: string[];
  /** Worker count (default 2); 0 passes `--workers auto`. */
  workers?: number;
}

/** Starts redis-server, then capstan with `--workers 2` (by default) on a free port. */
export async function startRedisWorkers(options: RedisWorkersOptions = {}): Promise<RedisWorkers> {
  const redis = await startRedis(options.redis);
  let cap: ClusterProcess;
  try {
    const port = await freePort();
    cap = await spawnCluster(CAPSTAN_MAIN, [
      '--storage=redis',
      '--redis-url',
      redis.url,
      '--workers',
      options.workers === 0 ? 'auto' : String(options.workers ?? 2),
      '--port',
      String(port),
      ...(options.args ?? []),
    ]);
  } catch (err) {
    await redis.stop();
    throw err;
  }
  const dir = mkdtempSync(join(tmpdir(), 'capstan-faults-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigFor(cap.url));
  return {
    redis,
    cap,
    url: cap.url,
    kubeconfig,
    stop: async () => {
      await cap.stop('SIGKILL');
      await redis.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface FreshResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** Parsed JSON body, or undefined when the body is not JSON. */
  body: any;
  /** How long the request took, in ms. */
  ms: number;
}

export interface FreshInit {
  method?: string;
  /** Sent as JSON unless a string. */
  body?: unknown;
  contentType?: string;
  timeoutMs?: number;
}

/**
 * One request on its own connection (no keep-alive). Rejects on connection errors and when no
 * complete response arrives within `timeoutMs` (default 15 s: longer means the server hung).
 */
export function fresh(url: string, path: string, init: FreshInit = {}): Promise<FreshResponse> {
  const started = Date.now();
  const method = init.method ?? 'GET';
  const payload = init.body === undefined ? undefined : typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
  const headers: Record<string, string> = { connection: 'close', accept: 'application/json' };
  if (payload !== undefined) {
    headers['content-type'] = init.contentType ?? 'application/json';
    // Node sends a DELETE's body without a length (so, per HTTP/1.1, as no body at all) unless told.
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method, agent: false, headers, timeout: init.timeoutMs ?? 15_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('error', reject);
      res.on('end', () => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body, ms: Date.now() - started });
      });
    });
    req.on('error', reject);
    req.on('timeout', () =>
      req.destroy(new Error(`${method} ${path} got no response within ${init.timeoutMs ?? 15_000}ms (local port ${req.socket?.localPort})`)),
    );
    req.end(payload);
  });
}

/** Creates namespace `name` (201 expected). */
export async function createNamespace(url: string, name: string): Promise<void> {
  const r = await fresh(url, '/api/v1/namespaces', { method: 'POST', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  if (r.status !== 201) throw new Error(`creating namespace ${name}: ${r.status} ${r.text}`);
}

/** Polls `check` every 100 ms until it returns true (errors count as false) or `timeoutMs` passes. */
export async function eventually(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${last instanceof Error ? last.message : JSON.stringify(last)}` : ''}`);
    await sleep(100);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Request log lines (`"msg":"request"`) are at info level; the worker index of each is in `worker`. */
export function workersThatServed(stderr: string, pathPart: string): number[] {
  const seen = new Set<number>();
  for (const line of stderr.split('\n')) {
    if (!line.includes('"msg":"request"') || !line.includes(pathPart)) continue;
    try {
      const parsed = JSON.parse(line) as { worker?: unknown };
      if (typeof parsed.worker === 'number') seen.add(parsed.worker);
    } catch {
      // partial line
    }
  }
  return [...seen].sort();
}
