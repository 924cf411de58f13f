/** IPC messages and environment between the primary and its workers (besides the metrics protocol). */

/** Environment variable carrying a worker's slot index (0-based); a restarted worker keeps its slot. */
export const WORKER_INDEX_ENV = 'CAPSTAN_WORKER_INDEX';
/** Environment variable carrying the URL of the primary's listener (workers do not bind a port). */
export const LISTEN_URL_ENV = 'CAPSTAN_LISTEN_URL';
/** Environment variable carrying the port of the primary's listener. */
export const LISTEN_PORT_ENV = 'CAPSTAN_LISTEN_PORT';
/** Environment variables carrying the primary's HTTPS listener, when it has one. */
export const LISTEN_SECURE_URL_ENV = 'CAPSTAN_LISTEN_SECURE_URL';
export const LISTEN_SECURE_PORT_ENV = 'CAPSTAN_LISTEN_SECURE_PORT';

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
 * Worker to primary: connection `id` arrived and the worker holds it unread; it serves it only once
 * the primary grants it (the primary may have handed it to another worker meanwhile).
 */
export interface ConnectionClaimMessage {
  type: 'capstan:connection-claim';
  id: number;
}

/**
 * Primary to worker, answering a claim: `granted` true means the worker owns connection `id` now
 * (the primary has closed its own copy); false means it went to another worker, so the claimant
 * closes its copy without reading from it.
 */
export interface ConnectionGrantMessage {
  type: 'capstan:connection-grant';
  id: number;
  granted: boolean;
}

/** Worker to primary: connection `id` arrived without its socket; the primary hands it elsewhere. */
export interface ConnectionRefusedMessage {
  type: 'capstan:connection-refused';
  id: number;
}

/**
 * Primary to worker: are you running? Sent to a worker that stopped claiming its connections; any
 * message back ({@link PongMessage} at the latest) shows its event loop runs again.
 */
export interface PingMessage {
  type: 'capstan:ping';
}

/** Worker to primary, answering {@link PingMessage}. */
export interface PongMessage {
  type: 'capstan:pong';
}

/**
 * Worker to primary: the shutdown delay is over and the worker's server is closing; send it no new
 * connections (it still answers the ones already on their way).
 */
export interface DrainingMessage {
  type: 'capstan:draining';
}

/** Worker to primary: a connection the primary granted it has closed (the primary counts each worker's open connections). */
export interface ConnectionClosedMessage {
  type: 'capstan:connection-closed';
}

/**
 * Worker to primary, every half second: the share of the last seconds its event loop was busy (0-1,
 * each half second weighing half the rest). The primary hands a new connection to a much less busy
 * worker first.
 */
export interface WorkerLoadMessage {
  type: 'capstan:load';
  busy: number;
}

/**
 * Primary to worker: your event loop has been much busier than another worker's for a while; ask
 * one HTTP/2 client to reconnect (its new connection goes to the least busy worker), choosing the
 * connection that carried about `share` (0-1) of your requests lately.
 */
export interface ShedConnectionMessage {
  type: 'capstan:shed-connection';
  share: number;
  /** Clients (as ClientConnection names them) moved off a worker lately: none of their connections is picked. */
  settling: string[];
}

/**
 * Worker to primary: HTTP/2 connection `session` (numbered by the worker) carried its first request,
 * from `client` (see client-affinity.ts) presenting `credential`. The primary may answer
 * {@link MoveConnectionMessage} when the client's other connections are served elsewhere.
 */
export interface ClientConnectionMessage {
  type: 'capstan:client-connection';
  session: number;
  client: string;
  address: string;
  credential: string;
}

/** Worker to primary: connection `session` it reported has closed, or its client was asked to reconnect. */
export interface ClientConnectionGoneMessage {
  type: 'capstan:client-connection-gone';
  session: number;
  /** The worker asked the client to reconnect elsewhere because it was busy (ShedConnectionMessage). */
  shed?: boolean;
}

/** Primary to worker: send GOAWAY on connection `session`; its client's next connection goes to the worker serving its other connections. */
export interface MoveConnectionMessage {
  type: 'capstan:move-connection';
  session: number;
}

// Any non-null object, arrays included (unlike the shared objectOrUndefined): only the fields read decide.
function objectLikeOrUndefined(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

export function isReadyMessage(value: unknown): value is ReadyMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:ready' && typeof m.url === 'string' && typeof m.index === 'number';
}

export function isConnectionMessage(value: unknown): value is ConnectionMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:connection' && typeof m.id === 'number';
}

export function isConnectionClaimMessage(value: unknown): value is ConnectionClaimMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:connection-claim' && typeof m.id === 'number';
}

export function isConnectionGrantMessage(value: unknown): value is ConnectionGrantMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:connection-grant' && typeof m.id === 'number' && typeof m.granted === 'boolean';
}

export function isConnectionRefusedMessage(value: unknown): value is ConnectionRefusedMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:connection-refused' && typeof m.id === 'number';
}

