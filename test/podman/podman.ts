/**
 * podman as the image and chart runs drive it (scripts/image-test.sh, scripts/chart-test.sh): the
 * same global flags as scripts/image/podman-flags.sh, so that containers run on a machine without
 * systemd, a Docker daemon or writable cgroups (CI runs these as root).
 */
import { execFile, spawn } from 'node:child_process';
import { request } from 'node:https';

/** podman's global flags: cgroupfs, events in a file, runc (crun refuses cgroup v1 layouts like CI's). */
export const PODMAN_GLOBAL = ['--cgroup-manager=cgroupfs', '--events-backend=file', '--runtime', 'runc'];
/** Resource limits no higher than the machine's: podman's defaults raise them, which is refused here. */
export const PODMAN_ULIMITS = ['--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `podman GLOBAL... args` to completion (never throws for a non-zero exit: callers assert). */
export function podman(args: string[], timeoutMs = 120_000): Promise<Run> {
  return run('podman', [...PODMAN_GLOBAL, ...args], timeoutMs);
}

/** Runs a command to completion; `input`, when given, is written to its stdin. */
export function run(file: string, args: string[], timeoutMs = 120_000, options: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: options.env ?? process.env, cwd: options.cwd },
      (err, stdout, stderr) => {
        if (err !== null && typeof err.code !== 'number') {
          reject(new Error(`${file} ${args.join(' ')}: ${err.message}\n${stderr}`));
          return;
        }
        resolve({ code: err === null ? 0 : Number(err.code), stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** `podman run` or another command that must succeed: its stdout, trimmed. */
export async function podmanOk(args: string[], timeoutMs?: number): Promise<string> {
  const r = await podman(args, timeoutMs);
  if (r.code !== 0) throw new Error(`podman ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The container's address on podman's default bridge network (as a pod IP is on a cluster's). */
export async function containerIp(id: string): Promise<string> {
  const ip = await podmanOk(['inspect', '-f', '{{.NetworkSettings.IPAddress}}', id]);
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(ip)) throw new Error(`container ${id} has no bridge address (${ip})`);
  return ip;
}

/** Waits for the container to stop and returns its exit code. */
export async function waitExit(id: string, timeoutMs = 120_000): Promise<number> {
  const out = await podmanOk(['wait', id], timeoutMs);
  return Number(out.split('\n').pop());
}

export interface HttpsReply {
  status: number;
  body: string;
}

export interface HttpsOptions {
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  /** CA to verify the server with; without it the certificate is not verified (as kubelet probes). */
  ca?: string | Buffer;
  servername?: string;
  cert?: string | Buffer;
  key?: string | Buffer;
  timeoutMs?: number;
}

/** One HTTPS request on a fresh connection; rejects on connection errors and timeouts. */
export function https(url: string, options: HttpsOptions = {}): Promise<HttpsReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...(options.headers ?? {}) };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        headers,
        agent: false,
        ca: options.ca,
        rejectUnauthorized: options.ca !== undefined,
        servername: options.servername,
        cert: options.cert,
        key: options.key,
        timeout: options.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer within ${options.timeoutMs ?? 10_000} ms`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Polls `url` (unverified HTTPS, no credentials) until it answers 200, or fails after `timeoutMs`. */
export async function waitForOk(url: string, timeoutMs = 120_000, isAlive: () => Promise<boolean> = () => Promise.resolve(true)): Promise<number> {
  const start = Date.now();
  let last = '';
  while (Date.now() - start < timeoutMs) {
    try {
      const r = await https(url, { timeoutMs: 2000 });
      if (r.status === 200) return Date.now() - start;
      last = `${r.status} ${r.body.slice(0, 200)}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (!(await isAlive())) throw new Error(`${url}: the server stopped before answering 200 (last: ${last})`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (last: ${last})`);
}

/** True while the container runs. */
export async function isRunning(id: string): Promise<boolean> {
  const r = await podman(['inspect', '-f', '{{.State.Running}}', id]);
  return r.code === 0 && r.stdout.trim() === 'true';
}

/** A child process that must be stopped by its owner (a redis-server inside a network namespace). */
export function spawnOwned(file: string, args: string[]): { stop(): Promise<void>; output(): string } {
  const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return {
    output: () => output,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          resolve();
          return;
        }
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}
