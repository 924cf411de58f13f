/**
 * Resident memory of a process tree from /proc (Linux): current RSS (VmRSS), peak (VmHWM, which
 * can be reset through clear_refs), and a sampler that tracks the peak and enforces a ceiling.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';

/** VmRSS and VmHWM of one process in bytes; undefined when it is gone or /proc is unreadable. */
export function processMemory(pid: number): { rss: number; hwm: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (field: string): number => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : 0;
  };
  return { rss: kb('VmRSS'), hwm: kb('VmHWM') };
}

/** `pid` and all its descendants (children found by scanning /proc/<n>/stat for the parent pid). */
export function processTree(pid: number): number[] {
  const parentOf = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [pid];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // The command name is in parentheses and may contain spaces: fields resume after the last ')'.
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(e), Number(rest[1]));
    } catch {
      // process ended while scanning
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length && i < 10_000; i++) {
    for (const [child, parent] of parentOf) if (parent === tree[i] && !tree.includes(child)) tree.push(child);
  }
  return tree;
}

/** Sum of VmRSS and of VmHWM over the given processes, in bytes. */
export function treeMemory(pids: readonly number[]): { rss: number; hwm: number } {
  let rss = 0;
  let hwm = 0;
  for (const pid of pids) {
    const m = processMemory(pid);
    if (m) {
      rss += m.rss;
      hwm += m.hwm;
    }
  }
  return { rss, hwm };
}

/** Resets VmHWM to the current RSS for each process; false when the kernel refused. */
export function resetPeak(pids: readonly number[]): boolean {
  let ok = true;
  for (const pid of pids) {
    try {
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
    } catch {
      ok = false;
    }
  }
  return ok;
}

export interface RssSampler {
  /** Highest summed RSS seen so far (bytes). */
  peak(): number;
  /** Starts a new peak window from the current RSS (also resets VmHWM when allowed); returns that RSS. */
  reset(): number;
  /** Current summed RSS (bytes). */
  current(): number;
  /** The peak since the last reset, from sampling and VmHWM when it was reset successfully. */
  peakSinceReset(): number;
  stop(): void;
}

/**
 * Samples the RSS of `rootPid`'s process tree every `intervalMs`; calls `onLimit` once when the sum
 * goes above `limitBytes` (the caller kills the server, so the host does not run out of memory).
 */
export function startRssSampler(rootPid: number, intervalMs: number, limitBytes: number, onLimit: (rss: number) => void): RssSampler {
  let pids = processTree(rootPid);
  let lastTreeScan = Date.now();
  let peak = 0;
  let windowPeak = 0;
  let hwmValid = false;
  let limitHit = false;
  const sample = (): number => {
    if (Date.now() - lastTreeScan > 2000) {
      pids = processTree(rootPid);
      lastTreeScan = Date.now();
    }
    const { rss } = treeMemory(pids);
    if (rss > peak) peak = rss;
    if (rss > windowPeak) windowPeak = rss;
    if (!limitHit && rss > limitBytes) {
      limitHit = true;
      onLimit(rss);
    }
    return rss;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    peak: () => peak,
    reset: () => {
      pids = processTree(rootPid);
      hwmValid = resetPeak(pids);
      windowPeak = 0;
      return sample();
    },
    current: () => sample(),
    peakSinceReset: () => {
      sample();
      return hwmValid ? Math.max(windowPeak, treeMemory(pids).hwm) : windowPeak;
    },
    stop: () => clearInterval(timer),
  };
}

/** How long a server is left without requests before its settled idle RSS is read. */
export const SETTLE_SECONDS = 30;

/**
 * `sample()` after SETTLE_SECONDS without requests: RSS right after start-up still holds the pages
 * start-up touched, which V8's memory reducer (and Go's scavenger) give back once the process idles.
 */
export async function settledRss<T>(sample: () => T): Promise<T> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
  return sample();
}
