import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RequestLabels } from './request-labels.js';
import { RequestSeries } from './request-series.js';

/**
 * Capstan's Prometheus metrics, in one registry per process. In a cluster each worker keeps its own
 * values and the primary sums them on scrape (see cluster-aggregation.ts); every metric states how it
 * aggregates, so per-process gauges that describe shared state (object counts) are not multiplied by
 * the number of workers.
 */
export const metricsRegistry = new Registry();

/** kube-apiserver's `apiserver_request_duration_seconds` buckets. */
export const REQUEST_DURATION_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

/** Buckets for single Redis commands: sub-millisecond to a few seconds. */
const REDIS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** `apiserver_request_total` and `apiserver_request_duration_seconds` (see request-series.ts). */
const requests = new RequestSeries(
  REQUEST_DURATION_BUCKETS,
  {
    total: 'apiserver_request_total',
    totalHelp: 'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    duration: 'apiserver_request_duration_seconds',
    durationHelp: 'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
  },
  metricsRegistry,
);

export const longRunningRequests = new Gauge({
  name: 'apiserver_longrunning_requests',
  help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
  labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'],
  aggregator: 'sum',
  registers: [metricsRegistry],
});

/** Connections a cluster worker serves that the primary handed it, by worker slot (the primary hands new ones to the worker serving the fewest). */
export const workerConnections = new Gauge({
  name: 'capstan_worker_connections',
  help: 'Open client connections each cluster worker serves (handed over by the primary), by worker slot.',
  labelNames: ['worker'],
  aggregator: 'sum',
  registers: [metricsRegistry],
});

/** How busy each cluster worker's event loop was over its last report (the primary passes over a much busier worker when it hands out a new connection). */
export const workerBusy = new Gauge({
  name: 'capstan_worker_event_loop_utilization',
  help: "Share of the last seconds each cluster worker's event loop spent running (0-1, each half second weighing half the rest), by worker slot.",
  labelNames: ['worker'],
  aggregator: 'sum',
  registers: [metricsRegistry],
});

/** Watch events written since the last scrape, by resource: counted on the hot path without prom-client's label hashing. */
const unreportedWatchEvents = new Map<string, number>();

// Registered with the registry when built; read only through scrapes.
const _watchEventsSent = new Counter({
  name: 'apiserver_watch_events_total',
  help: 'Number of events sent in watch clients, by resource.',
  labelNames: ['resource'],
  registers: [metricsRegistry],
  collect() {
    for (const [resource, count] of unreportedWatchEvents) this.inc({ resource }, count);
    unreportedWatchEvents.clear();
  },
});

const watchersDropped = new Counter({
  name: 'apiserver_terminated_watchers_total',
  help: 'Counter of watchers closed due to unresponsiveness (too far behind), by resource.',
  labelNames: ['resource'],
  registers: [metricsRegistry],
});

const redisCommandDuration = new Histogram({
  name: 'capstan_redis_request_duration_seconds',
  help: 'Latency of Redis commands (and Lua scripts, by script name) issued by Capstan, in seconds.',
  labelNames: ['command'],
  buckets: REDIS_BUCKETS,
  registers: [metricsRegistry],
});

const redisCommandErrors = new Counter({
  name: 'capstan_redis_request_errors_total',
  help: 'Redis commands that failed (connection errors, timeouts, OOM, READONLY, script errors), by command.',
  labelNames: ['command'],
  registers: [metricsRegistry],
});

const cachedCopyWrites = new Counter({
  name: 'capstan_cached_copy_writes_total',
  help: "Writes to existing objects that started from the process's cached copy (the Redis list cache), by whether the copy was the stored object's current version or behind it.",
  labelNames: ['copy'],
  registers: [metricsRegistry],
});

const cachedGets = new Counter({
  name: 'capstan_list_cache_gets_total',
  help: "GETs of a type the process's list cache holds (Redis), by how they were answered: from the cache already at the store's version, from the cache after waiting for the changes it lacked, or from the store after that wait ran out.",
  labelNames: ['answer'],
  registers: [metricsRegistry],
});
const cachedGetAnswers = {
  current: cachedGets.labels('current'),
  waited: cachedGets.labels('waited'),
  store: cachedGets.labels('store'),
};

/** A stored type's object count and mean object size (undefined: not known in this process). */
export interface StoredTypeStats {
  objectCount: number;
  averageObjectBytes: number | undefined;
}

type StorageStatsCollector = () => Promise<Record<string, StoredTypeStats>>;
let storageStatsCollector: StorageStatsCollector | undefined;
/** One read of the stats serves both gauges of a scrape, which collect at the same time. */
let pendingStats: Promise<Record<string, StoredTypeStats>> | undefined;

