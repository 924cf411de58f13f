import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from '../metrics/metrics.js';
import type { RequestLabels } from '../metrics/request-labels.js';
import { HistogramSeries, SeriesHistogram, TimingRatioSeries, type LabelledSnapshot } from '../metrics/metric-series.js';

/**
 * kube-apiserver's API Priority and Fairness metrics (k8s.io/apiserver/pkg/util/flowcontrol/metrics),
 * with kube's names, labels, buckets and help texts. The dispatcher updates plain numbers in the
 * stats objects below on every request; prom-client reads them only when /metrics is scraped, so the
 * request path pays no label hashing. Each server registers its stats while it runs; series of the
 * same labels are summed (several servers in one process, and the workers of a cluster).
 */

const REQUEST_DURATION_BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];
const QUEUE_LENGTH_BUCKETS = [0, 10, 25, 50, 100, 250, 500, 1000];
const ESTIMATED_SEATS_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 100];
const WATCH_COUNT_BUCKETS = [0, 1, 10, 100, 1000, 10000];
const SEAT_UTILIZATION_BUCKETS = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1];
const REQUEST_UTILIZATION_BUCKETS = [0, 0.001, 0.003, 0.01, 0.03, 0.1, 0.25, 0.5, 0.75, 1];
const READ_WRITE_BUCKETS = [0, 0.001, 0.01, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1];
const DEMAND_BUCKETS = [0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6];

/** Why APF turned a request away: kube's `reason` label values. */
export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out';

/** Counters and gauges of one (priority level, flow schema) pair. */
export class FlowStats {
  executingRequests = 0;
  executingSeats = 0;
  inqueueRequests = 0;
  inqueueSeats = 0;
  dispatched = 0;
  noAccommodation = 0;
  readonly rejected = new Map<RejectReason, number>();
  readonly waitExecuted = new HistogramSeries(REQUEST_DURATION_BUCKETS);
  readonly waitRejected = new HistogramSeries(REQUEST_DURATION_BUCKETS);
  readonly executionRegular = new HistogramSeries(REQUEST_DURATION_BUCKETS);
  readonly executionWatch = new HistogramSeries(REQUEST_DURATION_BUCKETS);
  readonly estimatedSeats = new HistogramSeries(ESTIMATED_SEATS_BUCKETS);
  readonly queueLength = new HistogramSeries(QUEUE_LENGTH_BUCKETS);
  readonly watchCount = new HistogramSeries(WATCH_COUNT_BUCKETS);

  reject(reason: RejectReason): void {
    this.rejected.set(reason, (this.rejected.get(reason) ?? 0) + 1);
  }
}

/** Gauges and utilisation of one priority level. */
export class LevelStats {
  nominalSeats = 0;
  lowerSeats = 0;
  upperSeats = 0;
  currentSeats = 0;
  targetSeats = 0;
  demandHighWatermark = 0;
  demandAverage = 0;
  demandStdev = 0;
  demandSmoothed = 0;
  currentR = 0;
  /** Set once something was dispatched from a queue (kube reports these only then). */
  dispatch: { r: number; s: number; sMin: number; sMax: number; dsMin: number; dsMax: number } | undefined;
  readonly seatUtilization = new TimingRatioSeries(SEAT_UTILIZATION_BUCKETS, 1);
  readonly requestsWaiting = new TimingRatioSeries(REQUEST_UTILIZATION_BUCKETS, 1);
  readonly requestsExecuting = new TimingRatioSeries(REQUEST_UTILIZATION_BUCKETS, 1);
  readonly demand = new TimingRatioSeries(DEMAND_BUCKETS, 1);
  readonly flows = new Map<string, FlowStats>();

  /** The stats of flow schema `name` at this level (created on first use). */
  flow(name: string): FlowStats {
    let stats = this.flows.get(name);
    if (stats === undefined) {
      stats = new FlowStats();
      this.flows.set(name, stats);
    }
    return stats;
  }
}

/** Read-only or mutating, kube's `request_kind`. */
export type RequestKind = 'readOnly' | 'mutating';

/**
 * kube's in-flight watermarks: the most requests executing (and waiting) of each kind during the
 * last second, reported by `apiserver_current_inflight_requests` and `apiserver_current_inqueue_requests`.
 */
