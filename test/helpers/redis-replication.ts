/**
 * Replicated Redis for durability tests: replicas of a primary, Sentinels watching it (quorum of a
 * majority), optionally with the primary alone in a network namespace the test creates, so that it
 * can be cut off from every other process (iptables inside that namespace only; the host's rules
 * are never touched). Every process is owned and stopped by one test.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, rawCommand, startRedis, type RedisServer, type RedisServerOptions } from './redis-process.js';

const execFileAsync = promisify(execFile);
const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';

/** Arguments every replicated node gets: full syncs start at once (Redis 7 waits 5 s by default). */
export const DURABLE_NODE_ARGS = ['--repl-diskless-sync-delay', '0'];

async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
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

/** INFO replication of the node at host:port, as fields. */
export async function replicationInfo(host: string, port: number): Promise<Record<string, string>> {
  const text = await rawCommand(port, 'INFO replication', 1000, host);
  const fields: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) fields[line.slice(0, i)] = line.slice(i + 1);
  }
  return fields;
}

/** Waits until the primary at host:port has `count` replicas online. */
export async function waitForReplicas(host: string, port: number, count: number, timeoutMs = 20_000): Promise<void> {
  await until(
    async () => {
      const info = await replicationInfo(host, port);
      let online = 0;
      for (let i = 0; i < Number(info.connected_slaves ?? '0'); i++) if (info[`slave${i}`]?.includes('state=online')) online++;
      return info.role === 'master' && online >= count;
    },
    `${count} replica(s) online at ${host}:${port}`,
    timeoutMs,
  );
}

/** Starts a replica of `primary` (same options as startRedis) and waits until it is in sync. */
export async function startReplica(primary: { host: string; port: number }, options: RedisServerOptions = {}): Promise<RedisServer> {
  const replica = await startRedis({
    appendOnly: true,
    ...options,
    args: ['--replicaof', primary.host, String(primary.port), ...DURABLE_NODE_ARGS, ...(options.args ?? [])],
  });
  try {
    await until(async () => (await replicationInfo(replica.host, replica.port)).master_link_status === 'up', `replica ${replica.port} in sync`, 20_000);
  } catch (err) {
    await replica.stop();
    throw err;
  }
  return replica;
}

/** One Sentinel process. */
export interface SentinelProcess {
  readonly host: string;
  readonly port: number;
  stop(): Promise<void>;
}

