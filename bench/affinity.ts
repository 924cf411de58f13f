/**
 * CPU affinity for `--compare --pin`: the servers' processes on one set of cores, the benchmark's
 * client on the others, so a server's CPU per request is not inflated by the client competing for
 * its core (on two cores, a busy client raises a server's CPU per create by about a quarter). Uses
 * `taskset` (util-linux); every thread of a process is moved, and threads started later inherit
 * the affinity of the thread that starts them.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';

/** The cores of each side (taskset lists): the server on the first, the client on the rest; `all` is every core. */
export interface PinPlan {
  server: string;
  client: string;
  all: string;
}

/** The plan for this host: core 0 for the server, the others for the client. Throws on one core. */
export function pinPlan(cores = cpus().length): PinPlan {
  if (cores < 2) throw new Error('--pin needs at least two cores (the server on one, the client on the others)');
  const range = (from: number): string => (from === cores - 1 ? String(from) : `${from}-${cores - 1}`);
  return { server: '0', client: range(1), all: range(0) };
}

/** Moves every thread of each process in `pids` onto `cores` (a taskset list such as `0` or `1-3`). Throws when taskset fails. */
export function pinProcesses(pids: readonly number[], cores: string): void {
  for (const pid of pids) {
    // taskset --all-tasks says nothing of a process that is not there.
    if (!existsSync(`/proc/${pid}/task`)) throw new Error(`taskset of process ${pid} to cores ${cores} failed: no such process`);
    try {
      execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cores, String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (err) {
      const stderr = (err as { stderr?: Buffer }).stderr?.toString('utf8').trim();
      const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
      throw new Error(missing ? 'taskset not found (util-linux)' : `taskset of process ${pid} to cores ${cores} failed${stderr ? `: ${stderr}` : ''}`);
    }
  }
}