export class InflightWatermarks {
  readonly current = { executing: { readOnly: 0, mutating: 0 }, waiting: { readOnly: 0, mutating: 0 } };
  private readonly high = { executing: { readOnly: 0, mutating: 0 }, waiting: { readOnly: 0, mutating: 0 } };
  /** The previous second's watermarks, as the gauges report them. */
  readonly reported = { executing: { readOnly: 0, mutating: 0 }, waiting: { readOnly: 0, mutating: 0 } };

  /** Adds `delta` to the requests of `kind` in `phase`, raising the second's watermark. */
  note(phase: 'executing' | 'waiting', kind: RequestKind, delta: number): void {
    const value = (this.current[phase][kind] += delta);
    if (value > this.high[phase][kind]) this.high[phase][kind] = value;
  }

  /** Ends a one-second period: its watermarks become the reported ones; the next starts at the current values. */
  roll(): void {
    for (const phase of ['executing', 'waiting'] as const)
      for (const kind of ['readOnly', 'mutating'] as const) {
        this.reported[phase][kind] = this.high[phase][kind];
        this.high[phase][kind] = this.current[phase][kind];
      }
  }
}

/** Everything one server's flow control reports. */
export class FlowControlStats {
  readonly levels = new Map<string, LevelStats>();
  fairFrac = 0;
  readonly readVsWrite = {
    waitingReadOnly: new TimingRatioSeries(READ_WRITE_BUCKETS, 1),
    executingReadOnly: new TimingRatioSeries(READ_WRITE_BUCKETS, 1),
    waitingMutating: new TimingRatioSeries(READ_WRITE_BUCKETS, 1),
    executingMutating: new TimingRatioSeries(READ_WRITE_BUCKETS, 1),
  };
  readonly inflight = new InflightWatermarks();
  /** Whether APF runs (the apiserver_flowcontrol_* series exist only then). */
  constructor(readonly priorityAndFairness: boolean) {}

  /** The stats of priority level `name` (created on first use). */
  level(name: string): LevelStats {
    let stats = this.levels.get(name);
    if (stats === undefined) {
      stats = new LevelStats();
      this.levels.set(name, stats);
    }
    return stats;
  }

  /** Forgets a priority level that no longer exists (its series disappear, as kube's do on restart only; ours at once). */
  forget(name: string): void {
    this.levels.delete(name);
  }
}

const live = new Set<FlowControlStats>();

/** Makes `stats` part of every scrape until {@link unregisterFlowControlStats}. */
export function registerFlowControlStats(stats: FlowControlStats): void {
  live.add(stats);
}

/** Takes `stats` out of the scrapes (its server stopped). */
export function unregisterFlowControlStats(stats: FlowControlStats): void {
  live.delete(stats);
}

function* levels(): Iterable<[string, LevelStats]> {
  for (const stats of live) if (stats.priorityAndFairness) yield* stats.levels;
}

function* flows(): Iterable<[Record<string, string>, FlowStats]> {
  for (const [level, stats] of levels()) for (const [schema, flow] of stats.flows) yield [{ priority_level: level, flow_schema: schema }, flow];
}

/** `labels` with its keys in name order, as kube's (Go) exposition writes them. */
export function sortedLabels(labels: Record<string, string>): Record<string, string> {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(labels).sort()) sorted[key] = labels[key];
  return sorted;
}

/** A gauge recomputed from the live stats at every scrape. */
function derivedGauge(
  name: string,
  help: string,
  labelNames: string[],
  fill: (set: (labels: Record<string, string>, value: number) => void) => void,
  aggregator: 'sum' | 'max' = 'sum',
): void {
  new Gauge({
    name,
    help,
    labelNames,
    aggregator,
    registers: [metricsRegistry],
    collect() {
      this.reset();
      fill((labels, value) => this.inc(sortedLabels(labels), value));
    },
  });
}

/** A counter recomputed from the live stats at every scrape. */
function derivedCounter(name: string, help: string, labelNames: string[], fill: (set: (labels: Record<string, string>, value: number) => void) => void): void {
  new Counter({
    name,
    help,
    labelNames,
    registers: [metricsRegistry],
    collect() {
      this.reset();
      fill((labels, value) => this.inc(sortedLabels(labels), value));
    },
  });
}

