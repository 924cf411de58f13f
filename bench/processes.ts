/**
 * Child processes of the benchmark: capstan servers and redis-server, each spawned as its own
 * process group on 127.0.0.1 and killed (the whole group) when the benchmark exits, fails or is
 * interrupted.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { httpGetStatus } from './http-client.js';
import { SERVER_NODE_FLAGS } from '../src/cluster/node-flags.js';

/** The project root (dist/bench/ -> ../..). */
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The compiled server entry point. */
export const CAPSTAN_MAIN = join(PROJECT_ROOT, 'dist', 'src', 'main.js');
const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';

const live = new Set<ChildProcess>();
/** Process groups started through scripts that exit after starting them (kube-up.sh): killed on exit too. */
const liveGroups = new Set<number>();

/** Kills process group `pgid` with SIGKILL when the benchmark exits before `untrackProcessGroup(pgid)`. */
export function trackProcessGroup(pgid: number): void {
  liveGroups.add(pgid);
}

/** The group was stopped by its owner: no longer killed on exit. */
export function untrackProcessGroup(pgid: number): void {
  liveGroups.delete(pgid);
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

/** Kills every child process group still alive (synchronous: safe in an 'exit' handler). */
export function killAllChildren(): void {
  for (const child of live) killGroup(child, 'SIGKILL');
  live.clear();
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  liveGroups.clear();
}

let installed = false;
/** Kills children on exit, SIGINT, SIGTERM, uncaught errors. */
export function installCleanupHandlers(): void {
  if (installed) return;
  installed = true;
  process.on('exit', killAllChildren);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      process.stderr.write(`\nbench: ${signal}, stopping child processes\n`);
      killAllChildren();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (err) => {
    process.stderr.write(`bench: uncaught error: ${err.stack ?? String(err)}\n`);
    killAllChildren();
    process.exit(1);
  });
}

function spawnTracked(command: string, args: string[], cwd: string): ChildProcess {
  // detached: its own process group, so stopping it also stops server workers it forks.
  const child = spawn(command, args, { cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  child.once('exit', () => live.delete(child));
  child.once('error', () => live.delete(child));
  return child;
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** Stops a child's group: SIGTERM, then SIGKILL after `graceMs`. */
async function stopChild(child: ChildProcess, graceMs: number): Promise<void> {
  killGroup(child, 'SIGTERM');
  if (!(await waitExit(child, graceMs))) {
    killGroup(child, 'SIGKILL');
    await waitExit(child, 5000);
  }
  live.delete(child);
}

/** A TCP port on 127.0.0.1 that nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Keeps the last `max` characters of a stream. */
function tail(max: number): { push(chunk: Buffer): void; text(): string } {
  let text = '';
  return {
    push: (chunk) => {
      text += chunk.toString('utf8');
      if (text.length > max * 2) text = text.slice(-max);
    },
    text: () => text.slice(-max),
  };
}

export interface ServerProcess {
  readonly pid: number;
  readonly url: string;
  readonly port: number;
  /** The HTTPS URL the server announced (`secureUrl` of its `serving` line); undefined when it serves none. */
  readonly secureUrl: string | undefined;
  /** Milliseconds from spawn to the first `/readyz` 200 (polling every `pollMs`). */
  readonly readyMs: number;
  /** Milliseconds from spawn to the "serving" log line. */
  readonly servingMs: number;
  /** Whether the process has exited (crashed or was killed). */
  exited(): boolean;
  exitDescription(): string;
  stderrTail(): string;
  /** Kills the process group at once (used when it outgrows the memory ceiling). */
  kill(): void;
  stop(): Promise<void>;
}

/**
 * Spawns `node <SERVER_NODE_FLAGS> dist/src/main.js --port P --secure-port 0 --bind-address 127.0.0.1 ...extraArgs` from the project root
 * and resolves once `/readyz` answers 200. Rejects with the server's stderr when it exits or does
 * not become ready within `timeoutMs`.
 */
export async function spawnServer(
  extraArgs: string[],
  options: { pollMs?: number; timeoutMs?: number; label?: string; nodeArgs?: string[] } = {},
): Promise<ServerProcess> {
  const pollMs = options.pollMs ?? 5;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const port = await freePort();
  // The plain loopback port is measured; HTTPS takes a free port so runs never collide on 6443.
  // Node's flags as `npm start` and the image give them; `nodeArgs` come after, so they can override.
  const args = [
    ...SERVER_NODE_FLAGS,
    ...(options.nodeArgs ?? []),
    CAPSTAN_MAIN,
    '--port',
    String(port),
    '--secure-port',
    '0',
    '--bind-address',
    '127.0.0.1',
    ...extraArgs,
  ];
  const t0 = performance.now();
  const child = spawnTracked(process.execPath, args, PROJECT_ROOT);
  const err = tail(8192);
  let servingMs = Number.NaN;
  let url = `http://127.0.0.1:${port}`;
  let secureUrl: string | undefined;
  child.stdout?.resume();
  child.stderr?.on('data', (d: Buffer) => {
    err.push(d);
    if (Number.isNaN(servingMs)) {
      // Only a complete line: a chunk may end inside it, before its secureUrl field.
      const line = /"msg":"serving",[^\n]*\n/.exec(err.text())?.[0];
      const m = line !== undefined ? /"url":"([^"]+)"/.exec(line) : null;
      if (line !== undefined && m) {
        servingMs = performance.now() - t0;
        url = m[1];
        secureUrl = /"secureUrl":"([^"]+)"/.exec(line)?.[1];
      }
    }
  });
  let exitInfo = '';
  child.once('exit', (code, signal) => {
    exitInfo = signal !== null ? `killed by ${signal}` : `exited with code ${String(code)}`;
  });
  let spawnError: Error | undefined;
  child.once('error', (e) => {
    spawnError = e;
  });
  const label = options.label ?? 'capstan';
  const fail = async (why: string): Promise<never> => {
    await stopChild(child, 1000);
    const detail = err.text().trim();
    throw new Error(`${label} (node ${args.join(' ').replace(CAPSTAN_MAIN, 'dist/src/main.js')}) ${why}${detail ? `; stderr:\n${detail}` : ''}`);
  };

  let readyMs = Number.NaN;
  const deadline = t0 + timeoutMs;
  for (let i = 0; i < 1_000_000; i++) {
    if (spawnError) return fail(`could not be spawned: ${spawnError.message}`);
    if (exitInfo !== '') return fail(`${exitInfo} before becoming ready`);
    if (performance.now() > deadline) return fail(`did not become ready within ${timeoutMs} ms`);
    const status = await httpGetStatus('127.0.0.1', port, '/readyz', 1000);
    if (status === 200) {
      readyMs = performance.now() - t0;
      break;
    }
    await sleep(pollMs);
  }
  if (Number.isNaN(readyMs)) return fail('did not become ready');
  // With workers, /readyz can answer before the primary has logged its `serving` line (with the HTTPS URL).
  for (let i = 0; i < 400 && Number.isNaN(servingMs) && exitInfo === ''; i++) await sleep(25);
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1') return fail(`serves on ${url}, expected 127.0.0.1`);
  const pid = child.pid ?? 0;
  return {
    pid,
    url: `http://127.0.0.1:${port}`,
    port,
    secureUrl,
    readyMs,
    servingMs,
    exited: () => exitInfo !== '',
    exitDescription: () => exitInfo,
    stderrTail: () => err.text(),
    kill: () => killGroup(child, 'SIGKILL'),
    stop: () => stopChild(child, 5000),
  };
}

