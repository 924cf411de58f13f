/** IPC messages between the primary and its workers (besides the metrics protocol). */

/** Environment variable carrying a worker's slot index (0-based); a restarted worker keeps its slot. */
export const WORKER_INDEX_ENV = 'CAPSTAN_WORKER_INDEX';

/** Sent by a worker once its HTTP server listens and start-up hooks have run. */
export interface ListeningMessage {
  type: 'capstan:listening';
  url: string;
  index: number;
}

export function isListeningMessage(value: unknown): value is ListeningMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return m.type === 'capstan:listening' && typeof m.url === 'string' && typeof m.index === 'number';
}

/** The slot index of this worker process (0 outside a cluster or when unset). */
export function workerIndexFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[WORKER_INDEX_ENV];
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}
