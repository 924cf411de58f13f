import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { metricsRegistry } from './metrics.js';

/**
 * Cluster-wide /metrics over IPC. The primary hands each connection to the next worker, so any
 * worker may receive the scrape, and the primary serves no HTTP itself, so that worker asks it, which
 * collects every worker's metrics as JSON (its own registry, not prom-client's global one), sums
 * them with prom-client's AggregatorRegistry.aggregate (each metric's `aggregator` decides how), and
 * sends the text back. A worker that does not answer within the per-worker timeout (starting up,
 * crashed) is left out of that scrape rather than failing it.
 */

const METRICS_REQUEST = 'capstan:metrics-request';
const METRICS_RESPONSE = 'capstan:metrics-response';
const COLLECT = 'capstan:metrics-collect';
const COLLECTED = 'capstan:metrics-collected';

/** Time the primary waits for one worker's metrics. */
const WORKER_TIMEOUT_MS = 2000;
/** Time a worker waits for the aggregated answer. */
const REQUEST_TIMEOUT_MS = 5000;

interface Message {
  type: string;
  id: number;
}

function isMessage(value: unknown, type: string): value is Message & Record<string, unknown> {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === type && typeof (value as { id?: unknown }).id === 'number';
}

let nextId = 0;
const pendingRequests = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void }>();
let workerListening = false;

/**
 * In a worker: answers the primary's collect requests and resolves this worker's aggregated-metrics
 * requests. Idempotent; a no-op outside a cluster worker.
 */
export function installWorkerMetricsResponder(): void {
  if (workerListening || !cluster.isWorker) return;
  workerListening = true;
  process.on('message', (msg: unknown) => {
    if (isMessage(msg, COLLECT)) {
      metricsRegistry.getMetricsAsJSON().then(
        (metrics) => process.send?.({ type: COLLECTED, id: msg.id, metrics }),
        (err: unknown) => process.send?.({ type: COLLECTED, id: msg.id, error: String(err) }),
      );
    } else if (isMessage(msg, METRICS_RESPONSE)) {
      const pending = pendingRequests.get(msg.id);
      if (pending === undefined) return;
      pendingRequests.delete(msg.id);
      if (typeof msg.text === 'string') pending.resolve(msg.text);
      else pending.reject(new Error(typeof msg.error === 'string' ? msg.error : 'metrics aggregation failed'));
    }
  });
}

/** In a worker: the whole cluster's metrics in Prometheus text format, via the primary. */
export function requestClusterMetrics(): Promise<string> {
  installWorkerMetricsResponder();
  const send = process.send?.bind(process);
  if (send === undefined) return Promise.reject(new Error('not a cluster worker'));
  const id = nextId++;
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      pendingRequests.delete(id);
      reject(new Error('timed out waiting for the primary to aggregate metrics'));
    }, REQUEST_TIMEOUT_MS);
    pendingRequests.set(id, {
      resolve: (text) => {
        clearTimeout(timer);
        resolve(text);
      },
      reject: (err) => {
        clearTimeout(timer);
        reject(err);
      },
    });
    send({ type: METRICS_REQUEST, id });
  });
}

/** One worker's metrics as JSON, or undefined when it does not answer in time. */
function collectFrom(worker: Worker, id: number): Promise<unknown[] | undefined> {
  return new Promise((resolve) => {
    if (!worker.isConnected()) {
      resolve(undefined);
      return;
    }
    const onMessage = (msg: unknown): void => {
      if (!isMessage(msg, COLLECTED) || msg.id !== id) return;
      finish(Array.isArray(msg.metrics) ? msg.metrics : undefined);
    };
    const finish = (value: unknown[] | undefined): void => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      resolve(value);
    };
    const onExit = (): void => finish(undefined);
    const timer = setTimeout(() => finish(undefined), WORKER_TIMEOUT_MS);
    worker.on('message', onMessage);
    worker.once('exit', onExit);
    try {
      worker.send({ type: COLLECT, id });
    } catch {
      finish(undefined);
    }
  });
}

/** In the primary: collects and aggregates the metrics of `workers`. */
export async function aggregateWorkerMetrics(workers: Worker[]): Promise<string> {
  const id = nextId++;
  const collected = await Promise.all(workers.map((w) => collectFrom(w, id)));
  const present = collected.filter((m): m is unknown[] => m !== undefined);
  return AggregatorRegistry.aggregate(present).metrics();
}

/**
 * In the primary: answers workers' aggregated-metrics requests, collecting from `workers()` (the
 * live workers at the time of the request).
 */
export function servePrimaryMetrics(workers: () => Worker[]): void {
  cluster.on('message', (worker: Worker, msg: unknown) => {
    if (!isMessage(msg, METRICS_REQUEST)) return;
    aggregateWorkerMetrics(workers()).then(
      (text) => {
        if (worker.isConnected()) worker.send({ type: METRICS_RESPONSE, id: msg.id, text });
      },
      (err: unknown) => {
        if (worker.isConnected()) worker.send({ type: METRICS_RESPONSE, id: msg.id, error: String(err) });
      },
    );
  });
}
