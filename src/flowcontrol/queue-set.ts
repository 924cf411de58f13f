import { performance } from 'node:perf_hooks';
import type { FlowStats, LevelStats, RejectReason } from './flowcontrol-metrics.js';
import type { SeatDemandIntegrator } from './seat-demand.js';
import { dealHand } from './shuffle-sharding.js';
import { MemberList, type MemberNode } from './member-list.js';

/** How much of the server a request is expected to occupy (kube's WorkEstimate). */
export interface WorkEstimate {
  /** Seats held while the request executes. */
  initialSeats: number;
  /** Seats held for `additionalLatencyMs` after it finished (a write notifying many watchers). */
  finalSeats: number;
  additionalLatencyMs: number;
}

/** The larger of a request's initial and final seats. */
export function maxSeats(estimate: WorkEstimate): number {
  return Math.max(estimate.initialSeats, estimate.finalSeats);
}

/** kube's queueSet.estimatedServiceDuration: the service time assumed when a request is dispatched. */
const ESTIMATED_SERVICE_SECONDS = 0.003;

/** How a priority level queues: kube's fairqueuing QueuingConfig. */
export interface QueueSetConfig {
  /** Queues to spread flows over; 0: no queues (a Reject level); negative: no limit at all (the exempt level). */
  desiredNumQueues: number;
  queueLengthLimit: number;
  handSize: number;
}

/** How many seats a priority level may use now: kube's DispatchingConfig. */
export interface DispatchingConfig {
  concurrencyLimit: number;
  /** What utilisation ratios divide by (the limit, or a tenth of the server's when the limit is 0). */
  concurrencyDenominator: number;
}

/** A request's identity within its level: its FlowSchema, flow and the flow's hash. */
export interface FlowIdentity {
  flowSchema: string;
  /** Key of the flow among this level's flows (schema and distinguisher). */
  key: string;
  /** kube's hashFlowID of the flow, computed only when the level has several queues. */
  hash(): bigint;
}

/** What the owner of a request hears from the queue set. */
export interface RequestCallbacks {
  /** The request may execute now (called once, from a microtask when it was queued). */
  dispatched(request: FairRequest): void;
  /** The request was taken out of its queue without executing (its wait limit passed, or it was cancelled). */
  rejected(request: FairRequest, reason: RejectReason): void;
}

/** What the debug dumps tell of a request (kube's RequestDump details); only read when dumping. */
export interface RequestDigest {
  /** The flow within its FlowSchema (user name, namespace, or empty). */
  distinguisher(): string;
  user: string;
  verb: string;
  path: string;
  namespace: string;
  name: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
}

class Queue {
  readonly waiting = new RequestFifo();
  /** Requests dispatched from this queue and still holding seats (the debug dumps list them). */
  readonly executingRequests = new MemberList<FairRequest>();
  /** Virtual time charged to the queue for the work it has dispatched: estimates, and real durations once finished. */
  nextDispatchR = 0;
  executing = 0;
  seatsInUse = 0;

  constructor(public index: number) {}

  /**
   * The work its executing requests did beyond their estimate so far (seat-seconds at time `t`):
   * what their finish will charge, counted while they run. kube charges it only at the finish, so
   * a queue whose long requests (large LISTs) still run looks as if it had been served little and
   * is preferred over a quiet flow's queue for as long as they run.
   */
  overrunWork(t: number): number {
    let work = 0;
    for (let n = this.executingRequests.first; n !== undefined; n = n.next) {
      const r = n.value;
      if (r.state !== 'executing') continue;
      const over = t - r.startTime - ESTIMATED_SERVICE_SECONDS;
      if (over > 0) work += r.estimate.initialSeats * over;
    }
    return work;
  }
}

/** One request known to a queue set, from arrival to the release of its last seat. */
export class FairRequest {
  /** The queue it waits or executes in (none for the exempt and Reject levels). */
  queue: Queue | undefined;
  arrivalR = 0;
  readonly arrivalTime = performance.now();
  /** When it started executing (seconds on the queue set's clock; 0 while waiting). */
  startTime = 0;
  /** Waiting in a queue: the list node that removes it. */
  node: MemberNode<FairRequest> | undefined;
  /** Executing: its node in the queue's (or the queueless level's) list of executing requests. */
  executingNode: MemberNode<FairRequest> | undefined;
  private timer: NodeJS.Timeout | undefined;
  readonly totalWork: number;
  readonly finalWork: number;
  /** The request's own copy: dispatching may cap its final seats. */
  readonly estimate: WorkEstimate;
  state: 'waiting' | 'executing' | 'done' = 'waiting';

