/** IPC messages and environment between the primary and its workers (besides the metrics protocol). */

/** Environment variable carrying a worker's slot index (0-based); a restarted worker keeps its slot. */
export const WORKER_INDEX_ENV = 'CAPSTAN_WORKER_INDEX';
/** Environment variable carrying the URL of the primary's listener (workers do not bind a port). */
export const LISTEN_URL_ENV = 'CAPSTAN_LISTEN_URL';
/** Environment variable carrying the port of the primary's listener. */
export const LISTEN_PORT_ENV = 'CAPSTAN_LISTEN_PORT';

/**
 * Sent by a worker once it serves: start-up hooks have run and its connection receiver is
 * installed. Only from then on does the primary hand it connections.
 */
export interface ReadyMessage {
  type: 'capstan:ready';
  url: string;
  index: number;
}

/** Primary to worker, with the accepted socket attached: serve this connection. */
export interface ConnectionMessage {
  type: 'capstan:connection';
  id: number;
}

/**
 * Worker to primary: the worker owns connection `id` now (sent before the worker first reads from
 * it), so the primary closes its own copy.
 */
export interface ConnectionTakenMessage {
  type: 'capstan:connection-taken';
  id: number;
}

/** Worker to primary: connection `id` arrived without its socket; the primary hands it elsewhere. */
export interface ConnectionRefusedMessage {
  type: 'capstan:connection-refused';
  id: number;
}

/**
 * Worker to primary: the shutdown delay is over and the worker's server is closing; send it no new
 * connections (it still answers the ones already on their way).
 */
export interface DrainingMessage {
  type: 'capstan:draining';
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? value as Record<string, unknown> : undefined;
}

export function isReadyMessage(value: unknown): value is ReadyMessage {
  const m = record(value);
  return m?.type === 'capstan:ready' && typeof m.url === 'string' && typeof m.index === 'number';
}

export function isConnectionMessage(value: unknown): value is ConnectionMessage {
  const m = record(value);
  return m?.type === 'capstan:connection' && typeof m.id === 'number';
}

export function isConnectionTakenMessage(value: unknown): value is ConnectionTakenMessage {
  const m = record(value);
  return m?.type === 'capstan:connection-taken' && typeof m.id === 'number';
}

export function isConnectionRefusedMessage(value: unknown): value is ConnectionRefusedMessage {
  const m = record(value);
  return m?.type === 'capstan:connection-refused' && typeof m.id === 'number';
}

export function isDrainingMessage(value: unknown): value is DrainingMessage {
  return record(value)?.type === 'capstan:draining';
}

/** The slot index of this worker process (0 outside a cluster or when unset). */
export function workerIndexFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[WORKER_INDEX_ENV];
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

/** The primary's listener as passed to a worker, or undefined when the environment lacks it. */
export function listenerFromEnv(env: NodeJS.ProcessEnv = process.env): { url: string; port: number } | undefined {
  const url = env[LISTEN_URL_ENV];
  const port = Number(env[LISTEN_PORT_ENV]);
  if (url === undefined || url === '' || !Number.isInteger(port) || port <= 0) return undefined;
  return { url, port };
}
