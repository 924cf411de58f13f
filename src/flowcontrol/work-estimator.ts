import type { StatsSource } from './storage-stats-tracker.js';
import type { WorkEstimate } from './queue-set.js';
import type { WatchTracker, TrackedRequest } from './watch-tracker.js';
import { queryInt64, queryOptionalBool } from '../api/request-options.js';
import type { StorageStats } from '../storage/storage.js';

/** kube's DefaultWorkEstimatorConfig and list estimator constants (util/flowcontrol/request). */
const MINIMUM_SEATS = 1;
const MAXIMUM_LIST_SEATS = 10;
const MAXIMUM_MUTATING_SEATS = 10;
const WATCHES_PER_SEAT = 10;
const EVENT_ADDITIONAL_MS = 5;
/** A LIST costs a seat per this many bytes it holds in memory at once. */
const BYTES_PER_SEAT = 100_000;
/** A LIST served from the cache streams its items: it holds at most this much at once. */
const CACHE_STREAMING_MAX_BYTES = 1_000_000;
/** etcd's recommended request limit: the size assumed for objects of unknown size. */
const MAX_OBJECT_BYTES = 1_500_000;
/** kube's infiniteObjectCount, assumed when the stats are stale. */
const INFINITE_OBJECT_COUNT = 1_000_000_000;

/** The request facts estimation reads, besides the query. */
export interface EstimatedRequest extends TrackedRequest {
  subresource: string;
  /** Storage type of the resource; undefined when the resource is not served (no stats exist). */
  storageType: string | undefined;
  /** The request's query string. */
  query: URLSearchParams;
}

/** The list options the estimate reads, converted as kube converts them; undefined when one does not convert. */
interface EstimatedListOptions {
  limit: number;
  resourceVersion: string;
  resourceVersionMatch: string;
  continueToken: string;
  selects: boolean;
  sendInitialEvents: boolean;
}

function listOptionsOf(q: URLSearchParams): EstimatedListOptions | undefined {
  try {
    // timeoutSeconds is converted too: a value that does not convert fails the whole conversion.
    queryInt64(q, 'timeoutSeconds');
    return {
      limit: queryInt64(q, 'limit') ?? 0,
      resourceVersion: q.get('resourceVersion') ?? '',
      resourceVersionMatch: q.get('resourceVersionMatch') ?? '',
      continueToken: q.get('continue') ?? '',
      selects: (q.get('fieldSelector') ?? '') !== '' || (q.get('labelSelector') ?? '') !== '',
      sendInitialEvents: queryOptionalBool(q, 'sendInitialEvents') ?? false,
    };
  } catch {
    return undefined;
  }
}

/** kube's ShouldDelegateListMeta for a cache without snapshots but with consistent reads: whether the LIST reads storage. */
function listsFromStorage(o: EstimatedListOptions): boolean {
  switch (o.resourceVersionMatch) {
    case 'NotOlderThan':
      return false;
    case '':
      if (o.continueToken !== '') return true;
      return o.limit > 0 && o.resourceVersion !== '' && o.resourceVersion !== '0';
    default:
      // Exact, and values validation refuses later: storage.
      return true;
  }
}

/**
 * kube 1.36's LIST seats by size (`SizeBasedListCostEstimate`, beta and on): a seat per 100 kB
 * the LIST holds in memory at once, from the type's object count and mean object size. A LIST of
 * one name holds one object; from the cache it holds the objects up to its limit, at most 1 MB
 * (the cache streams); from storage its limit's worth, or half the type when a selector filters. An
 * unknown size of a non-empty type counts as 1.5 MB per object.
 */
export function listSeatsBySize(stats: StorageStats, o: { limit: number; selects: boolean }, fromCache: boolean, single: boolean): number {
  const average =
    stats.averageObjectBytes === undefined || stats.averageObjectBytes <= 0 ? (stats.objectCount !== 0 ? MAX_OBJECT_BYTES : 0) : stats.averageObjectBytes;
  const limited = o.limit > 0 && o.limit < stats.objectCount ? o.limit : stats.objectCount;
  let objects: number;
  if (single) objects = 1;
  else if (fromCache) objects = limited;
  else if (o.selects) objects = Math.max(limited, Math.floor(stats.objectCount / 2));
  else objects = limited;
  let bytes = objects * average;
  if (fromCache) bytes = Math.min(bytes, CACHE_STREAMING_MAX_BYTES);
  return Math.ceil(bytes / BYTES_PER_SEAT);
}

