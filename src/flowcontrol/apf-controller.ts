import { computeConcurrencyAllocation, type AllocationItem } from './concurrency-allocation.js';
import type { FlowSchemaConfig, PriorityLevelConfig } from './config-objects.js';
import { matchesFlowSchema, type FlowRequest } from './flow-schema-matching.js';
import type { FlowControlStats, LevelStats } from './flowcontrol-metrics.js';
import { QueueSet, type QueueSetConfig } from './queue-set.js';
import { SeatDemandIntegrator, SeatDemandStats } from './seat-demand.js';

/** kube's priorityLevelMaxSeatsPercent: no request may take more than this share of its level. */
const LEVEL_MAX_SEATS_FRACTION = 0.15;

/** The dispatching state of one priority level (kube's priorityLevelState). */
export class LevelState {
  config: PriorityLevelConfig;
  readonly queues: QueueSet;
  /** No longer configured, but requests still wait or run in it. */
  quiescing = false;
  nominalCL = 0;
  minCL = 0;
  maxCL = 0;
  currentCL = 0;
  /** Most seats one request may take here (0: no level cap). */
  maxSeats = 0;
  /** Whether the level got its first concurrency limit yet. */
  configured = false;
  readonly demand = new SeatDemandIntegrator();
  readonly demandStats = new SeatDemandStats();

  constructor(
    config: PriorityLevelConfig,
    readonly stats: LevelStats,
  ) {
    this.config = config;
    this.queues = new QueueSet(config.name, queueSetConfigOf(config), stats, this.demand);
  }
}

function queueSetConfigOf(pl: PriorityLevelConfig): QueueSetConfig {
  if (pl.exempt) return { desiredNumQueues: -1, queueLengthLimit: 0, handSize: 0 };
  if (pl.queuing === undefined) return { desiredNumQueues: 0, queueLengthLimit: 0, handSize: 0 };
  return { desiredNumQueues: pl.queuing.queues, queueLengthLimit: pl.queuing.queueLengthLimit, handSize: pl.queuing.handSize };
}

/** The FlowSchema and priority level a request belongs to. */
export interface Classification {
  schema: FlowSchemaConfig;
  level: LevelState;
}

/** kube's mandatory objects, used in place of missing stored ones (kube's "imagined" exempt and catch-all). */
export interface MandatoryConfig {
  exemptLevel: PriorityLevelConfig;
  catchAllLevel: PriorityLevelConfig;
  exemptSchema: FlowSchemaConfig;
  catchAllSchema: FlowSchemaConfig;
}

/**
 * kube's APF config controller (util/flowcontrol/apf_controller.go) for one server: digests the
 * FlowSchemas and PriorityLevelConfigurations into the ordered schema list and one queue set per
 * level, gives each level its nominal seats (its shares of the server's concurrency limit, rounded
 * up), its lendable and borrowable seats, and every 10 s (`rebalance`) redistributes the seats by
 * each level's recent demand within those bounds. Levels removed from the configuration keep
 * serving what they hold until idle.
 */
export class ApfController {
  private schemas: FlowSchemaConfig[] = [];
  private levels = new Map<string, LevelState>();
  private nominalCLSum = 0;

  constructor(
    private readonly serverConcurrencyLimit: number,
    private readonly mandatory: MandatoryConfig,
    readonly stats: FlowControlStats,
  ) {
    this.digest([], []);
  }

  /** The ordered FlowSchemas in force (tests, debugging). */
  get flowSchemas(): readonly FlowSchemaConfig[] {
    return this.schemas;
  }

  /** Every level in force or quiescing, in name order (the debug dumps). */
  levelStates(): LevelState[] {
    return [...this.levels.values()].sort((a, b) => (a.config.name < b.config.name ? -1 : a.config.name > b.config.name ? 1 : 0));
  }

  /** The level named `name`, if configured. */
  level(name: string): LevelState | undefined {
    return this.levels.get(name);
  }