export interface SentinelOptions {
  /** Master name (default `mymaster`). */
  name?: string;
  /** Address the Sentinel binds (default 127.0.0.1). */
  host?: string;
  /** Sentinels that must agree the master is down (default: a majority of `count`). */
  quorum?: number;
  /** `down-after-milliseconds` (default 1000). */
  downAfterMs?: number;
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Starts `count` Sentinels monitoring the master at `master`, and waits until each knows it. */
export async function startSentinels(master: { host: string; port: number }, count: number, options: SentinelOptions = {}): Promise<SentinelProcess[]> {
  const name = options.name ?? 'mymaster';
  const host = options.host ?? '127.0.0.1';
  const quorum = options.quorum ?? Math.floor(count / 2) + 1;
  const sentinels: SentinelProcess[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const dir = await mkdtemp(join(tmpdir(), 'capstan-sentinel-'));
      const port = await freePort();
      const config = join(dir, 'sentinel.conf');
      await writeFile(
        config,
        [
          `port ${port}`,
          `bind ${host}`,
          `dir ${dir}`,
          'protected-mode no',
          `sentinel monitor ${name} ${master.host} ${master.port} ${quorum}`,
          `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
          `sentinel failover-timeout ${name} 10000`,
          `sentinel parallel-syncs ${name} 2`,
          '',
        ].join('\n'),
      );
      const child = spawn(REDIS_SERVER, [config, '--sentinel'], { stdio: 'ignore' });
      sentinels.push({
        host,
        port,
        stop: async () => {
          child.kill('SIGKILL');
          await waitExit(child);
          await rm(dir, { recursive: true, force: true });
        },
      });
      await until(
        async () => (await rawCommand(port, `SENTINEL get-master-addr-by-name ${name}`, 500, host)).includes(String(master.port)),
        `sentinel on ${port}`,
        10_000,
      );
    }
  } catch (err) {
    await Promise.all(sentinels.map((s) => s.stop()));
    throw err;
  }
  return sentinels;
}

/** The master address a Sentinel reports now. */
export async function sentinelMaster(sentinel: SentinelProcess, name = 'mymaster'): Promise<{ host: string; port: number }> {
  const reply = await rawCommand(sentinel.port, `SENTINEL get-master-addr-by-name ${name}`, 1000, sentinel.host);
  const parts = reply.split('\r\n').filter((l) => l !== '' && !l.startsWith('*') && !l.startsWith('$'));
  if (parts.length < 2) throw new Error(`unexpected SENTINEL reply: ${JSON.stringify(reply)}`);
  return { host: parts[0] ?? '', port: Number(parts[1]) };
}

/**
 * A network namespace with one veth link to the host: `hostAddress` on the host side, `address` inside.
 * `isolate` drops every packet in and out of the namespace (its own iptables), `heal` lets them through.
 */
export interface NetworkNamespace {
  readonly name: string;
  readonly address: string;
  readonly hostAddress: string;
  isolate(): Promise<void>;
  heal(): Promise<void>;
  remove(): Promise<void>;
}

async function run(cmd: string, args: string[]): Promise<void> {
  await execFileAsync(cmd, args, { timeout: 20_000 });
}

/** Creates a namespace `capstan-XXXX` with a /30 link to the host in 10.x.y.0 (random); needs root. */
export async function createNetworkNamespace(): Promise<NetworkNamespace> {
  const id = randomBytes(2).toString('hex');
  const name = `capstan-${id}`;
  const hostIf = `cph${id}`;
  const nsIf = `cpn${id}`;
  const bytes = randomBytes(2);
  const base = `10.${200 + ((bytes[0] ?? 0) % 50)}.${bytes[1] ?? 0}`;
  const hostAddress = `${base}.1`;
  const address = `${base}.2`;
  await run('ip', ['netns', 'add', name]);
  const remove = async (): Promise<void> => {
    // Deleting the namespace deletes its end of the link, and with it the host's end.
    await run('ip', ['netns', 'del', name]).catch(() => undefined);
    await run('ip', ['link', 'del', hostIf]).catch(() => undefined);
  };
  try {
    await run('ip', ['link', 'add', hostIf, 'type', 'veth', 'peer', 'name', nsIf]);
    await run('ip', ['link', 'set', nsIf, 'netns', name]);
    await run('ip', ['addr', 'add', `${hostAddress}/30`, 'dev', hostIf]);
    await run('ip', ['link', 'set', hostIf, 'up']);
    await run('ip', ['netns', 'exec', name, 'ip', 'addr', 'add', `${address}/30`, 'dev', nsIf]);
    await run('ip', ['netns', 'exec', name, 'ip', 'link', 'set', nsIf, 'up']);
    await run('ip', ['netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up']);
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    name,
    address,
    hostAddress,
    isolate: async () => {
      await run('ip', ['netns', 'exec', name, 'iptables', '-A', 'INPUT', '-i', nsIf, '-j', 'DROP']);
      await run('ip', ['netns', 'exec', name, 'iptables', '-A', 'OUTPUT', '-o', nsIf, '-j', 'DROP']);
    },
    heal: async () => {
      await run('ip', ['netns', 'exec', name, 'iptables', '-F']);
    },
    remove,
  };
}

/** Whether this process may create network namespaces (root, `ip` and `iptables` present). */
export async function canCreateNetworkNamespaces(): Promise<boolean> {
  if (process.getuid?.() !== 0) return false;
  try {
    await execFileAsync('ip', ['netns', 'list']);
    await execFileAsync('iptables', ['--version']);
    return true;
  } catch {
    return false;
  }
}