/** Sends one command (inline protocol) to Redis and returns the raw reply once complete. */
export function redisCommand(port: number, command: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis ${command}: timeout`));
    }, timeoutMs);
    socket.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    socket.connect(port, '127.0.0.1', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk: Buffer) => {
      data += chunk.toString('utf8');
      const eol = data.indexOf('\r\n');
      if (eol < 0) return;
      if (data.startsWith('$')) {
        const length = Number(data.slice(1, eol));
        if (length >= 0 && Buffer.byteLength(data) < eol + 2 + length + 2) return;
      }
      clearTimeout(timer);
      socket.destroy();
      resolve(data);
    });
  });
}

export interface RedisProcess {
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  /** `used_memory` from INFO memory, in bytes. */
  usedMemory(): Promise<number>;
  stop(): Promise<void>;
}

export interface RedisOptions {
  /**
   * Append-only file fsynced on every write (`--appendonly yes --appendfsync always`, in a temporary
   * directory removed on stop), as etcd fsyncs its log: the durability kube-apiserver's store has.
   * Default: no persistence at all.
   */
  fsyncEveryWrite?: boolean;
}

/**
 * Starts `redis-server --port P --save ''` on 127.0.0.1 (no AOF unless `options.fsyncEveryWrite`)
 * and waits for PING.
 */
export async function spawnRedis(options: RedisOptions = {}): Promise<RedisProcess> {
  const port = await freePort();
  const dataDir = options.fsyncEveryWrite ? mkdtempSync(join(tmpdir(), 'capstan-bench-redis-')) : undefined;
  const persistence = dataDir !== undefined ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', dataDir] : ['--appendonly', 'no'];
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    ...persistence,
    '--protected-mode',
    'no',
    '--daemonize',
    'no',
    '--logfile',
    '',
    '--loglevel',
    'warning',
  ];
  const child = spawnTracked(REDIS_SERVER, args, PROJECT_ROOT);
  const err = tail(4096);
  child.stderr?.on('data', (d: Buffer) => err.push(d));
  child.stdout?.on('data', (d: Buffer) => err.push(d));
  let spawnError: Error | undefined;
  child.once('error', (e) => {
    spawnError = e;
  });
  const removeDataDir = (): void => {
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  };
  const fail = async (message: string): Promise<never> => {
    await stopChild(child, 500);
    removeDataDir();
    throw new Error(message);
  };
  const deadline = Date.now() + 10_000;
  for (let i = 0; i < 10_000; i++) {
    if (spawnError) return fail(`cannot run ${REDIS_SERVER} (${spawnError.message}); install redis-server or set REDIS_SERVER=/path/to/redis-server`);
    if (child.exitCode !== null) return fail(`redis-server exited with ${child.exitCode}: ${err.text()}`);
    if (Date.now() > deadline) return fail(`redis-server on port ${port} did not answer PING within 10 s: ${err.text()}`);
    try {
      if ((await redisCommand(port, 'PING', 500)).startsWith('+PONG')) break;
    } catch {
      // not listening yet
    }
    await sleep(20);
  }
  return {
    pid: child.pid ?? 0,
    port,
    url: `redis://127.0.0.1:${port}`,
    usedMemory: async () => {
      const reply = await redisCommand(port, 'INFO memory');
      const m = /^used_memory:(\d+)/m.exec(reply);
      if (!m) throw new Error('INFO memory: no used_memory field');
      return Number(m[1]);
    },
    stop: async () => {
      await stopChild(child, 2000);
      removeDataDir();
    },
  };
}
