/**
 * Replicated Redis for durability tests: replicas of a primary, Sentinels watching it (quorum of a
 * majority), optionally each Redis node in its own network namespace on a bridge the test creates, so
 * that any node can be cut off from every other process (iptables inside that node's namespace only;
 * the host's rules are never touched). Every process is owned and stopped by one test.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, rawCommand, startRedis, type RedisServer, type RedisServerOptions } from './redis-process.js';

const execFileAsync = promisify(execFile);
const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';

/** Arguments every replicated node gets: full syncs start at once (Redis 7 waits 5 s by default). */
export const DURABLE_NODE_ARGS = ['--repl-diskless-sync-delay', '0'];

/** Polls `check` every 50 ms until it resolves true (a rejection counts as not yet); throws naming `what` after `timeoutMs`. */
export async function until(check: () => Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
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

/** How many replicas a node's INFO replication (see replicationInfo) lists as online; 0 unless it is a primary. */
export function onlineReplicas(info: Record<string, string>): number {
  if (info.role !== 'master') return 0;
  let online = 0;
  for (let i = 0; i < Number(info.connected_slaves ?? '0'); i++) if (info[`slave${i}`]?.includes('state=online')) online++;
  return online;
}

/** Waits until the primary at host:port has `count` replicas online. */
export async function waitForReplicas(host: string, port: number, count: number, timeoutMs = 20_000): Promise<void> {
  await until(async () => onlineReplicas(await replicationInfo(host, port)) >= count, `${count} replica(s) online at ${host}:${port}`, timeoutMs);
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
  /** The last `lines` lines of the Sentinel's log (for a failing test's message). */
  logTail(lines?: number): Promise<string>;
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
          `logfile ${join(dir, 'sentinel.log')}`,
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
        logTail: async (lines = 30) => {
          const text = await readFile(join(dir, 'sentinel.log'), 'utf8').catch(() => '');
          return text.trimEnd().split('\n').slice(-lines).join('\n');
        },
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
 * A small network the test creates: a bridge inside its own namespace (the switch), the host joined to
 * it at `hostAddress`, and `nodes` namespaces each joined at `nodeAddress(i)`. Nothing on the host
 * changes but one veth link; `isolate(i)` drops every packet in and out of node i (iptables inside
 * that node's namespace), `heal(i)` lets them through again.
 */
export interface TestNetwork {
  readonly hostAddress: string;
  nodeAddress(i: number): string;
  nodeNamespace(i: number): string;
  isolate(i: number): Promise<void>;
  heal(i: number): Promise<void>;
  remove(): Promise<void>;
}

async function run(cmd: string, args: string[]): Promise<void> {
  await execFileAsync(cmd, args, { timeout: 20_000 });
}

/** Creates the network in a random 10.x.y.0/24; needs root (see canCreateNetworkNamespaces). */
export async function createTestNetwork(nodes: number): Promise<TestNetwork> {
  const id = randomBytes(2).toString('hex');
  const sw = `cps-${id}`;
  const bytes = randomBytes(2);
  const subnet = `10.${200 + ((bytes[0] ?? 0) % 50)}.${bytes[1] ?? 0}`;
  const hostAddress = `${subnet}.1`;
  const nodeAddress = (i: number): string => `${subnet}.${10 + i}`;
  const nodeNamespace = (i: number): string => `cpn-${id}-${i}`;
  const inSwitch = (...args: string[]): Promise<void> => run('ip', ['netns', 'exec', sw, ...args]);
  const created: string[] = [];
  const remove = async (): Promise<void> => {
    // Deleting a namespace deletes the veth ends inside it, and with them their peers.
    for (const ns of created.reverse()) await run('ip', ['netns', 'del', ns]).catch(() => undefined);
    await run('ip', ['link', 'del', `cph${id}`]).catch(() => undefined);
  };
  try {
    await run('ip', ['netns', 'add', sw]);
    created.push(sw);
    await inSwitch('ip', 'link', 'add', 'br0', 'type', 'bridge');
    await inSwitch('ip', 'link', 'set', 'br0', 'up');
    /** Joins a veth pair's far end `far` (moved into the switch) to the bridge. */
    const attach = async (far: string): Promise<void> => {
      await run('ip', ['link', 'set', far, 'netns', sw]);
      await inSwitch('ip', 'link', 'set', far, 'master', 'br0');
      await inSwitch('ip', 'link', 'set', far, 'up');
    };
    await run('ip', ['link', 'add', `cph${id}`, 'type', 'veth', 'peer', 'name', `cpx${id}`]);
    await attach(`cpx${id}`);
    await run('ip', ['addr', 'add', `${hostAddress}/24`, 'dev', `cph${id}`]);
    await run('ip', ['link', 'set', `cph${id}`, 'up']);
    for (let i = 0; i < nodes; i++) {
      const ns = nodeNamespace(i);
      await run('ip', ['netns', 'add', ns]);
      created.push(ns);
      await run('ip', ['link', 'add', `cpv${id}${i}`, 'type', 'veth', 'peer', 'name', `cpw${id}${i}`]);
      await run('ip', ['link', 'set', `cpv${id}${i}`, 'netns', ns]);
      await attach(`cpw${id}${i}`);
      await run('ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', `${nodeAddress(i)}/24`, 'dev', `cpv${id}${i}`]);
      await run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', `cpv${id}${i}`, 'up']);
      await run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
    }
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    hostAddress,
    nodeAddress,
    nodeNamespace,
    isolate: async (i) => {
      await run('ip', ['netns', 'exec', nodeNamespace(i), 'iptables', '-A', 'INPUT', '-i', `cpv${id}${i}`, '-j', 'DROP']);
      await run('ip', ['netns', 'exec', nodeNamespace(i), 'iptables', '-A', 'OUTPUT', '-o', `cpv${id}${i}`, '-j', 'DROP']);
    },
    heal: async (i) => {
      await run('ip', ['netns', 'exec', nodeNamespace(i), 'iptables', '-F']);
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