  constructor(
    readonly set: QueueSet,
    readonly flow: FlowIdentity,
    readonly stats: FlowStats,
    estimate: WorkEstimate,
    private readonly callbacks: RequestCallbacks,
    readonly digest?: RequestDigest,
  ) {
    this.estimate = { ...estimate };
    this.finalWork = (estimate.finalSeats * estimate.additionalLatencyMs) / 1000;
    this.totalWork = estimate.initialSeats * ESTIMATED_SERVICE_SECONDS + this.finalWork;
  }

  get maxSeats(): number {
    return maxSeats(this.estimate);
  }

  /** Rejects the request after `ms` unless it was dispatched by then. */
  limitWait(ms: number): void {
    this.timer = setTimeout(() => this.set.cancel(this, 'time-out'), Math.max(0, ms));
  }

  /** Called by the queue set: the request leaves the waiting state. */
  stopWaiting(): void {
    clearTimeout(this.timer);
  }

  notifyDispatched(immediately: boolean): void {
    if (immediately) this.callbacks.dispatched(this);
    else queueMicrotask(() => this.callbacks.dispatched(this));
  }

  notifyRejected(reason: RejectReason): void {
    this.callbacks.rejected(this, reason);
  }
}

/** A FIFO of waiting requests whose members can leave from anywhere, with running sums (kube's requestFIFO). */
class RequestFifo {
  private readonly members = new MemberList<FairRequest>();
  /** Sum of the members' max seats. */
  maxSeatsSum = 0;
  /** Sum of the members' initial seats. */
  initialSeatsSum = 0;
  /** Sum of the members' total work (seat-seconds). */
  totalWorkSum = 0;

  get length(): number {
    return this.members.size;
  }

  push(request: FairRequest): MemberNode<FairRequest> {
    this.maxSeatsSum += request.maxSeats;
    this.initialSeatsSum += request.estimate.initialSeats;
    this.totalWorkSum += request.totalWork;
    return this.members.add(request);
  }

  peek(): FairRequest | undefined {
    return this.members.first?.value;
  }

  /** The members, oldest first. */
  toArray(): FairRequest[] {
    return [...this.members];
  }

  remove(node: MemberNode<FairRequest>): void {
    if (!this.members.remove(node)) return;
    this.maxSeatsSum -= node.value.maxSeats;
    this.initialSeatsSum -= node.value.estimate.initialSeats;
    this.totalWorkSum -= node.value.totalWork;
  }
}

/** One queue in a {@link QueueSetDump}. */
export interface QueueDump {
  /** Oldest first. */
  waiting: FairRequest[];
  executing: FairRequest[];
  executingRequests: number;
  seatsInUse: number;
  /** Seat-seconds of virtual time. */
  nextDispatchR: number;
  initialSeatsSum: number;
  maxSeatsSum: number;
  /** Seat-seconds. */
  totalWorkSum: number;
}

/** A queue set's state and counters since it was made (kube's debug.QueueSetDump). */
export interface QueueSetDump {
  queues: QueueDump[];
  queuelessExecuting: FairRequest[];
  waiting: number;
  executing: number;
  dispatched: number;
  rejected: number;
  cancelled: number;
}

/** The outcome of {@link QueueSet.startRequest}. */
export type StartOutcome = { kind: 'executing'; request: FairRequest } | { kind: 'queued'; request: FairRequest } | { kind: 'rejected'; reason: RejectReason };

function now(): number {
  return performance.now() / 1000;
}

