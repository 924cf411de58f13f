/** kube's maxRetryAfter (seconds). */
const MAX_RETRY_AFTER = 32;

class LevelDrops {
  private history: Array<{ second: number; count: number }> = [];
  private currentSecond = 0;
  private currentCount = 0;
  retryAfter = 1;
  private retryAfterUpdated = 0;

  record(second: number): void {
    if (second === this.currentSecond) {
      this.currentCount++;
      return;
    }
    this.remember(this.currentSecond, this.currentCount);
    this.currentSecond = second;
    this.currentCount = 1;
    this.adjust(second);
  }

  private remember(second: number, count: number): void {
    this.history.push({ second, count });
    const keep = Math.min(2 * this.retryAfter, MAX_RETRY_AFTER);
    let start = 0;
    while (start < this.history.length && second - this.history[start].second > keep) start++;
    if (start > 0) this.history = this.history.slice(start);
  }

  private adjust(second: number): void {
    let dropped = 0;
    for (let i = this.history.length - 1; i >= 0; i--) {
      if (second - this.history[i].second > this.retryAfter) break;
      if (this.history[i].second < second) dropped += this.history[i].count;
    }
    if (second - this.retryAfterUpdated >= this.retryAfter && dropped >= 3 * this.retryAfter) {
      this.retryAfter = Math.min(this.retryAfter * 2, MAX_RETRY_AFTER);
      this.retryAfterUpdated = second;
      return;
    }
    if (dropped < this.retryAfter && this.retryAfter > 1) this.retryAfter--;
  }
}

/**
 * kube's droppedRequestsTracker: the `Retry-After` a 429 of each priority level carries. It starts
 * at 1 s, doubles (up to 32 s) while the level sheds at least 3 requests per second of it, and
 * decreases by a second each time a second with a rejection follows a quieter stretch.
 */
export class RetryAfterTracker {
  private readonly levels = new Map<string, LevelDrops>();

  constructor(private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000)) {}

  /** Notes a request of `level` answered 429. */
  recordDropped(level: string): void {
    let drops = this.levels.get(level);
    if (drops === undefined) {
      drops = new LevelDrops();
      this.levels.set(level, drops);
    }
    drops.record(this.nowSeconds());
  }

  /** Seconds a client rejected at `level` should wait. */
  retryAfter(level: string): number {
    return this.levels.get(level)?.retryAfter ?? 1;
  }
}
