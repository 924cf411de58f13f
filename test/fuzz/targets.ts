/**
 * The servers the fuzz suite runs against, as separate processes so that a crash shows: the embedded
 * store (`capstan --port 0`) and Redis with two workers. `health()` says what went wrong with the
 * processes since start (an exit, a restarted worker, a logged crash), or nothing.
 */
import { spawnCapstan } from '../helpers/capstan.js';
import { startRedisWorkers } from '../helpers/redis-workers.js';

export interface FuzzTarget {
  name: string;
  url: string;
  /** Problems with the processes since start: empty when every process still runs, never restarted. */
  health(): string[];
  stop(): Promise<void>;
}

const CRASH_LINES = /"msg":"(uncaught exception|unhandled promise rejection|worker exited unexpectedly; restarting|fatal)"/g;

function crashes(stderr: string): string[] {
  return [...stderr.matchAll(CRASH_LINES)].map((m) => m[0]);
}

export async function memoryTarget(): Promise<FuzzTarget> {
  const proc = await spawnCapstan(['--port', '0']);
  return {
    name: 'memory',
    url: proc.url,
    health: () => [
      ...(proc.child.exitCode !== null || proc.child.signalCode !== null
        ? [`the server exited (${String(proc.child.exitCode ?? proc.child.signalCode)})`]
        : []),
      ...crashes(proc.stderr()),
    ],
    stop: async () => {
      await proc.stop('SIGKILL');
    },
  };
}

export async function redisWorkersTarget(): Promise<FuzzTarget> {
  const env = await startRedisWorkers();
  const pids = env.cap.workerPids().sort();
  return {
    name: 'redis --workers 2',
    url: env.url,
    health: () => {
      const now = env.cap.workerPids().sort();
      return [
        ...(env.cap.child.exitCode !== null || env.cap.child.signalCode !== null ? ['the primary exited'] : []),
        ...(JSON.stringify(now) !== JSON.stringify(pids) ? [`workers changed: ${JSON.stringify(pids)} -> ${JSON.stringify(now)}`] : []),
        ...crashes(env.cap.stderr()),
      ];
    },
    stop: () => env.stop(),
  };
}

export const TARGETS: Record<string, () => Promise<FuzzTarget>> = {
  memory: memoryTarget,
  redis: redisWorkersTarget,
};
