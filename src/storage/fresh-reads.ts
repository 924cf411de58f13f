interface Waiting<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (err: unknown) => void;
}

interface Slot<T> {
  running: boolean;
  /** Callers that asked while a read was running: they share the next read. */
  queued: Waiting<T> | undefined;
}

function waiting<T>(): Waiting<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Coalesces concurrent reads of a changing value (a type's current resourceVersion) without
 * serving anyone a stale one: every caller gets the result of a read that started after it asked,
 * so the value is at least as new as it was at the call. At most one read per key runs at a time;
 * callers arriving meanwhile share the one read that starts when it succeeds, or fail with it when
 * it fails. A thousand informers starting together then cost two round trips, not a thousand.
 */
export class FreshReads<T> {
  private readonly slots = new Map<string, Slot<T>>();

  constructor(private readonly read: (key: string) => Promise<T>) {}

  get(key: string): Promise<T> {
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = { running: false, queued: undefined };
      this.slots.set(key, slot);
    }
    if (!slot.running) return this.run(key, slot);
    slot.queued ??= waiting<T>();
    return slot.queued.promise;
  }

  private run(key: string, slot: Slot<T>): Promise<T> {
    slot.running = true;
    const result = this.read(key);
    const settle = (failure: { err: unknown } | undefined): void => {
      slot.running = false;
      const queued = slot.queued;
      slot.queued = undefined;
      if (queued === undefined) this.slots.delete(key);
      // A failed read fails its waiters too (the store is unreachable: asking again would only
      // make them wait a second timeout); after a success they get a read of their own.
      else if (failure !== undefined) {
        this.slots.delete(key);
        queued.reject(failure.err);
      } else this.run(key, slot).then(queued.resolve, queued.reject);
    };
    result.then(
      () => settle(undefined),
      (err: unknown) => settle({ err }),
    );
    return result;
  }
}
