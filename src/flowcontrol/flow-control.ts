import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { PreAuthorizationFilter } from './pre-authorization-filter.js';
import { flowControlConfigProblem } from '../config/flowcontrol-flags.js';
import type { FlowControlConfig } from '../config/server-config.js';
import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import { storageTypeOf } from '../api/resource-info.js';
import type { Storage } from '../storage/storage.js';
import { ApfConfigSource, mandatoryConfig } from './apf-config-source.js';
import { ApfController } from './apf-controller.js';
import { priorityAndFairnessFilter } from './apf-filter.js';
import { FlowControlStats, registerFlowControlStats, unregisterFlowControlStats } from './flowcontrol-metrics.js';
import { maxInFlightFilter } from './max-in-flight-filter.js';
import { StorageStatsTracker } from './storage-stats-tracker.js';
import { RetryAfterTracker } from './retry-after.js';
import { WatchTracker } from './watch-tracker.js';
import { WorkEstimator } from './work-estimator.js';
import { apfDebugRouter } from './apf-debug-router.js';
import type { Router } from 'express';

/** kube's borrowingAdjustmentPeriod: how often seats are redistributed among the levels. */
const BORROWING_ADJUSTMENT_MS = 10_000;
/** The in-flight watermark gauges cover one second each. */
const WATERMARK_PERIOD_MS = 1_000;

/** What flow control needs from the server. */
export interface FlowControlContext {
  config: FlowControlConfig & { workers: number };
  storage: Storage;
  /** The served resources (object counts are kept by their storage types). */
  catalog: Pick<ResourceCatalog, 'get'>;
}

/**
 * How many processes share this server's concurrency: the workers of a cluster (`--workers N`,
 * `auto` = one per core), else 1. Each worker enforces its share of the configured limits, so the
 * whole server admits what one kube-apiserver with those flags admits, and a worker's seats stay in
 * proportion to its one event loop (docs/flow-control.md, "Workers and pods", says why not more).
 */
function processShare(workers: number): number {
  if (!cluster.isWorker) return 1;
  return workers < 1 ? availableParallelism() : workers;
}

function share(limit: number, processes: number): number {
  return limit === 0 ? 0 : Math.ceil(limit / processes);
}

/**
 * The server's overload protection, kube-apiserver's way, as a component of the server's lifecycle:
 * API Priority and Fairness by the stored FlowSchemas and PriorityLevelConfigurations
 * (`--enable-priority-and-fairness`, the default), whose concurrency limit is
 * `--max-requests-inflight` + `--max-mutating-requests-inflight`, or else those two limits alone.
 * `start` resolves once the configuration is loaded and throws kube's refusal when APF is on and the
 * limits add up to 0; `filter` then runs between impersonation and authorization (undefined: nothing
 * is limited). `stop` ends the configuration watch, the timers and the metrics.
 */
export class FlowControl {
  private readonly stopped = new AbortController();
  private started: StartedFlowControl = {};

  constructor(private readonly context: FlowControlContext) {}

  async start(): Promise<void> {
    this.started = await startFlowControl(this.context, this.stopped.signal);
  }

  /** After `start`: the stage the authentication filter runs before authorization (undefined: nothing is limited). */
  get filter(): PreAuthorizationFilter | undefined {
    return this.started.filter;
  }

  /**
   * kube's `/debug/api_priority_and_fairness/dump_*` endpoints of this process's APF state (mounted
   * after authorization); without APF they are not served (the request goes on, to a 404).
   */
  debugRouter(): Router {
    return apfDebugRouter(() => this.started.controller);
  }

  stop(): void {
    this.stopped.abort();
  }
}

/** What a started flow control runs: its filter, and with APF the controller the debug dumps read. */
interface StartedFlowControl {
  filter?: PreAuthorizationFilter;
  controller?: ApfController;
}

async function startFlowControl(context: FlowControlContext, signal: AbortSignal): Promise<StartedFlowControl> {
  const { config, catalog } = context;
  const isServed = (group: string, version: string, resource: string): boolean => catalog.get(group, version, resource) !== undefined;
  const problem = flowControlConfigProblem(config);
  if (problem !== undefined) throw new Error(problem);
  const processes = processShare(config.workers);
  const stats = new FlowControlStats(config.enablePriorityAndFairness);
  registerFlowControlStats(stats);
  const watermarks = setInterval(() => stats.inflight.roll(), WATERMARK_PERIOD_MS).unref();
  const timers: NodeJS.Timeout[] = [watermarks];
  signal.addEventListener(
    'abort',
    () => {
      for (const t of timers) clearInterval(t);
      unregisterFlowControlStats(stats);
    },
    { once: true },
  );
  if (!config.enablePriorityAndFairness) {
    const filter = maxInFlightFilter({
      readOnlyLimit: share(config.maxRequestsInflight, processes),
      mutatingLimit: share(config.maxMutatingRequestsInflight, processes),
      stats,
      isServed,
    });
    return filter === undefined ? {} : { filter };
  }
  const controller = new ApfController(share(config.maxRequestsInflight + config.maxMutatingRequestsInflight, processes), mandatoryConfig(), stats);
  const source = new ApfConfigSource(context.storage, controller, signal);
  await source.start();
  timers.push(setInterval(() => controller.rebalance(), BORROWING_ADJUSTMENT_MS).unref());
  const watches = new WatchTracker();
  const filter = priorityAndFairnessFilter({
    controller,
    estimator: new WorkEstimator(new StorageStatsTracker(context.storage), watches),
    watches,
    retryAfter: new RetryAfterTracker(),
    stats,
    storageTypeOf: (group, version, resource) => {
      const info = catalog.get(group, version, resource);
      return info === undefined ? undefined : storageTypeOf(info);
    },
    isServed,
    onLevelIdle: () => source.schedule(),
    requestTimeoutMs: config.requestTimeoutMs,
  });
  return { filter, controller };
}