/**
 * kube's request work estimator (util/flowcontrol/request): a LIST costs its seats by size (see
 * listSeatsBySize, 1 to 10); a WATCH that starts with the current state (no resourceVersion, "0", or
 * sendInitialEvents) costs as a LIST of it while it initialises; a create, update, patch or delete
 * holds one seat while it runs and, when 10 or more watches will see the change, a seat per 10
 * watches for 5 ms per seat afterwards; everything else one seat. `maxSeats(level)` caps the
 * estimate per level (15% of its seats, and no more than a hand's share).
 *
 * The sizes are the stored JSON's (kube's are the etcd values': protobuf for built-in types), kept
 * by the store where this process holds every object (memory; Redis behind its list cache), so a
 * LIST of a Redis type not yet cached here counts 1.5 MB an object, as kube does without a watch
 * cache: that LIST fills the cache with a read of the whole type.
 */
export class WorkEstimator {
  constructor(
    private readonly stats: StatsSource,
    private readonly watches: WatchTracker,
  ) {}

  estimate(request: EstimatedRequest, levelMaxSeats: number, observeWatchCount: (count: number) => void): WorkEstimate {
    switch (request.verb) {
      case 'list':
      case 'watch':
        return this.listEstimate(request, levelMaxSeats);
      case 'create':
      case 'update':
      case 'patch':
      case 'delete':
        return this.mutatingEstimate(request, levelMaxSeats, observeWatchCount);
      default:
        return { initialSeats: MINIMUM_SEATS, finalSeats: 0, additionalLatencyMs: 0 };
    }
  }

  private listEstimate(request: EstimatedRequest, levelMaxSeats: number): WorkEstimate {
    const maxSeats = levelMaxSeats === 0 || levelMaxSeats > MAXIMUM_LIST_SEATS ? MAXIMUM_LIST_SEATS : levelMaxSeats;
    // Options that do not convert fail validation later; kube charges them the most meanwhile.
    const options = listOptionsOf(request.query);
    if (options === undefined) return seats(maxSeats);
    if (request.verb === 'watch') {
      const legacy = options.resourceVersion === '' || options.resourceVersion === '0';
      if (!options.sendInitialEvents && !legacy) return seats(MINIMUM_SEATS);
    }
    const fromCache = request.verb === 'watch' || !listsFromStorage(options);
    // An unserved type (an aggregated API's) costs this server little: kube's not-found answer.
    if (request.storageType === undefined) return seats(MINIMUM_SEATS);
    const answer = this.stats.get(request.storageType);
    if (answer.kind === 'unknown') return seats(MINIMUM_SEATS);
    const stats: StorageStats = answer.kind === 'stale' ? { objectCount: INFINITE_OBJECT_COUNT, averageObjectBytes: MAX_OBJECT_BYTES } : answer.stats;
    const estimated = listSeatsBySize(stats, options, fromCache, request.name !== '');
    return seats(Math.min(maxSeats, Math.max(MINIMUM_SEATS, estimated)));
  }

  private mutatingEstimate(request: EstimatedRequest, levelMaxSeats: number, observeWatchCount: (count: number) => void): WorkEstimate {
    const maxSeats = levelMaxSeats === 0 || levelMaxSeats > MAXIMUM_MUTATING_SEATS ? MAXIMUM_MUTATING_SEATS : levelMaxSeats;
    // A TokenRequest changes nothing anybody watches.
    if (request.resource === 'serviceaccounts' && request.subresource === 'token') return seats(MINIMUM_SEATS);
    const watchCount = this.watches.interestedWatches(request);
    observeWatchCount(watchCount);
    if (watchCount < WATCHES_PER_SEAT) return seats(1);
    const finalSeats = Math.ceil(watchCount / WATCHES_PER_SEAT);
    const finalWorkMs = finalSeats * EVENT_ADDITIONAL_MS;
    const capped = Math.min(finalSeats, maxSeats);
    return { initialSeats: 1, finalSeats: capped, additionalLatencyMs: finalWorkMs / capped };
  }
}

function seats(n: number): WorkEstimate {
  return { initialSeats: n, finalSeats: 0, additionalLatencyMs: 0 };
}