async function collectStorageStats(): Promise<Record<string, StoredTypeStats> | undefined> {
  const collector = storageStatsCollector;
  if (collector === undefined) return undefined;
  if (pendingStats === undefined) {
    const reading = collector().finally(() => {
      if (pendingStats === reading) pendingStats = undefined;
    });
    pendingStats = reading;
  }
  try {
    return await pendingStats;
  } catch {
    // The storage is unreachable: report nothing rather than failing the whole scrape (readyz reports the outage).
    return undefined;
  }
}

new Gauge({
  name: 'apiserver_storage_objects',
  help: 'Number of stored objects at the time of last check split by kind ("resource.group", or "resource" for the core group).',
  labelNames: ['resource'],
  // Every worker reads the same shared store: the cluster value is one worker's answer, not the sum.
  aggregator: 'max',
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    const stats = await collectStorageStats();
    for (const [resource, s] of Object.entries(stats ?? {})) this.set({ resource }, s.objectCount);
  },
});

/** kube's group and resource labels of a storage type ("deployments.apps": apps, deployments). */
function groupResourceLabels(type: string): { group: string; resource: string } {
  const dot = type.indexOf('.');
  return dot < 0 ? { group: '', resource: type } : { group: type.slice(dot + 1), resource: type.slice(0, dot) };
}

/**
 * A gauge per stored type labelled by group and resource, read from the storage stats at each
 * scrape; workers' values combine by their maximum (one that has not cached a type may know less).
 */
function perTypeGauge(name: string, help: string, valueOf: (s: StoredTypeStats) => number): void {
  new Gauge({
    name,
    help,
    labelNames: ['group', 'resource'],
    aggregator: 'max',
    registers: [metricsRegistry],
    async collect() {
      this.reset();
      const stats = await collectStorageStats();
      for (const [type, s] of Object.entries(stats ?? {})) this.set(groupResourceLabels(type), valueOf(s));
    },
  });
}

perTypeGauge(
  'apiserver_resource_objects',
  'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
  (s) => s.objectCount,
);

perTypeGauge(
  'apiserver_resource_size_estimate_bytes',
  'Estimated size of stored objects in database. Estimate is based on sum of last observed sizes of serialized objects. In case of a fetching error, the value will be -1.',
  // kube's -1: objects whose sizes this process has not seen.
  (s) => (s.objectCount > 0 && s.averageObjectBytes === undefined ? -1 : (s.averageObjectBytes ?? 0) * s.objectCount),
);

/**
 * Sets the source of `apiserver_storage_objects`, `apiserver_resource_objects` and
 * `apiserver_resource_size_estimate_bytes`: by storage type ("pods", "deployments.apps"), the
 * count and mean object size, read once per scrape.
 */
export function setStorageStatsCollector(fn: StorageStatsCollector | undefined): void {
  storageStatsCollector = fn;
}

/** Counts one watch event written to a client of `resource` (group-qualified as in storage objects). */
export function recordWatchEventSent(resource: string, count = 1): void {
  unreportedWatchEvents.set(resource, (unreportedWatchEvents.get(resource) ?? 0) + count);
}

/** Counts one watcher closed by the server because it fell too far behind. */
export function recordWatchDropped(resource: string): void {
  watchersDropped.inc({ resource });
}

/** Records one Redis command (or script) taking `seconds`; `error` set (any value but undefined/false) counts a failure. */
export function observeRedisCommand(command: string, seconds: number, error?: unknown): void {
  const labels = { command: command.toLowerCase() };
  redisCommandDuration.observe(labels, seconds);
  if (error !== undefined && error !== false && error !== null) redisCommandErrors.inc(labels);
}

/** Counts one write that started from a cached copy: `current` when the copy was the store's version, else `behind`. */
export function recordCachedCopyWrite(copy: 'current' | 'behind'): void {
  cachedCopyWrites.inc({ copy });
}

/** Counts a GET of a list-cached type by how it was answered (see capstan_list_cache_gets_total). */
export function recordListCacheGet(answer: 'current' | 'waited' | 'store'): void {
  cachedGetAnswers[answer].inc();
}

/** Records a finished request (counter and, for non-long-running requests, the latency histogram). */
export function recordRequest(labels: RequestLabels, code: number, seconds: number, longRunning: boolean): void {
  // kube observes watch latency too, but a watch's duration is its timeout: keep it out of the
  // histogram so latency SLOs are not skewed by streams that are open by design.
  requests.record(labels, code, longRunning ? undefined : seconds);
}

let defaultsStarted = false;

/** Starts Node's default metrics (event-loop lag, heap, GC, CPU, handles) once per process. */
export function startDefaultMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  collectDefaultMetrics({ register: metricsRegistry });
}