export function isPingMessage(value: unknown): value is PingMessage {
  return objectLikeOrUndefined(value)?.type === 'capstan:ping';
}

/** Any message a worker sends about connections (each one shows its event loop is running). */
export function isWorkerConnectionMessage(value: unknown): boolean {
  const type = objectLikeOrUndefined(value)?.type;
  return (
    type === 'capstan:connection-claim' ||
    type === 'capstan:connection-refused' ||
    type === 'capstan:connection-closed' ||
    type === 'capstan:draining' ||
    type === 'capstan:pong' ||
    type === 'capstan:load' ||
    type === 'capstan:client-connection' ||
    type === 'capstan:client-connection-gone'
  );
}

export function isWorkerLoadMessage(value: unknown): value is WorkerLoadMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:load' && typeof m.busy === 'number' && m.busy >= 0 && m.busy <= 1;
}

export function isShedConnectionMessage(value: unknown): value is ShedConnectionMessage {
  const m = objectLikeOrUndefined(value);
  return (
    m?.type === 'capstan:shed-connection' &&
    typeof m.share === 'number' &&
    m.share >= 0 &&
    m.share <= 1 &&
    Array.isArray(m.settling) &&
    m.settling.every((c) => typeof c === 'string')
  );
}

export function isClientConnectionMessage(value: unknown): value is ClientConnectionMessage {
  const m = objectLikeOrUndefined(value);
  return (
    m?.type === 'capstan:client-connection' &&
    typeof m.session === 'number' &&
    typeof m.client === 'string' &&
    typeof m.address === 'string' &&
    typeof m.credential === 'string'
  );
}

export function isClientConnectionGoneMessage(value: unknown): value is ClientConnectionGoneMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:client-connection-gone' && typeof m.session === 'number' && (m.shed === undefined || typeof m.shed === 'boolean');
}

export function isMoveConnectionMessage(value: unknown): value is MoveConnectionMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:move-connection' && typeof m.session === 'number';
}

export function isConnectionClosedMessage(value: unknown): value is ConnectionClosedMessage {
  return objectLikeOrUndefined(value)?.type === 'capstan:connection-closed';
}

export function isDrainingMessage(value: unknown): value is DrainingMessage {
  return objectLikeOrUndefined(value)?.type === 'capstan:draining';
}

/** The slot index of this worker process (0 outside a cluster or when unset). */
export function workerIndexFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[WORKER_INDEX_ENV];
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

/** The primary's listener as passed to a worker, or undefined when the environment lacks it. */
export function listenerFromEnv(env: NodeJS.ProcessEnv = process.env): { url: string; port: number; secureUrl?: string; securePort?: number } | undefined {
  const url = env[LISTEN_URL_ENV];
  const port = Number(env[LISTEN_PORT_ENV]);
  if (url === undefined || url === '' || !Number.isInteger(port) || port <= 0) return undefined;
  const secureUrl = env[LISTEN_SECURE_URL_ENV];
  const securePort = Number(env[LISTEN_SECURE_PORT_ENV]);
  if (secureUrl === undefined || secureUrl === '' || !Number.isInteger(securePort) || securePort <= 0) return { url, port };
  return { url, port, secureUrl, securePort };
}

/** Worker to primary: this worker's watches of change stream `stream` now have listeners, or none left. */
export interface StreamReaderMessage {
  type: 'capstan:stream-reader';
  stream: string;
  listening: boolean;
}

/** Primary to worker: the cluster worker ids (`cluster.worker.id`) whose watches of `stream` have listeners, the receiver's own included. */
export interface StreamReadersMessage {
  type: 'capstan:stream-readers';
  stream: string;
  workers: number[];
}

/**
 * Answer `id` (with {@link SyncDoneMessage}) once your reader of `stream` has handed out its
 * changes through `version`. Worker to primary: ask every other worker reading it; primary to
 * worker: one such question.
 */
export interface SyncRequestMessage {
  type: 'capstan:sync-request';
  id: number;
  stream: string;
  version: string;
}

/** The answer to {@link SyncRequestMessage} `id` (from the primary: every peer answered, or the wait's bound passed). */
export interface SyncDoneMessage {
  type: 'capstan:sync-done';
  id: number;
}

export function isStreamReaderMessage(value: unknown): value is StreamReaderMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:stream-reader' && typeof m.stream === 'string' && typeof m.listening === 'boolean';
}

export function isStreamReadersMessage(value: unknown): value is StreamReadersMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:stream-readers' && typeof m.stream === 'string' && Array.isArray(m.workers) && m.workers.every((w) => typeof w === 'number');
}

export function isSyncRequestMessage(value: unknown): value is SyncRequestMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:sync-request' && typeof m.id === 'number' && typeof m.stream === 'string' && typeof m.version === 'string';
}

export function isSyncDoneMessage(value: unknown): value is SyncDoneMessage {
  const m = objectLikeOrUndefined(value);
  return m?.type === 'capstan:sync-done' && typeof m.id === 'number';
}
