/**
 * CPU time of server processes from /proc (Linux): utime + stime of each process (all its threads),
 * summed over a set of processes, so that a scenario can state the server CPU spent per operation.
 * Processes that end between two readings simply stop contributing; processes that appear count in
 * full from their start.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/** The fields of /proc/<pid>/stat the benchmark uses. */
export interface ProcStat {
  pid: number;
  /** The command name (field 2, without the parentheses; may contain spaces). */
  comm: string;
  /** Process group id (field 5). */
  pgid: number;
  /** User and system CPU time in clock ticks (fields 14 and 15). */
  utime: number;
  stime: number;
}

/**
 * Parses one /proc/<pid>/stat line; undefined when it is not in that format. The command name is in
 * parentheses and may itself contain spaces and parentheses, so fields resume after the last ')'.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  // rest[0] is field 3 (state), so field n is rest[n - 3].
  const rest = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const field = (n: number): number => Number(rest[n - 3]);
  const stat = { pid, comm: text.slice(open + 1, close), pgid: field(5), utime: field(14), stime: field(15) };
  if (![stat.pid, stat.pgid, stat.utime, stat.stime].every(Number.isFinite)) return undefined;
  return stat;
}

/** /proc/<pid>/stat of one process; undefined when it is gone or unreadable. */
export function readProcStat(pid: number, procRoot = '/proc'): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`${procRoot}/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

let ticksPerSecond: number | undefined;

/** Clock ticks per second of utime/stime (`getconf CLK_TCK`; 100 when getconf is unavailable). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    let hz = 100;
    try {
      const out = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
      if (Number.isInteger(out) && out > 0) hz = out;
    } catch {
      // keep the Linux default
    }
    ticksPerSecond = hz;
  }
  return ticksPerSecond;
}

/** Every process whose process group is `pgid` (scans /proc/<n>/stat field 5). */
export function processGroupMembers(pgid: number, procRoot = '/proc'): ProcStat[] {
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return [];
  }
  const members: ProcStat[] = [];
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    const stat = readProcStat(Number(e), procRoot);
    if (stat?.pgid === pgid) members.push(stat);
  }
  return members;
}

/** CPU ticks (utime + stime) per process at one moment, with the command names seen. */
export interface CpuSnapshot {
  ticks: Map<number, number>;
  comms: Map<number, string>;
}

/** Reads utime + stime of each of `pids` (missing processes are left out). */
export function cpuSnapshot(pids: Iterable<number>, procRoot = '/proc'): CpuSnapshot {
  const ticks = new Map<number, number>();
  const comms = new Map<number, string>();
  for (const pid of pids) {
    const stat = readProcStat(pid, procRoot);
    if (!stat) continue;
    ticks.set(pid, stat.utime + stat.stime);
    comms.set(pid, stat.comm);
  }
  return { ticks, comms };
}

/**
 * Milliseconds of CPU spent between two snapshots, summed over the processes of `after` (a process
 * absent from `before` started in between and counts in full), and per command name.
 */
export function cpuDeltaMs(before: CpuSnapshot, after: CpuSnapshot, hz = clockTicksPerSecond()): CpuDelta {
  let total = 0;
  const byComm = new Map<string, number>();
  const byPid = new Map<number, number>();
  for (const [pid, t] of after.ticks) {
    const delta = Math.max(0, t - (before.ticks.get(pid) ?? 0));
    total += delta;
    const comm = after.comms.get(pid) ?? String(pid);
    byComm.set(comm, (byComm.get(comm) ?? 0) + (delta * 1000) / hz);
    byPid.set(pid, (delta * 1000) / hz);
  }
  return { totalMs: (total * 1000) / hz, byComm, byPid };
}

/** CPU ms spent between two snapshots: in all, per command name and per process. */
export interface CpuDelta {
  totalMs: number;
  byComm: Map<string, number>;
  byPid: Map<number, number>;
}

/** Which processes make up a server, re-resolved at every reading (workers restart, groups change). */
export type ServerProcessSet = () => number[];

/** A CPU stopwatch over a server's processes. */
export interface CpuMeter {
  /** True when there is at least one process to measure. */
  available(): boolean;
  /** Starts a measurement; the returned function gives CPU ms since then (total, per command name and per process). */
  start(): () => CpuDelta;
}

/** A CpuMeter over the processes `processes()` returns at each reading. */
export function cpuMeter(processes: ServerProcessSet, procRoot = '/proc'): CpuMeter {
  return {
    available: () => processes().length > 0,
    start: () => {
      const before = cpuSnapshot(processes(), procRoot);
      return () => cpuDeltaMs(before, cpuSnapshot(processes(), procRoot));
    },
  };
}
