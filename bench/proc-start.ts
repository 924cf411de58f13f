/**
 * How long ago a process started (Linux): /proc/<pid>/stat field 22 (start time in clock ticks after
 * boot) against /proc/uptime, so that a server started by a script can be timed from its own start
 * rather than from the script's.
 */
import { readFileSync } from 'node:fs';
import { clockTicksPerSecond } from './proc-cpu.js';

/** Field 22 (starttime, clock ticks after boot) of a /proc/<pid>/stat line; undefined when malformed. */
export function parseStartTicks(statLine: string): number | undefined {
  const close = statLine.lastIndexOf(')');
  if (close < 0) return undefined;
  // After the command name, field 3 (state) comes first: field n is at index n - 3.
  const ticks = Number(
    statLine
      .slice(close + 2)
      .trim()
      .split(/\s+/)[22 - 3],
  );
  return Number.isFinite(ticks) ? ticks : undefined;
}

/** Milliseconds since `pid` started (10 ms resolution with the usual 100 ticks/s); undefined when it is gone. */
export function processAgeMs(pid: number, procRoot = '/proc'): number | undefined {
  try {
    const ticks = parseStartTicks(readFileSync(`${procRoot}/${pid}/stat`, 'utf8'));
    const uptimeSeconds = Number(readFileSync(`${procRoot}/uptime`, 'utf8').split(/\s+/)[0]);
    if (ticks === undefined || !Number.isFinite(uptimeSeconds)) return undefined;
    return uptimeSeconds * 1000 - (ticks * 1000) / clockTicksPerSecond();
  } catch {
    return undefined;
  }
}
