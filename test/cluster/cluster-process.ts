/** Spawning a clustered Capstan (or the memory fixture) for the cluster tests, and reading its workers. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { withFreeSecurePort } from '../helpers/capstan.js';

export interface ClusterProcess {
  child: ChildProcess;
  url: string;
  stderr(): string;
  /** Sends `signal` and resolves with the exit code (null when killed by a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** PIDs of the live worker processes (children of the primary). */
  workerPids(): number[];
  /** Resolves when stderr matches `pattern` (searched from `from` on), rejects after `timeoutMs`. */
  waitForLog(pattern: RegExp, timeoutMs?: number, from?: number): Promise<RegExpExecArray>;
}

/** Spawns `node SCRIPT ARGS` and waits for the `serving` line. */
export async function spawnCluster(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<ClusterProcess> {
  const child = spawn(process.execPath, [script, ...withFreeSecurePort(args)], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const waiters = new Set<() => void>();
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
    for (const w of [...waiters]) w();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const waitForLog = (pattern: RegExp, timeoutMs = 20_000, from = 0): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const m = pattern.exec(err.slice(from));
        if (m) {
          clearTimeout(timer);
          waiters.delete(check);
          resolve(m);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`timed out waiting for ${String(pattern)} in:\n${err}`));
      }, timeoutMs);
      // A wait abandoned because the process exited must not keep the test runner alive.
      timer.unref();
      waiters.add(check);
      check();
    });
  const serving = waitForLog(/"msg":"serving","url":"([^"]+)"/, 60_000);
  const url = await Promise.race([
    serving.then((m) => m[1]),
    exited.then((code) => {
      throw new Error(`exited with ${String(code)} before serving:\n${err}`);
    }),
  ]);
  return {
    child,
    url,
    stderr: () => err,
    stop: (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
    workerPids: () => {
      const pid = child.pid;
      if (pid === undefined) return [];
      try {
        return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter((s) => s !== '')
          .map(Number);
      } catch {
        return [];
      }
    },
    waitForLog,
  };
}

/** One request on its own connection (no keep-alive), so the primary can hand it to any worker. */
export function freshRequest(
  url: string,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { method: init.method ?? 'GET', agent: false, timeout: init.timeoutMs ?? 10_000, headers: { connection: 'close', ...init.headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${init.method ?? 'GET'} ${path} timed out`)));
    req.end(init.body);
  });
}

/** Sum of the samples of `metric` whose label set contains every `labels` pair. */
export function metricSum(text: string, metric: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
    const close = line.lastIndexOf('}');
    const labelText = close >= 0 ? `,${line.slice(metric.length + 1, close)}` : '';
    if (!Object.entries(labels).every(([k, v]) => labelText.includes(`,${k}="${v}"`))) continue;
    sum += Number(line.slice(close + 1).trim());
  }
  return sum;
}

/** Request log lines (parsed) from stderr. */
export function requestLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((l) => l.includes('"msg":"request"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/**
 * Like freshRequest, retried (up to `attempts`) when the connection fails or times out: a request a
 * worker is processing at the instant it is killed is lost, as a client would see it.
 */
export async function requestWithRetry(url: string, path: string, attempts = 3): Promise<{ status: number; text: string }> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await freshRequest(url, path, { timeoutMs: 2000 });
    } catch (err) {
      last = err;
    }
  }
  throw last instanceof Error ? last : new Error(String(last));
}
