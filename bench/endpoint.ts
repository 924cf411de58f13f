/**
 * An endpoint is whatever a scenario that only talks HTTP needs from a target: where the server is,
 * how to authenticate, a CPU meter over the server's processes, and a liveness check. For the
 * targets the benchmark starts it wraps a fresh RunningTarget (stopped afterwards); for `url` it
 * points at the given server, which the benchmark never starts or stops.
 */
import { HttpClient } from './http-client.js';
import type { BenchOptions, TargetName, UrlTarget } from './options.js';
import { cpuMeter, processGroupMembers, readProcStat, type CpuMeter } from './proc-cpu.js';
import { withTarget } from './scenario.js';

export interface Endpoint {
  /** The target's name in tables. */
  readonly label: string;
  /** A new keep-alive client for this server with up to `maxSockets` connections. */
  client(maxSockets: number): HttpClient;
  /** CPU of the server's processes; `available()` is false when they are unknown. */
  readonly cpu: CpuMeter;
  /** What the CPU meter covers, for the notes under a table. */
  readonly cpuScope: string;
  /** Throws when the server is known to be gone. */
  assertAlive(): void;
}

/** The processes that make up a url target: --server-pids plus the members of --server-pgid (filtered by --server-comms). */
export function urlTargetPids(target: UrlTarget): number[] {
  const pids = target.pids.filter((pid) => readProcStat(pid) !== undefined);
  if (target.pgid !== undefined) {
    for (const stat of processGroupMembers(target.pgid)) {
      if (target.comms !== undefined && !target.comms.includes(stat.comm)) continue;
      if (!pids.includes(stat.pid)) pids.push(stat.pid);
    }
  }
  return pids;
}

function describeUrlScope(target: UrlTarget): string {
  const parts: string[] = [];
  if (target.pids.length > 0) parts.push(`pids ${target.pids.join(',')}`);
  if (target.pgid !== undefined) parts.push(`process group ${target.pgid}${target.comms ? ` (${target.comms.join(', ')})` : ''}`);
  if (parts.length === 0) return 'not measured (give --server-pids or --server-pgid)';
  const comms = [...new Set(urlTargetPids(target).map((pid) => readProcStat(pid)?.comm ?? String(pid)))];
  return `${parts.join(' + ')}: ${comms.join(', ') || 'no live process'}`;
}

/** The display name of a target. */
export function targetLabel(name: TargetName, options: BenchOptions): string {
  return name === 'url' ? (options.urlTarget?.label ?? 'url') : name;
}

/** Runs `body` against `name`: a fresh server for the built-in targets, the given server for `url`. */
export async function withEndpoint<T>(name: TargetName, options: BenchOptions, body: (e: Endpoint) => Promise<T>): Promise<T> {
  if (name === 'url') {
    const target = options.urlTarget;
    if (target === undefined) throw new Error('target url needs --url');
    return body({
      label: target.label,
      client: (maxSockets) => new HttpClient(target.url, maxSockets, { ...(target.token !== undefined ? { token: target.token } : {}), insecureTls: true }),
      cpu: cpuMeter(() => urlTargetPids(target)),
      cpuScope: describeUrlScope(target),
      assertAlive: () => undefined,
    });
  }
  return withTarget(name, options, (t) =>
    body({
      label: name,
      client: (maxSockets) => new HttpClient(t.server.url, maxSockets),
      cpu: t.cpu,
      cpuScope: `capstan primary and workers${t.redis ? ' + redis-server' : ''}`,
      assertAlive: () => t.assertAlive(),
    }),
  );
}