/**
 * kube's fair queuing for one priority level (fairqueuing/queueset): requests of a flow are shuffle
 * sharded onto the shortest of the flow's hand of queues; queues are served in order of the
 * virtual finish time of their oldest request, so that every active queue gets an equal share of
 * the seats whatever its arrival rate, and a request runs once the seats it needs are free. Unlike
 * kube, so that a flood of long or wide LISTs cannot go ahead of a quiet flow of the same level: a
 * queue is charged for its executing requests' time as it passes, not only once they finish
 * ({@link Queue.overrunWork}); an arrival's virtual time is the least-served backlogged queue's when
 * that lags the clock ({@link QueueSet.arrivalR}); and a flow joins the idlest of its equally short
 * queues. A full
 * queue (while every seat is taken) rejects; a Reject level rejects whatever does not fit at once;
 * the exempt level runs everything. Single-threaded: every method runs to completion.
 */
export class QueueSet {
  private queues: Queue[] = [];
  private config: QueueSetConfig;
  private dispatching: DispatchingConfig = { concurrencyLimit: 0, concurrencyDenominator: 1 };
  private currentR = 0;
  private lastRealTime: number;
  private robinIndex = -1;
  private totRequestsWaiting = 0;
  private totRequestsExecuting = 0;
  private totSeatsInUse = 0;
  private totSeatsWaiting = 0;
  private enqueues = 0;
  /** Executing requests of a level without queues (exempt, Reject). */
  private readonly queuelessExecuting = new MemberList<FairRequest>();
  /** kube's totRequestsDispatched, totRequestsRejected, totRequestsCancelled (for the debug dumps). */
  private totDispatched = 0;
  private totRejected = 0;
  private totCancelled = 0;
  /** Flows' hands of queues, for the current queue count and hand size. */
  private hands = new Map<string, number[]>();

  /** @param clock seconds on a monotonic clock (tests pass their own to step time). */
  constructor(
    readonly name: string,
    config: QueueSetConfig,
    private readonly stats: LevelStats,
    private readonly demand: SeatDemandIntegrator,
    readonly clock: () => number = now,
  ) {
    this.config = config;
    this.lastRealTime = clock();
  }

  /** Applies a new configuration; queues are added at once and removed once empty. */
  configure(config: QueueSetConfig, dispatching: DispatchingConfig): void {
    this.syncTime();
    if (config.desiredNumQueues > 0) {
      while (this.queues.length < config.desiredNumQueues) this.queues.push(new Queue(this.queues.length));
    } else {
      // A level without queues keeps the old limits while its queues drain.
      config = { ...config, queueLengthLimit: this.config.queueLengthLimit, handSize: this.config.handSize };
    }
    if (config.desiredNumQueues !== this.config.desiredNumQueues || config.handSize !== this.config.handSize) this.hands.clear();
    this.config = config;
    this.dispatching = dispatching;
    const qll = Math.max(1, config.queueLengthLimit) * Math.max(1, config.desiredNumQueues);
    this.stats.requestsWaiting.setDenominator(qll);
    this.stats.requestsExecuting.setDenominator(dispatching.concurrencyDenominator);
    this.stats.seatUtilization.setDenominator(dispatching.concurrencyDenominator);
    this.dispatchAsMuchAsPossible();
  }

  /** No request waits or executes. */
  get idle(): boolean {
    return this.totRequestsWaiting === 0 && this.totRequestsExecuting === 0;
  }

  /** The current concurrency limit (seats). */
  get concurrencyLimit(): number {
    return this.dispatching.concurrencyLimit;
  }