const FC = 'apiserver_flowcontrol_';
const PAIR = ['priority_level', 'flow_schema'];
const LEVEL = ['priority_level'];

derivedCounter(`${FC}rejected_requests_total`, '[BETA] Number of requests rejected by API Priority and Fairness subsystem', [...PAIR, 'reason'], (set) => {
  for (const [labels, flow] of flows()) for (const [reason, n] of flow.rejected) set({ ...labels, reason }, n);
});
derivedCounter(`${FC}dispatched_requests_total`, '[BETA] Number of requests executed by API Priority and Fairness subsystem', PAIR, (set) => {
  for (const [labels, flow] of flows()) if (flow.dispatched > 0) set(labels, flow.dispatched);
});
derivedCounter(
  `${FC}request_dispatch_no_accommodation_total`,
  '[ALPHA] Number of times a dispatch attempt resulted in a non accommodation due to lack of available seats',
  PAIR,
  (set) => {
    for (const [labels, flow] of flows()) if (flow.noAccommodation > 0) set(labels, flow.noAccommodation);
  },
);
derivedGauge(
  `${FC}current_inqueue_requests`,
  '[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem',
  PAIR,
  (set) => {
    for (const [labels, flow] of flows()) set(labels, flow.inqueueRequests);
  },
);
derivedGauge(`${FC}current_inqueue_seats`, '[ALPHA] Number of seats currently pending in queues of the API Priority and Fairness subsystem', PAIR, (set) => {
  for (const [labels, flow] of flows()) set(labels, flow.inqueueSeats);
});
derivedGauge(
  `${FC}current_executing_requests`,
  '[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem',
  PAIR,
  (set) => {
    for (const [labels, flow] of flows()) set(labels, flow.executingRequests);
  },
);
derivedGauge(
  `${FC}current_executing_seats`,
  '[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem',
  PAIR,
  (set) => {
    for (const [labels, flow] of flows()) set(labels, flow.executingSeats);
  },
);

function levelGauge(name: string, help: string, value: (stats: LevelStats) => number, aggregator: 'sum' | 'max' = 'sum'): void {
  derivedGauge(
    `${FC}${name}`,
    help,
    LEVEL,
    (set) => {
      for (const [level, stats] of levels()) set({ priority_level: level }, value(stats));
    },
    aggregator,
  );
}

levelGauge('nominal_limit_seats', '[BETA] Nominal number of execution seats configured for each priority level', (s) => s.nominalSeats);
levelGauge('lower_limit_seats', '[ALPHA] Configured lower bound on number of execution seats available to each priority level', (s) => s.lowerSeats);
levelGauge('upper_limit_seats', '[ALPHA] Configured upper bound on number of execution seats available to each priority level', (s) => s.upperSeats);
levelGauge('current_limit_seats', '[ALPHA] current derived number of execution seats available to each priority level', (s) => s.currentSeats);
levelGauge('target_seats', '[ALPHA] Seat allocation targets', (s) => s.targetSeats);
levelGauge('demand_seats_high_watermark', '[ALPHA] High watermark, over last adjustment period, of demand_seats', (s) => s.demandHighWatermark);
levelGauge('demand_seats_average', '[ALPHA] Time-weighted average, over last adjustment period, of demand_seats', (s) => s.demandAverage);
levelGauge('demand_seats_stdev', '[ALPHA] Time-weighted standard deviation, over last adjustment period, of demand_seats', (s) => s.demandStdev);
levelGauge('demand_seats_smoothed', '[ALPHA] Smoothed seat demands', (s) => s.demandSmoothed);
levelGauge('current_r', '[ALPHA] R(time of last change)', (s) => s.currentR, 'max');

