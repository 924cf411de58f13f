/** The main-thread side of watch-worker: spreads watchers over worker threads and merges what they report. */
import { Worker } from 'node:worker_threads';
import type { WatchWorkerConfig, WatchWorkerProgress, WatchWorkerResult, WatchWorkerStarted } from './watch-worker.js';

export interface WatchPool {
  /** Resolves when every worker has opened its watchers (or given up on them). */
  started: Promise<{ connected: number; failed: number; firstError: string | undefined }>;
  /** Latest progress summed over workers. */
  progress(): { events: number; minAlive: number; ended: number; done: number };
  /** Closes all streams and returns each worker's result (bounded by `timeoutMs`). */
  stop(timeoutMs?: number): Promise<WatchWorkerResult[]>;
}

/** Starts `threads` workers sharing `total` watchers of `base` config. */
export function startWatchPool(base: Omit<WatchWorkerConfig, 'count'>, total: number, threads: number): WatchPool {
  const n = Math.max(1, Math.min(threads, total));
  const workers: Worker[] = [];
  const latest: (WatchWorkerProgress | undefined)[] = [];
  const startedList: Promise<WatchWorkerStarted>[] = [];
  const results: Promise<WatchWorkerResult>[] = [];
  for (let i = 0; i < n; i++) {
    const count = Math.floor(total / n) + (i < total % n ? 1 : 0);
    const config: WatchWorkerConfig = { ...base, count };
    const worker = new Worker(new URL('./watch-worker.js', import.meta.url), { workerData: config });
    workers.push(worker);
    latest.push(undefined);
    let onStarted: (s: WatchWorkerStarted) => void = () => undefined;
    let onResult: (r: WatchWorkerResult) => void = () => undefined;
    let onFail: (e: Error) => void = () => undefined;
    startedList.push(
      new Promise((resolve, reject) => {
        onStarted = resolve;
        onFail = reject;
      }),
    );
    results.push(
      new Promise((resolve, reject) => {
        onResult = resolve;
        worker.once('error', reject);
        worker.once('exit', (code) => reject(new Error(`watch worker exited with ${code} before reporting`)));
      }),
    );
    results[i]?.catch(() => undefined);
    startedList[i]?.catch(() => undefined);
    worker.once('error', (e) => onFail(e));
    worker.once('exit', (code) => onFail(new Error(`watch worker exited with ${code} before opening its watchers`)));
    worker.on('message', (msg: WatchWorkerStarted | WatchWorkerProgress | WatchWorkerResult) => {
      if (msg.type === 'started') onStarted(msg);
      else if (msg.type === 'progress') latest[i] = msg;
      else onResult(msg);
    });
  }
  const started = Promise.all(startedList).then((list) => ({
    connected: list.reduce((s, x) => s + x.connected, 0),
    failed: list.reduce((s, x) => s + x.failed, 0),
    firstError: list.find((x) => x.firstError !== undefined)?.firstError,
  }));
  return {
    started,
    progress: () => {
      let events = 0;
      let minAlive = Infinity;
      let ended = 0;
      let done = 0;
      for (const p of latest) {
        if (!p) {
          minAlive = 0;
          continue;
        }
        events += p.events;
        minAlive = Math.min(minAlive, p.minAlive);
        ended += p.ended;
        done += p.done;
      }
      return { events, minAlive, ended, done };
    },
    stop: async (timeoutMs = 30_000) => {
      for (const w of workers) w.postMessage({ type: 'stop' });
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('watch workers did not report in time')), timeoutMs);
      });
      try {
        return await Promise.race([Promise.all(results), timeout]);
      } finally {
        clearTimeout(timer);
        for (const w of workers) void w.terminate();
      }
    },
  };
}