  /**
   * kube's StartRequest: runs the request now, queues it (with `waitLimitMs` to wait), or rejects
   * it ("concurrency-limit" at a Reject level, "queue-full" when its queue is full and every seat
   * is taken). A queued request is later dispatched or rejected through its callbacks; it waits at
   * most `waitLimitMs()` milliseconds.
   */
  startRequest(
    flow: FlowIdentity,
    stats: FlowStats,
    estimate: WorkEstimate,
    callbacks: RequestCallbacks,
    waitLimitMs: () => number,
    digest?: RequestDigest,
  ): StartOutcome {
    this.syncTime();
    const request = new FairRequest(this, flow, stats, estimate, callbacks, digest);
    if (this.config.desiredNumQueues < 1) {
      if (!this.canAccommodate(request.maxSeats)) {
        this.totRejected++;
        stats.reject('concurrency-limit');
        return { kind: 'rejected', reason: 'concurrency-limit' };
      }
      request.arrivalR = this.currentR;
      this.startExecuting(request, undefined);
      return { kind: 'executing', request };
    }
    const queue = this.queues[this.shuffleShard(flow)];
    if (this.totSeatsInUse >= this.dispatching.concurrencyLimit && queue.waiting.length >= this.config.queueLengthLimit) {
      this.totRejected++;
      stats.reject('queue-full');
      return { kind: 'rejected', reason: 'queue-full' };
    }
    request.arrivalR = this.arrivalR();
    request.queue = queue;
    if (queue.waiting.length === 0 && queue.executing === 0) queue.nextDispatchR = request.arrivalR;
    request.node = queue.waiting.push(request);
    this.totRequestsWaiting++;
    this.totSeatsWaiting += request.maxSeats;
    stats.inqueueRequests++;
    stats.inqueueSeats += request.maxSeats;
    stats.queueLength.observe(queue.waiting.length);
    this.stats.requestsWaiting.add(1);
    this.noteDemand();
    this.boundNextDispatch(queue);
    // Dispatching now may pick this very request: it then runs without a microtask's delay.
    this.dispatchAsMuchAsPossible(request);
    if (request.state === 'executing') return { kind: 'executing', request };
    request.limitWait(waitLimitMs());
    return { kind: 'queued', request };
  }

  /** A waiting request leaves its queue without executing (client gone, wait limit passed). */
  cancel(request: FairRequest, reason: RejectReason): void {
    if (request.state !== 'waiting' || request.node === undefined || request.queue === undefined) return;
    this.syncTime();
    request.stopWaiting();
    const queue = request.queue;
    queue.waiting.remove(request.node);
    request.node = undefined;
    request.state = 'done';
    this.totRequestsWaiting--;
    this.totSeatsWaiting -= request.maxSeats;
    request.stats.inqueueRequests--;
    request.stats.inqueueSeats -= request.maxSeats;
    request.stats.reject(reason);
    this.totRejected++;
    this.totCancelled++;
    this.stats.requestsWaiting.add(-1);
    this.noteDemand();
    this.boundNextDispatch(queue);
    request.notifyRejected(reason);
  }

  /** An executing request finished: its seats are released (after its additional latency) and others dispatched. */
  finish(request: FairRequest): void {
    if (request.state !== 'executing') return;
    this.syncTime();
    request.state = 'done';
    this.totRequestsExecuting--;
    request.stats.executingRequests--;
    this.stats.requestsExecuting.add(-1);
    const serviceSeconds = this.clock() - request.startTime;
    const queue = request.queue;
    const executingNode = request.executingNode;
    request.executingNode = undefined;
    if (queue === undefined) {
      if (executingNode !== undefined) this.queuelessExecuting.remove(executingNode);
    } else {
      if (executingNode !== undefined) queue.executingRequests.remove(executingNode);
      queue.executing--;
      queue.nextDispatchR -= request.estimate.initialSeats * (ESTIMATED_SERVICE_SECONDS - serviceSeconds);
      this.boundNextDispatch(queue);
    }
    const release = (): void => {
      this.totSeatsInUse -= request.maxSeats;
      request.stats.executingSeats -= request.maxSeats;
      this.stats.seatUtilization.add(-request.maxSeats);
      this.noteDemand();
      if (queue !== undefined) {
        queue.seatsInUse -= request.maxSeats;
        this.removeQueueIfEmpty(queue);
      }
    };
    if (request.estimate.additionalLatencyMs <= 0) {
      release();
      this.dispatchAsMuchAsPossible();
      return;
    }
    this.dispatchAsMuchAsPossible();
    setTimeout(() => {
      this.syncTime();
      release();
      this.dispatchAsMuchAsPossible();
    }, request.estimate.additionalLatencyMs).unref();
  }

  private startExecuting(request: FairRequest, queue: Queue | undefined): void {
    request.state = 'executing';
    request.startTime = this.clock();
    this.totRequestsExecuting++;
    this.totSeatsInUse += request.maxSeats;
    request.stats.executingRequests++;
    request.stats.executingSeats += request.maxSeats;
    request.stats.dispatched++;
    this.totDispatched++;
    this.stats.requestsExecuting.add(1);
    this.stats.seatUtilization.add(request.maxSeats);
    this.noteDemand();
    if (queue === undefined) request.executingNode = this.queuelessExecuting.add(request);
    else {
      request.executingNode = queue.executingRequests.add(request);
      queue.executing++;
      queue.seatsInUse += request.maxSeats;
    }
  }