derivedGauge(
  `${FC}dispatch_r`,
  '[ALPHA] R(time of last dispatch)',
  LEVEL,
  (set) => {
    for (const [level, stats] of levels()) if (stats.dispatch !== undefined) set({ priority_level: level }, stats.dispatch.r);
  },
  'max',
);
derivedGauge(
  `${FC}latest_s`,
  '[ALPHA] S(most recently dispatched request)',
  LEVEL,
  (set) => {
    for (const [level, stats] of levels()) if (stats.dispatch !== undefined) set({ priority_level: level }, stats.dispatch.s);
  },
  'max',
);
derivedGauge(
  `${FC}next_s_bounds`,
  '[ALPHA] min and max, over queues, of S(oldest waiting request in queue)',
  [...LEVEL, 'bound'],
  (set) => {
    for (const [level, stats] of levels()) {
      if (stats.dispatch === undefined) continue;
      set({ priority_level: level, bound: 'min' }, stats.dispatch.sMin);
      set({ priority_level: level, bound: 'max' }, stats.dispatch.sMax);
    }
  },
  'max',
);
derivedGauge(
  `${FC}next_discounted_s_bounds`,
  '[ALPHA] min and max, over queues, of S(oldest waiting request in queue) - estimated work in progress',
  [...LEVEL, 'bound'],
  (set) => {
    for (const [level, stats] of levels()) {
      if (stats.dispatch === undefined) continue;
      set({ priority_level: level, bound: 'min' }, stats.dispatch.dsMin);
      set({ priority_level: level, bound: 'max' }, stats.dispatch.dsMax);
    }
  },
  'max',
);

new Gauge({
  name: `${FC}seat_fair_frac`,
  help: "[ALPHA] Fair fraction of server's concurrency to allocate to each priority level that can use it",
  aggregator: 'average',
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const stats of live) if (stats.priorityAndFairness) this.set(stats.fairFrac);
  },
});

function flowHistogram(
  name: string,
  help: string,
  buckets: number[],
  extra: string[],
  pick: (flow: FlowStats) => Array<[Record<string, string>, HistogramSeries]>,
): void {
  new SeriesHistogram(
    { name: `${FC}${name}`, help, buckets, labelNames: [...PAIR, ...extra], registers: [metricsRegistry] },
    function* (): Iterable<LabelledSnapshot> {
      for (const [labels, flow] of flows()) for (const [more, series] of pick(flow)) yield { labels: { ...labels, ...more }, snapshot: series.snapshot() };
    },
  );
}

flowHistogram('request_wait_duration_seconds', '[BETA] Length of time a request spent waiting in its queue', REQUEST_DURATION_BUCKETS, ['execute'], (f) => [
  ...(f.waitExecuted.observed > 0 ? [[{ execute: 'true' }, f.waitExecuted] as [Record<string, string>, HistogramSeries]] : []),
  ...(f.waitRejected.observed > 0 ? [[{ execute: 'false' }, f.waitRejected] as [Record<string, string>, HistogramSeries]] : []),
]);
flowHistogram(
  'request_execution_seconds',
  '[ALPHA] Duration of initial stage (for a WATCH) or any (for a non-WATCH) stage of request execution in the API Priority and Fairness subsystem',
  REQUEST_DURATION_BUCKETS,
  ['type'],
  (f) => [
    ...(f.executionRegular.observed > 0 ? [[{ type: 'regular' }, f.executionRegular] as [Record<string, string>, HistogramSeries]] : []),
    ...(f.executionWatch.observed > 0 ? [[{ type: 'watch' }, f.executionWatch] as [Record<string, string>, HistogramSeries]] : []),
  ],
);
flowHistogram(
  'work_estimated_seats',
  '[ALPHA] Number of estimated seats (maximum of initial and final seats) associated with requests in API Priority and Fairness',
  ESTIMATED_SEATS_BUCKETS,
  [],
  (f) => (f.estimatedSeats.observed > 0 ? [[{}, f.estimatedSeats]] : []),
);
flowHistogram(
  'request_queue_length_after_enqueue',
  '[ALPHA] Length of queue in the API Priority and Fairness subsystem, as seen by each request after it is enqueued',
  QUEUE_LENGTH_BUCKETS,
  [],
  (f) => (f.queueLength.observed > 0 ? [[{}, f.queueLength]] : []),
);
flowHistogram('watch_count_samples', '[ALPHA] count of watchers for mutating requests in API Priority and Fairness', WATCH_COUNT_BUCKETS, [], (f) =>
  f.watchCount.observed > 0 ? [[{}, f.watchCount]] : [],
);

