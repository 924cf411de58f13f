/**
 * The checks every fault test makes once the fault is over: the final state holds every
 * acknowledged write, every watcher saw every change exactly once and in order (across its
 * reconnects), and every failed request failed the way clients can handle.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fresh, sleep } from './redis-workers.js';
import { contiguityProblem, ResumingWatch } from './resuming-watch.js';
import { acknowledged, lostWrites, watchMismatches, type WriteAttempt } from './write-load.js';

const execFileAsync = promisify(execFile);

/** LIST of every ConfigMap (retried while the server still recovers), with its resourceVersion. */
export async function finalConfigMaps(url: string, timeoutMs = 20_000): Promise<{ items: any[]; rv: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fresh(url, '/api/v1/configmaps');
      if (r.status === 200) return { items: r.body.items as any[], rv: String(r.body.metadata.resourceVersion) };
    } catch {
      // a connection lost to a dying worker: retry
    }
    if (Date.now() > deadline) throw new Error('the final LIST did not succeed in time');
    await sleep(200);
  }
}

/** The current ConfigMap resourceVersion (an empty page of a LIST). */
export async function configMapsRv(url: string): Promise<string> {
  const r = await fresh(url, '/api/v1/configmaps?limit=1');
  if (r.status !== 200) throw new Error(`LIST failed: ${r.status} ${r.text}`);
  return String(r.body.metadata.resourceVersion);
}

/**
 * Opens `n` cluster-wide ConfigMap watches from `from`, one after the other: each connection goes to
 * the worker with the fewest open ones, so the watches alternate between the workers.
 */
export async function openWatchers(url: string, n: number, from: string): Promise<ResumingWatch[]> {
  const watchers: ResumingWatch[] = [];
  for (let i = 0; i < n; i++) {
    const w = new ResumingWatch(url, { path: '/api/v1/configmaps', fromRv: from });
    await w.start();
    watchers.push(w);
  }
  return watchers;
}

/**
 * Every problem found after a fault: lost acknowledged writes, and for each watcher (waited for
 * until it reached `through`) missing, duplicated or out-of-order events and 410s.
 */
export async function faultProblems(
  attempts: WriteAttempt[],
  final: { items: any[]; rv: string },
  watchers: ResumingWatch[],
  from: string,
  waitMs = 15_000,
): Promise<string[]> {
  const problems = lostWrites(attempts, final.items);
  for (const [i, w] of watchers.entries()) {
    try {
      await w.waitForRv(final.rv, waitMs);
    } catch (err) {
      problems.push(`watcher ${i}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (w.errors.length > 0) problems.push(`watcher ${i}: ERROR events ${JSON.stringify(w.errors.map((e) => e.object))}`);
    const gap = contiguityProblem(w.events, from, final.rv);
    if (gap) problems.push(`watcher ${i}: ${gap}`);
    for (const p of watchMismatches(attempts, w.events)) problems.push(`watcher ${i}: ${p}`);
  }
  return problems;
}

/**
 * Whether a failed write failed the way clients handle: a 503 `Status` with Retry-After (nothing was
 * done; retry), or kube's 504 Timeout for a write whose outcome is unknown (no Retry-After: client-go
 * returns it to the caller, who must read before retrying).
 */
export function handledWriteFailure(a: WriteAttempt): boolean {
  if (a.status === 503) return a.kind === 'Status' && a.retryAfter !== undefined;
  return a.status === 504 && a.reason === 'Timeout' && a.retryAfter === undefined;
}

/**
 * Failed attempts that a client cannot handle: anything but a connection error (when
 * `connectionErrorsOk`) or a handledWriteFailure.
 */
export function badFailures(attempts: readonly WriteAttempt[], connectionErrorsOk: boolean): WriteAttempt[] {
  return attempts.filter((a) => {
    if (acknowledged(a)) return false;
    if (a.status === undefined) return !connectionErrorsOk;
    return !handledWriteFailure(a);
  });
}

/** PID of the redis-server listening on `port` (from INFO server). */
export async function redisPid(port: number): Promise<number> {
  const { stdout } = await execFileAsync(process.env.REDIS_CLI ?? 'redis-cli', ['-p', String(port), 'INFO', 'server']);
  const m = /process_id:(\d+)/.exec(stdout);
  if (!m) throw new Error(`no process_id in INFO server: ${stdout}`);
  return Number(m[1]);
}

/** A probe run every `everyMs` until stopped: records each answer's status (0 for a connection error) and latency. */
export function probe(
  url: string,
  path: string,
  everyMs = 200,
): { samples: { at: number; status: number; ms: number; retryAfter?: string; kind?: string }[]; stop(): Promise<void> } {
  const samples: { at: number; status: number; ms: number; retryAfter?: string; kind?: string }[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      try {
        const r = await fresh(url, path);
        const retryAfter = r.headers['retry-after'];
        samples.push({
          at,
          status: r.status,
          ms: r.ms,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined,
          kind: typeof r.body?.kind === 'string' ? r.body.kind : undefined,
        });
      } catch {
        samples.push({ at, status: 0, ms: Date.now() - at });
      }
      await sleep(everyMs);
    }
  })();
  return {
    samples,
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}
