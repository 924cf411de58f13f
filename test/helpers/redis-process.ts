/**
 * Real redis-server processes for tests: standalone (optionally with AOF in a data dir that
 * survives restarts) and small Clusters, on free ports, each owned and stopped by one test.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';
const REDIS_CLI = process.env.REDIS_CLI ?? 'redis-cli';

/** A port nobody listens on right now (and, with `busPort`, port + 10000 too, for Cluster buses). */
export async function freePort(busPort = false): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await listenOnce(0);
    if (!busPort) return port;
    if (port > 55535) continue;
    try {
      await listenOnce(port + 10000);
      return port;
    } catch {
      // bus port taken: try another
    }
  }
  throw new Error('no free port found');
}

function listenOnce(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const chosen = typeof address === 'object' && address !== null ? address.port : port;
      server.close(() => resolve(chosen));
    });
  });
}

/** Sends one inline command and returns the raw reply text (enough for PING / CLUSTER INFO). */
export function rawCommand(port: number, command: string, timeoutMs = 500, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('timeout'));
    }, timeoutMs);
    socket.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.connect(port, host, () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      data += chunk.toString('utf8');
      const firstLine = data.indexOf('\r\n');
      if (firstLine < 0) return;
      if (data.startsWith('$')) {
        const length = Number(data.slice(1, firstLine));
        if (data.length < firstLine + 2 + length) return;
      }
      clearTimeout(timer);
      socket.destroy();
      resolve(data);
    });
  });
}

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export interface RedisServerOptions {
  /** `--appendonly yes --appendfsync always`: every acknowledged write is on disk. */
  appendOnly?: boolean;
  /** Data directory; a temporary one (removed by `stop`) when omitted. */
  dir?: string;
  /** Extra redis-server arguments, e.g. ['--cluster-enabled', 'yes']. */
  args?: string[];
  /** Port to use; a free one when omitted. */
  port?: number;
  /** Address to bind and reach it at (default 127.0.0.1). */
  host?: string;
  /** Run it inside this network namespace (`ip netns exec`; needs root). */
  netns?: string;
}

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** PID of the running redis-server (undefined while stopped). */
  readonly pid: number | undefined;
  /** SIGKILL, no shutdown save: what survives is what the AOF already holds. */
  kill9(): Promise<void>;
  /** Starts the server again on the same port and data directory (after kill9). */
  restart(): Promise<void>;
  /** Stops the server and removes the temporary directory it created. */
  stop(): Promise<void>;
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts a standalone redis-server on a free port and waits until it answers, itself: the reply to
 * INFO must carry its process id, since another process may have taken the port between freePort
 * and the start. Then redis-server exits ("Address already in use") and, unless `options.port`
 * fixed the port, it is started again on another.
 */
