import type { ChangeEvent } from './storage.js';

/**
 * A per-change memo that keeps its values only for the most recent `capacity` changes it was given.
 * Watch fan-out parses and encodes each change once and every watcher reads the result within
 * moments of the write; a change stays in the history for minutes (--watch-cache-history) and a memo
 * kept as long would hold a parsed object and its frames per write: at 1,000 writes per second,
 * gigabytes. A watcher that reads an older change (a resumed or lagging watch) computes it again,
 * with the same result.
 */
export class RecentEventCache<V> {
  private readonly values = new WeakMap<ChangeEvent, V>();
  private readonly order: (ChangeEvent | undefined)[];
  private next = 0;

  constructor(private readonly capacity: number) {
    this.order = new Array<ChangeEvent | undefined>(capacity);
  }

  get(event: ChangeEvent): V | undefined {
    return this.values.get(event);
  }

  /** Remembers `value` for `event`, forgetting the change remembered `capacity` changes ago. */
  set(event: ChangeEvent, value: V): void {
    if (!this.values.has(event)) {
      const evicted = this.order[this.next];
      if (evicted !== undefined) this.values.delete(evicted);
      this.order[this.next] = event;
      this.next = (this.next + 1) % this.capacity;
    }
    this.values.set(event, value);
  }
}