  /** The state kube's debug endpoints show (its queueSet.Dump). */
  dump(): QueueSetDump {
    this.syncTime();
    return {
      queues: this.queues.map((q) => ({
        waiting: q.waiting.toArray(),
        executing: [...q.executingRequests],
        executingRequests: q.executing,
        seatsInUse: q.seatsInUse,
        nextDispatchR: q.nextDispatchR,
        initialSeatsSum: q.waiting.initialSeatsSum,
        maxSeatsSum: q.waiting.maxSeatsSum,
        totalWorkSum: q.waiting.totalWorkSum,
      })),
      queuelessExecuting: [...this.queuelessExecuting],
      waiting: this.totRequestsWaiting,
      executing: this.totRequestsExecuting,
      dispatched: this.totDispatched,
      rejected: this.totRejected,
      cancelled: this.totCancelled,
    };
  }

  private noteDemand(): void {
    const demand = this.totSeatsInUse + this.totSeatsWaiting;
    this.demand.set(demand);
    this.stats.demand.set(demand);
  }

  /** kube's syncTimeLocked: advances the virtual clock R at the rate each active queue is served. */
  private syncTime(): void {
    const realNow = this.clock();
    const elapsed = realNow - this.lastRealTime;
    this.lastRealTime = realNow;
    if (elapsed > 0) this.currentR += this.virtualTimeRatio() * elapsed;
    this.stats.currentR = this.currentR;
  }

  private virtualTimeRatio(): number {
    let active = 0;
    let seatsRequested = 0;
    for (const q of this.queues) {
      seatsRequested += q.seatsInUse + q.waiting.maxSeatsSum;
      if (q.waiting.length > 0 || q.executing > 0) active++;
    }
    if (active === 0) return 0;
    return Math.min(seatsRequested, this.dispatching.concurrencyLimit) / active;
  }

  /** The least-loaded queue (by waiting work, then seats in use) of the flow's hand, starting at a rotating offset as kube does. */
  private shuffleShard(flow: FlowIdentity): number {
    let hand = this.hands.get(flow.key);
    if (hand === undefined) {
      hand = dealHand(flow.hash(), this.config.desiredNumQueues, this.config.handSize);
      if (this.hands.size >= 10_000) this.hands.clear();
      this.hands.set(flow.key, hand);
    }
    const offset = this.enqueues % hand.length;
    this.enqueues++;
    let best = hand[offset];
    let bestWork = Infinity;
    let bestSeats = Infinity;
    for (let i = 0; i < hand.length; i++) {
      const index = hand[(offset + i) % hand.length];
      const queue = this.queues[index];
      const work = queue.waiting.totalWorkSum;
      // Of queues with as little waiting, the one with the fewest seats in use: a flow does not
      // join a queue where another flow's long requests run while an idle queue is in its hand.
      if (work < bestWork || (work === bestWork && queue.seatsInUse < bestSeats)) {
        bestWork = work;
        bestSeats = queue.seatsInUse;
        best = index;
      }
    }
    return best;
  }

  private canAccommodate(seats: number): boolean {
    if (this.config.desiredNumQueues < 0) return true;
    if (seats > this.dispatching.concurrencyLimit) return this.totRequestsExecuting === 0;
    return this.totSeatsInUse + seats <= this.dispatching.concurrencyLimit;
  }

  private dispatchAsMuchAsPossible(arriving?: FairRequest): void {
    while (this.totRequestsWaiting !== 0 && this.totSeatsInUse < this.dispatching.concurrencyLimit && this.dispatchOne(arriving)) {
      // dispatchOne did the work
    }
  }

