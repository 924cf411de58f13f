/**
 * A work queue with kube's workqueue guarantees: an item waiting is queued once however often it is
 * added; an item is never processed by two workers at once (an add while it is processed queues it
 * again for after); a failed item comes back after a per-item exponential backoff.
 */

/** What a worker asks of the queue after processing an item. */
export type WorkOutcome = 'done' | 'retry';

const BASE_DELAY_MS = 5;
const MAX_DELAY_MS = 30_000;

/** A deduplicating, rate-limited queue served by `concurrency` async workers until `signal` aborts. */
export class WorkQueue<T> {
  private readonly queue: T[] = [];
  private readonly queued = new Set<T>();
  private readonly processing = new Set<T>();
  private readonly dirtyWhileProcessing = new Set<T>();
  private readonly failures = new Map<T, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private wake: (() => void) | undefined;
  private running = 0;

  constructor(
    private readonly process: (item: T) => Promise<WorkOutcome>,
    private readonly onError: (item: T, err: unknown) => void,
  ) {}

  /** Queues `item` unless it is already waiting. */
  add(item: T): void {
    if (this.processing.has(item)) {
      this.dirtyWhileProcessing.add(item);
      return;
    }
    if (this.queued.has(item)) return;
    this.queued.add(item);
    this.queue.push(item);
    this.wake?.();
  }

  /** Queues `item` after its backoff (doubling with each consecutive failure). */
  addRateLimited(item: T, signal: AbortSignal): void {
    const n = this.failures.get(item) ?? 0;
    this.failures.set(item, n + 1);
    const delay = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** n);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!signal.aborted) this.add(item);
    }, delay);
    this.timers.add(timer);
  }

  /** Items waiting or in progress (tests and the benchmark watch it drain). */
  get length(): number {
    return this.queue.length + this.processing.size;
  }

  /** Runs `concurrency` workers until `signal` aborts; resolves when they have stopped. */
  async run(concurrency: number, signal: AbortSignal): Promise<void> {
    const stop = (): void => {
      for (const t of this.timers) clearTimeout(t);
      this.timers.clear();
      this.wake?.();
    };
    signal.addEventListener('abort', stop, { once: true });
    await Promise.all(Array.from({ length: concurrency }, () => this.worker(signal)));
    signal.removeEventListener('abort', stop);
  }

  private async worker(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const item = this.queue.shift();
      if (item === undefined) {
        await new Promise<void>((resolve) => {
          const prev = this.wake;
          this.wake = () => {
            this.wake = undefined;
            prev?.();
            resolve();
          };
        });
        continue;
      }
      this.queued.delete(item);
      this.processing.add(item);
      let outcome: WorkOutcome;
      try {
        outcome = await this.process(item);
      } catch (err) {
        this.onError(item, err);
        outcome = 'retry';
      }
      this.processing.delete(item);
      if (outcome === 'done') this.failures.delete(item);
      if (this.dirtyWhileProcessing.delete(item)) this.add(item);
      else if (outcome === 'retry' && !signal.aborted) this.addRateLimited(item, signal);
      // Others may be waiting while this worker was busy: hand them the rest of the queue.
      if (this.queue.length > 0) this.wake?.();
    }
  }
}
