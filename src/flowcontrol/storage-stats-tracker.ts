import type { Storage, StorageStats } from '../storage/storage.js';

/** How old stats may be before a LIST asks storage again (in the background). */
const REFRESH_AFTER_MS = 10_000;
/**
 * The same for stats without a size (a Redis type not yet in this worker's list cache): the LIST
 * that costs the most seats for it fills the cache, and the next ones should find the size soon.
 */
const REFRESH_UNSIZED_AFTER_MS = 1_000;
/** kube's staleTolerationThreshold: older stats are not trusted (the LIST is assumed huge). */
const STALE_AFTER_MS = 3 * 60_000;

function refreshAfterMs(stats: StorageStats): number {
  return stats.averageObjectBytes === undefined && stats.objectCount > 0 ? REFRESH_UNSIZED_AFTER_MS : REFRESH_AFTER_MS;
}

/** A type's storage stats as the list work estimator sees them. */
export type StatsAnswer = { kind: 'found'; stats: StorageStats } | { kind: 'stale' } | { kind: 'unknown' };

/** Where the list work estimator reads a type's stats from. */
export interface StatsSource {
  /** The last known stats of a storage type; never waits on storage. */
  get(type: string): StatsAnswer;
}

/**
 * The storage stats the LIST work estimator reads (kube's StorageObjectCountTracker: object count
 * and mean object size), per storage type, kept from `storage.stats`. They are read in the
 * background when a LIST finds them missing or older than 10 s (1 s while a non-empty type's size
 * is unknown), one read per type at a time, so
 * the request path never waits on storage; stats not refreshed for 3 minutes (storage unreachable)
 * are stale, as in kube.
 */
export class StorageStatsTracker implements StatsSource {
  private readonly known = new Map<string, { stats: StorageStats; at: number }>();
  private readonly refreshing = new Set<string>();

  constructor(
    private readonly storage: Pick<Storage, 'stats'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** The last known stats of `type`, starting a refresh when they are missing or old. */
  get(type: string): StatsAnswer {
    const known = this.known.get(type);
    const now = this.now();
    if (known === undefined || now - known.at > refreshAfterMs(known.stats)) this.refresh(type);
    if (known === undefined) return { kind: 'unknown' };
    if (now - known.at > STALE_AFTER_MS) return { kind: 'stale' };
    return { kind: 'found', stats: known.stats };
  }

  /** Reads the stats of `type` now (tests and start-up use it to avoid the first-LIST guess). */
  async refreshNow(type: string): Promise<void> {
    const stats = await this.storage.stats(type);
    this.known.set(type, { stats, at: this.now() });
  }

  private refresh(type: string): void {
    if (this.refreshing.has(type)) return;
    this.refreshing.add(type);
    this.refreshNow(type)
      .catch(() => undefined) // storage unreachable: the stats age and go stale, as kube's do
      .finally(() => this.refreshing.delete(type));
  }
}