  /** kube's dispatchLocked: runs the oldest request of the queue with the earliest virtual finish, if its seats are free. */
  private dispatchOne(arriving: FairRequest | undefined): boolean {
    let minFinish = Infinity;
    let minQueue: Queue | undefined;
    let minIndex = -1;
    let sMin = Infinity;
    let sMax = -Infinity;
    let dsMin = Infinity;
    let dsMax = -Infinity;
    const n = this.queues.length;
    const t = this.clock();
    for (let i = 0; i < n; i++) {
      this.robinIndex = (this.robinIndex + 1) % n;
      const queue = this.queues[this.robinIndex];
      const oldest = queue.waiting.peek();
      if (oldest === undefined) continue;
      sMin = Math.min(sMin, queue.nextDispatchR);
      sMax = Math.max(sMax, queue.nextDispatchR);
      const discounted = queue.nextDispatchR - queue.seatsInUse * ESTIMATED_SERVICE_SECONDS;
      dsMin = Math.min(dsMin, discounted);
      dsMax = Math.max(dsMax, discounted);
      const served = queue.executing === 0 ? queue.nextDispatchR : queue.nextDispatchR + queue.overrunWork(t);
      const finish = served + oldest.totalWork;
      if (finish < minFinish) {
        minFinish = finish;
        minQueue = queue;
        minIndex = this.robinIndex;
      }
    }
    const request = minQueue?.waiting.peek();
    if (minQueue === undefined || request === undefined || request.node === undefined) return false;
    if (!this.canAccommodate(request.maxSeats)) {
      request.stats.noAccommodation++;
      return false;
    }
    minQueue.waiting.remove(request.node);
    request.node = undefined;
    request.stopWaiting();
    const waitingSeats = request.maxSeats;
    if (request.estimate.finalSeats > this.dispatching.concurrencyLimit) {
      // As kube: the lingering seats are capped at the limit and held proportionally longer.
      const finalSeats = this.dispatching.concurrencyLimit;
      request.estimate.additionalLatencyMs = (request.finalWork / Math.max(1, finalSeats)) * 1000;
      request.estimate.finalSeats = finalSeats;
    }
    this.robinIndex = minIndex;
    this.stats.dispatch = { r: this.currentR, s: minQueue.nextDispatchR, sMin, sMax, dsMin, dsMax };
    this.totRequestsWaiting--;
    this.totSeatsWaiting -= waitingSeats;
    request.stats.inqueueRequests--;
    request.stats.inqueueSeats -= waitingSeats;
    this.stats.requestsWaiting.add(-1);
    this.startExecuting(request, minQueue);
    minQueue.nextDispatchR += request.totalWork;
    this.boundNextDispatch(minQueue);
    if (request !== arriving) request.notifyDispatched(false);
    return true;
  }

  /**
   * The virtual time of an arrival, where an idle queue starts and below which no queue's served
   * time stays (anti-windup): kube's current R, or the least-served backlogged queue's position if
   * that is behind it (start-time fair queuing's virtual time). R advances as if every seat were in
   * use, while seats stand idle until a wide request fits; the backlogged queues then lag it, and a
   * flow arriving at R would wait behind all of them.
   */
  private arrivalR(): number {
    if (this.totRequestsWaiting === 0) return this.currentR;
    const t = this.clock();
    let least = this.currentR;
    for (const q of this.queues) {
      if (q.waiting.length === 0 || q.nextDispatchR >= least) continue;
      const served = q.executing === 0 ? q.nextDispatchR : q.nextDispatchR + q.overrunWork(t);
      if (served < least) least = served;
    }
    return least;
  }

  /**
   * kube's anti-windup: the virtual time a queue has been served, its executing requests' overrun
   * included, never lags the arrival of its oldest waiting request.
   */
  private boundNextDispatch(queue: Queue): void {
    const oldest = queue.waiting.peek();
    if (oldest === undefined) return;
    const overrun = queue.executing === 0 ? 0 : queue.overrunWork(this.clock());
    if (queue.nextDispatchR + overrun < oldest.arrivalR) queue.nextDispatchR = oldest.arrivalR - overrun;
  }

  /** Queues beyond the configured number go once empty. */
  private removeQueueIfEmpty(queue: Queue): void {
    if (this.queues.length <= this.config.desiredNumQueues || queue.waiting.length > 0 || queue.executing > 0) return;
    if (this.queues[queue.index] !== queue) return;
    this.queues.splice(queue.index, 1);
    for (let i = queue.index; i < this.queues.length; i++) this.queues[i].index = i;
    if (this.robinIndex >= queue.index) this.robinIndex--;
    this.hands.clear();
  }
}
