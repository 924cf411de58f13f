/**
 * When to restart a crashed worker: exponential backoff per worker slot (reset once a worker has
 * stayed up for `stableAfterMs`), and a cluster-wide crash budget: more than `maxCrashes` crashes
 * within `windowMs` means something outside the worker is wrong (bad flags, storage unreachable,
 * a crash on every request) and restarting only hides it, so the primary gives up.
 */
export interface RestartPolicyOptions {
  baseDelayMs?: number;
  maxDelayMs?: number;
  maxCrashes?: number;
  windowMs?: number;
  stableAfterMs?: number;
}

/** What to do after a worker exits unexpectedly. */
export type RestartDecision = { action: 'restart'; delayMs: number; consecutive: number } | { action: 'give-up'; crashesInWindow: number; windowMs: number };

export class RestartPolicy {
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxCrashes: number;
  private readonly windowMs: number;
  private readonly stableAfterMs: number;
  private readonly consecutive = new Map<number, number>();
  private crashTimes: number[] = [];

  constructor(options: RestartPolicyOptions = {}) {
    this.baseDelayMs = options.baseDelayMs ?? 100;
    this.maxDelayMs = options.maxDelayMs ?? 30_000;
    this.maxCrashes = options.maxCrashes ?? 10;
    this.windowMs = options.windowMs ?? 60_000;
    this.stableAfterMs = options.stableAfterMs ?? 30_000;
  }

  /** Records a crash of slot `index` whose worker ran for `uptimeMs`, at time `now` (ms). */
  onCrash(index: number, uptimeMs: number, now: number): RestartDecision {
    this.crashTimes = this.crashTimes.filter((t) => now - t < this.windowMs);
    this.crashTimes.push(now);
    if (this.crashTimes.length > this.maxCrashes) {
      return { action: 'give-up', crashesInWindow: this.crashTimes.length, windowMs: this.windowMs };
    }
    const previous = uptimeMs >= this.stableAfterMs ? 0 : (this.consecutive.get(index) ?? 0);
    const consecutive = previous + 1;
    this.consecutive.set(index, consecutive);
    const delayMs = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (consecutive - 1));
    return { action: 'restart', delayMs, consecutive };
  }
}