  /**
   * kube's classification: the first FlowSchema (by matching precedence, then name) with a rule
   * matching the request, or catch-all.
   */
  classify(req: FlowRequest): Classification {
    let catchAll: FlowSchemaConfig | undefined;
    for (const schema of this.schemas) {
      if (matchesFlowSchema(req, schema)) return this.classificationOf(schema);
      if (schema.name === 'catch-all') catchAll = schema;
    }
    return this.classificationOf(catchAll ?? this.mandatory.catchAllSchema);
  }

  private classificationOf(schema: FlowSchemaConfig): Classification {
    const level = this.levels.get(schema.priorityLevel) ?? this.levels.get(this.mandatory.catchAllLevel.name);
    // The digest keeps only schemas whose level exists, and always has catch-all.
    if (level === undefined) throw new Error(`priority level ${schema.priorityLevel} is missing`);
    return { schema, level };
  }

  /** Takes a new configuration (every stored object of both kinds). Objects that failed to parse are left out by the caller. */
  digest(priorityLevels: readonly PriorityLevelConfig[], flowSchemas: readonly FlowSchemaConfig[]): void {
    const next = new Map<string, LevelState>();
    let shareSum = 0;
    for (const pl of priorityLevels) {
      let state = this.levels.get(pl.name);
      if (state === undefined || state.config.exempt !== pl.exempt) state = new LevelState(pl, this.stats.level(pl.name));
      state.config = pl;
      state.quiescing = false;
      next.set(pl.name, state);
      shareSum += pl.nominalConcurrencyShares;
    }
    const schemas = flowSchemas.filter((fs) => next.has(fs.priorityLevel));
    schemas.sort((a, b) => a.matchingPrecedence - b.matchingPrecedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (!schemas.some((fs) => fs.name === 'exempt')) schemas.unshift(this.mandatory.exemptSchema);
    if (!schemas.some((fs) => fs.name === 'catch-all')) schemas.push(this.mandatory.catchAllSchema);
    for (const [name, state] of this.levels) {
      if (next.has(name)) continue;
      const mandatoryName = name === 'exempt' || name === 'catch-all';
      if (!mandatoryName && state.queues.idle) {
        this.stats.forget(name);
        continue;
      }
      // A level still serving keeps its old configuration (and share) until it is idle.
      if (!mandatoryName) state.quiescing = true;
      next.set(name, state);
      shareSum += state.config.nominalConcurrencyShares;
    }
    for (const imagined of [this.mandatory.exemptLevel, this.mandatory.catchAllLevel]) {
      if (next.has(imagined.name)) continue;
      next.set(imagined.name, new LevelState(imagined, this.stats.level(imagined.name)));
      shareSum += imagined.nominalConcurrencyShares;
    }
    this.levels = next;
    this.schemas = schemas;
    let maxExecuting = 0;
    let maxWaiting = 0;
    for (const state of next.values()) {
      const { nominalConcurrencyShares, lendablePercent, borrowingLimitPercent, queuing } = state.config;
      const nominal = shareSum > 0 ? Math.ceil((this.serverConcurrencyLimit * nominalConcurrencyShares) / shareSum) : 0;
      const lendable = lendablePercent === undefined ? 0 : Math.round((nominal * lendablePercent) / 100);
      const borrowing = borrowingLimitPercent === undefined ? this.serverConcurrencyLimit : Math.round((nominal * borrowingLimitPercent) / 100);
      state.nominalCL = nominal;
      state.minCL = nominal - lendable;
      state.maxCL = nominal + borrowing;
      state.stats.nominalSeats = nominal;
      state.stats.lowerSeats = state.minCL;
      state.stats.upperSeats = state.maxCL;
      maxExecuting += nominal;
      state.maxSeats = 0;
      if (queuing !== undefined) {
        maxWaiting += queuing.queues * queuing.queueLengthLimit;
        state.maxSeats = Math.max(1, Math.min(Math.ceil(nominal * LEVEL_MAX_SEATS_FRACTION), Math.floor(nominal / queuing.handSize)));
      }
      if (!state.configured) {
        state.currentCL = nominal - Math.floor(lendable / 2);
        state.configured = true;
      }
    }
    this.nominalCLSum = maxExecuting;
    const rw = this.stats.readVsWrite;
    rw.executingReadOnly.setDenominator(maxExecuting);
    rw.executingMutating.setDenominator(maxExecuting);
    rw.waitingReadOnly.setDenominator(maxWaiting);
    rw.waitingMutating.setDenominator(maxWaiting);
    this.rebalance();
  }

  /** Whether `state` is a removed level that has become idle (the owner then digests again to drop it). */
  isReapable(state: LevelState): boolean {
    return state.quiescing && state.queues.idle;
  }

  /**
   * kube's updateBorrowingLocked: from each level's seat demand over the period since the last call
   * (high watermark, average and deviation, smoothed), sets its current concurrency limit. Exempt
   * levels take what they used; the others share the rest in proportion to their smoothed demand,
   * each within its lower (nominal minus lendable) and upper (nominal plus borrowable) bounds.
   */
  rebalance(): void {
    const items: AllocationItem[] = [];
    const itemIndex = new Map<LevelState, number>();
    const exemptCL = new Map<LevelState, number>();
    let minCLSum = 0;
    let minCurrentCLSum = 0;
    let remaining = this.nominalCLSum;
    for (const state of this.levels.values()) {
      state.demandStats.update(state.demand.reset());
      const hwm = state.demandStats.highWatermark;
      if (state.config.exempt) {
        const minCurrent = Math.max(state.minCL, hwm);
        exemptCL.set(state, minCurrent);
        remaining -= minCurrent;
      } else {
        const minCurrent = Math.max(state.minCL, Math.min(state.nominalCL, hwm));
        itemIndex.set(state, items.length);
        items.push({ lowerBound: minCurrent, upperBound: state.maxCL, target: Math.max(minCurrent, state.demandStats.smoothed) });
        minCLSum += state.minCL;
        minCurrentCLSum += minCurrent;
      }
    }
    if (items.length === 0 && this.nominalCLSum > 0) return;
    let allocs: number[] | undefined;
    let shareFrac = 0;
    if (remaining <= minCLSum) this.stats.fairFrac = 0;
    else if (remaining <= minCurrentCLSum) {
      shareFrac = (remaining - minCLSum) / (minCurrentCLSum - minCLSum);
      this.stats.fairFrac = 0;
    } else {
      try {
        const allocation = computeConcurrencyAllocation(this.nominalCLSum, items);
        allocs = allocation.allocs;
        this.stats.fairFrac = allocation.fairFrac;
      } catch {
        // As kube: an impossible problem keeps every level's current limit.
        allocs = [...this.levels.values()].filter((s) => !s.config.exempt).map((s) => s.currentCL);
      }
    }
    for (const state of this.levels.values()) {
      const idx = itemIndex.get(state);
      let currentCL: number;
      if (idx === undefined) currentCL = exemptCL.get(state) ?? 0;
      else if (remaining <= minCLSum) currentCL = state.minCL;
      else if (remaining <= minCurrentCLSum) {
        const minCurrent = Math.max(state.minCL, Math.min(state.nominalCL, state.demandStats.highWatermark));
        currentCL = state.minCL + Math.round((minCurrent - state.minCL) * shareFrac);
      } else currentCL = Math.round(allocs?.[idx] ?? state.currentCL);
      state.currentCL = currentCL;
      const s = state.stats;
      s.currentSeats = currentCL;
      s.targetSeats = idx === undefined ? 0 : items[idx].target;
      s.demandHighWatermark = state.demandStats.highWatermark;
      s.demandAverage = state.demandStats.average;
      s.demandStdev = state.demandStats.stdDev;
      s.demandSmoothed = state.demandStats.smoothed;
      const denominator = currentCL > 0 ? currentCL : Math.max(1, Math.round(this.serverConcurrencyLimit / 10));
      s.demand.setDenominator(denominator);
      state.queues.configure(queueSetConfigOf(state.config), { concurrencyLimit: currentCL, concurrencyDenominator: denominator });
    }
  }
}