export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  const ownDir = options.dir === undefined;
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), 'capstan-redis-')));
  const clusterBus = (options.args ?? []).includes('--cluster-enabled');
  let port = options.port ?? (await freePort(clusterBus));
  const host = options.host ?? '127.0.0.1';
  const argsFor = (p: number): string[] => [
    '--port',
    String(p),
    '--bind',
    host,
    '--dir',
    dir,
    '--save',
    '',
    '--daemonize',
    'no',
    '--protected-mode',
    'no',
    '--logfile',
    '',
    '--loglevel',
    'warning',
    '--appendonly',
    options.appendOnly ? 'yes' : 'no',
    ...(options.appendOnly ? ['--appendfsync', 'always'] : []),
    ...(options.args ?? []),
  ];
  let child: ChildProcess | undefined;
  const launch = async (): Promise<void> => {
    const args = argsFor(port);
    const started =
      options.netns === undefined
        ? spawn(REDIS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] })
        : // `ip netns exec` execs the server in place: the child's PID is redis-server's.
          spawn('ip', ['netns', 'exec', options.netns, REDIS_SERVER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    // With --logfile '' the log (a failed bind among it) goes to stdout.
    let output = '';
    const collect = (c: Buffer): void => {
      if (output.length < 64 * 1024) output += c.toString('utf8');
    };
    started.stdout?.on('data', collect);
    started.stderr?.on('data', collect);
    const gone = new Promise<never>((_, reject) => {
      started.once('error', reject);
      started.once('exit', (code, signal) => reject(new Error(`exited (${String(code ?? signal)})`)));
    });
    gone.catch(() => undefined);
    child = started;
    const itself = `process_id:${String(started.pid)}\r\n`;
    await Promise.race([
      waitFor(async () => (await rawCommand(port, 'INFO server', 500, host)).includes(itself), `redis-server on ${host}:${port}`),
      gone,
    ]).catch((err: unknown) => {
      started.kill('SIGKILL');
      throw new Error(`redis-server did not start (${err instanceof Error ? err.message : String(err)}): ${output}`);
    });
  };
  for (let attempt = 1; ; attempt++) {
    try {
      await launch();
      break;
    } catch (err) {
      const taken = err instanceof Error && /Address already in use/i.test(err.message);
      if (!taken || options.port !== undefined || attempt >= 5) throw err;
      port = await freePort(clusterBus);
    }
  }
  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    const c = child;
    if (!c) return;
    child = undefined;
    c.kill(signal);
    await waitExit(c);
  };
  return {
    host,
    port,
    url: `redis://${host}:${port}`,
    dir,
    get pid() {
      return child?.pid;
    },
    kill9: () => kill('SIGKILL'),
    restart: launch,
    stop: async () => {
      await kill('SIGKILL');
      if (ownDir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface RedisClusterProcess {
  readonly nodes: { host: string; port: number }[];
  readonly servers: RedisServer[];
  /** Stops every node and removes their directories. */
  stop(): Promise<void>;
}

/** Starts `masters` cluster-enabled servers, joins them with `redis-cli --cluster create` (no replicas). */
export async function startRedisCluster(masters = 3): Promise<RedisClusterProcess> {
  const servers: RedisServer[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      servers.push(
        await startRedis({
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
        }),
      );
    }
    await execFileAsync(REDIS_CLI, ['--cluster', 'create', ...servers.map((s) => `127.0.0.1:${s.port}`), '--cluster-replicas', '0', '--cluster-yes'], {
      timeout: 20_000,
    });
    for (const s of servers) {
      await waitFor(async () => (await rawCommand(s.port, 'CLUSTER INFO')).includes('cluster_state:ok'), `cluster state ok on ${s.port}`, 20_000);
    }
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop()));
    throw err;
  }
  return {
    nodes: servers.map((s) => ({ host: s.host, port: s.port })),
    servers,
    stop: async () => {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

export interface RedisSentinelProcess {
  readonly host: string;
  readonly port: number;
  /** Stops the sentinel and removes its directory. */
  stop(): Promise<void>;
}

/** Starts one Sentinel monitoring the master at `masterPort` under `name` (quorum 1). */
export async function startRedisSentinel(masterPort: number, name = 'mymaster'): Promise<RedisSentinelProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'capstan-sentinel-'));
  const port = await freePort();
  const config = join(dir, 'sentinel.conf');
  await writeFile(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      'protected-mode no',
      `sentinel monitor ${name} 127.0.0.1 ${masterPort} 1`,
      `sentinel down-after-milliseconds ${name} 2000`,
      '',
    ].join('\n'),
  );
  const child = spawn(REDIS_SERVER, [config, '--sentinel'], { stdio: 'ignore' });
  const stop = async (): Promise<void> => {
    child.kill('SIGKILL');
    await waitExit(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => (await rawCommand(port, `SENTINEL get-master-addr-by-name ${name}`)).includes(String(masterPort)), `sentinel on ${port}`);
  } catch (err) {
    await stop();
    throw err;
  }
  return { host: '127.0.0.1', port, stop };
}
