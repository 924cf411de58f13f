import type { ChangeEvent, DispatchClock, WatchTrigger } from './storage.js';

interface TriggerIndex<T> {
  readonly valuesOf: WatchTrigger['valuesOf'];
  readonly byValue: Map<string, Set<T>>;
  /** Entries of this index: a change whose values are unknown goes to every one of them. */
  readonly all: Set<T>;
}

/**
 * The live listeners of one storage type, each handed the changes it may care about. Listeners
 * without a trigger get every change; a listener with one (kube's Cacher triggers: a kubelet's
 * `spec.nodeName=<node>` pod watch) gets only the changes whose trigger values include its own, so
 * a change costs nothing to the thousands of watches it does not concern. `clock` tells a
 * triggered listener how far it has been handed the type's changes, the withheld ones included.
 */
export class ListenerSet<T> {
  private readonly plain = new Set<T>();
  private readonly indexes = new Map<string, TriggerIndex<T>>();
  private readonly triggerOf = new Map<T, WatchTrigger>();
  private readonly dispatched: { resourceVersion: string };

  constructor(resourceVersion: string) {
    this.dispatched = { resourceVersion };
  }

  /** The version of the last change handed out (through `dispatch`, or set with `passed`). */
  get clock(): DispatchClock {
    return this.dispatched;
  }

  get size(): number {
    return this.plain.size + this.triggerOf.size;
  }

  add(entry: T, trigger?: WatchTrigger): void {
    if (trigger === undefined) {
      this.plain.add(entry);
      return;
    }
    let index = this.indexes.get(trigger.index);
    if (index === undefined) {
      index = { valuesOf: trigger.valuesOf, byValue: new Map(), all: new Set() };
      this.indexes.set(trigger.index, index);
    }
    let bucket = index.byValue.get(trigger.value);
    if (bucket === undefined) {
      bucket = new Set();
      index.byValue.set(trigger.value, bucket);
    }
    bucket.add(entry);
    index.all.add(entry);
    this.triggerOf.set(entry, trigger);
  }

  delete(entry: T): void {
    if (this.plain.delete(entry)) return;
    const trigger = this.triggerOf.get(entry);
    if (trigger === undefined) return;
    this.triggerOf.delete(entry);
    const index = this.indexes.get(trigger.index);
    if (index === undefined) return;
    index.all.delete(entry);
    const bucket = index.byValue.get(trigger.value);
    bucket?.delete(entry);
    if (bucket?.size === 0) index.byValue.delete(trigger.value);
    if (index.all.size === 0) this.indexes.delete(trigger.index);
  }

  clear(): void {
    this.plain.clear();
    this.indexes.clear();
    this.triggerOf.clear();
  }

  /** Every entry, triggered or not (a copy: callers may delete while they go). */
  entries(): T[] {
    return [...this.plain, ...this.triggerOf.keys()];
  }

  /** Calls `handOut` for every entry `event` may concern, each once, then moves the clock to it. */
  dispatch(event: ChangeEvent, handOut: (entry: T) => void): void {
    for (const entry of this.plain) handOut(entry);
    for (const index of this.indexes.values()) {
      const values = index.valuesOf(event);
      if (values === undefined) {
        for (const entry of index.all) handOut(entry);
        continue;
      }
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        if (values.indexOf(value) < i) continue;
        const bucket = index.byValue.get(value);
        if (bucket !== undefined) for (const entry of bucket) handOut(entry);
      }
    }
    this.passed(event.resourceVersion);
  }

  /** Records that every change up to `resourceVersion` has been handed out. */
  passed(resourceVersion: string): void {
    this.dispatched.resourceVersion = resourceVersion;
  }
}
