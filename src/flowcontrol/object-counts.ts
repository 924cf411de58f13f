import type { Storage } from '../storage/storage.js';

/** How old a count may be before a LIST asks storage again (in the background). */
const REFRESH_AFTER_MS = 10_000;
/** kube's staleTolerationThreshold: an older count is not trusted (the LIST is assumed huge). */
const STALE_AFTER_MS = 3 * 60_000;

/** A count as the list work estimator sees it. */
export type CountAnswer = { kind: 'found'; count: number } | { kind: 'stale' } | { kind: 'unknown' };

/**
 * The object counts the LIST work estimator reads (kube's StorageObjectCountTracker), per storage
 * type, kept from `storage.count`. A count is read in the background when a LIST finds it missing
 * or older than 10 s, one read per type at a time, so the request path never waits on storage; a
 * count not refreshed for 3 minutes (storage unreachable) is stale, as in kube.
 */
export class ObjectCounts {
  private readonly counts = new Map<string, { count: number; at: number }>();
  private readonly refreshing = new Set<string>();

  constructor(
    private readonly storage: Storage,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last known count of `type`, starting a refresh when it is missing or old. */
  get(type: string): CountAnswer {
    const known = this.counts.get(type);
    const now = this.now();
    if (known === undefined || now - known.at > REFRESH_AFTER_MS) this.refresh(type);
    if (known === undefined) return { kind: 'unknown' };
    if (now - known.at > STALE_AFTER_MS) return { kind: 'stale' };
    return { kind: 'found', count: known.count };
  }

  /** Reads the count of `type` now (tests and start-up use it to avoid the first-LIST guess). */
  async refreshNow(type: string): Promise<void> {
    const count = await this.storage.count(type);
    this.counts.set(type, { count, at: this.now() });
  }

  private refresh(type: string): void {
    if (this.refreshing.has(type)) return;
    this.refreshing.add(type);
    this.refreshNow(type)
      .catch(() => undefined) // storage unreachable: the count ages and goes stale, as kube's does
      .finally(() => this.refreshing.delete(type));
  }
}