function levelTimingHistogram(
  name: string,
  help: string,
  buckets: number[],
  labelNames: string[],
  pick: (stats: LevelStats) => Array<[Record<string, string>, TimingRatioSeries]>,
): void {
  new SeriesHistogram({ name: `${FC}${name}`, help, buckets, labelNames, registers: [metricsRegistry] }, function* (): Iterable<LabelledSnapshot> {
    for (const [level, stats] of levels())
      for (const [more, series] of pick(stats)) yield { labels: { ...more, priority_level: level }, snapshot: series.snapshot() };
  });
}

levelTimingHistogram(
  'priority_level_seat_utilization',
  'EXPERIMENTAL: [ALPHA] Observations, at the end of every nanosecond, of utilization of seats for any stage of execution (but only initial stage for WATCHes)',
  SEAT_UTILIZATION_BUCKETS,
  ['phase', 'priority_level'],
  (s) => [[{ phase: 'executing' }, s.seatUtilization]],
);
levelTimingHistogram(
  'priority_level_request_utilization',
  'EXPERIMENTAL: [ALPHA] Observations, at the end of every nanosecond, of number of requests (as a fraction of the relevant limit) waiting or in any stage of execution (but only initial stage for WATCHes)',
  REQUEST_UTILIZATION_BUCKETS,
  ['phase', 'priority_level'],
  (s) => [
    [{ phase: 'executing' }, s.requestsExecuting],
    [{ phase: 'waiting' }, s.requestsWaiting],
  ],
);
levelTimingHistogram(
  'demand_seats',
  'EXPERIMENTAL: [ALPHA] Observations, at the end of every nanosecond, of (the number of seats each priority level could use) / (nominal number of seats for that level)',
  DEMAND_BUCKETS,
  ['priority_level'],
  (s) => [[{}, s.demand]],
);

new SeriesHistogram(
  {
    name: `${FC}read_vs_write_current_requests`,
    help: 'EXPERIMENTAL: [ALPHA] Observations, at the end of every nanosecond, of the number of requests (as a fraction of the relevant limit) waiting or in regular stage of execution',
    buckets: READ_WRITE_BUCKETS,
    labelNames: ['phase', 'request_kind'],
    registers: [metricsRegistry],
  },
  function* (): Iterable<LabelledSnapshot> {
    for (const stats of live) {
      if (!stats.priorityAndFairness) continue;
      const rw = stats.readVsWrite;
      yield { labels: { phase: 'executing', request_kind: 'mutating' }, snapshot: rw.executingMutating.snapshot() };
      yield { labels: { phase: 'executing', request_kind: 'readOnly' }, snapshot: rw.executingReadOnly.snapshot() };
      yield { labels: { phase: 'waiting', request_kind: 'mutating' }, snapshot: rw.waitingMutating.snapshot() };
      yield { labels: { phase: 'waiting', request_kind: 'readOnly' }, snapshot: rw.waitingReadOnly.snapshot() };
    }
  },
);

function inflightGauge(name: string, help: string, phase: 'executing' | 'waiting'): void {
  new Gauge({
    name,
    help,
    labelNames: ['request_kind'],
    registers: [metricsRegistry],
    collect() {
      this.reset();
      for (const stats of live) for (const kind of ['mutating', 'readOnly'] as const) this.inc({ request_kind: kind }, stats.inflight.reported[phase][kind]);
    },
  });
}

inflightGauge(
  'apiserver_current_inflight_requests',
  '[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
  'executing',
);
inflightGauge('apiserver_current_inqueue_requests', '[ALPHA] Maximal number of queued requests in this apiserver per request kind in last second.', 'waiting');

const terminations = new Counter({
  name: 'apiserver_request_terminations_total',
  help: '[ALPHA] Number of requests which apiserver terminated in self-defense.',
  labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'],
  registers: [metricsRegistry],
});

/** Counts a request the server answered 429 to protect itself (kube's RecordRequestTermination). */
export function recordTermination(labels: RequestLabels, code: number): void {
  const { verb, group, version, resource, subresource, scope, component } = labels;
  terminations.inc({ code: String(code), component, group, resource, scope, subresource, verb, version });
}
