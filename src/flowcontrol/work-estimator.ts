import type { ObjectCounts } from './object-counts.js';
import type { WorkEstimate } from './queue-set.js';
import type { WatchTracker, TrackedRequest } from './watch-tracker.js';

/** kube's DefaultWorkEstimatorConfig, with the count-based LIST estimate. */
const MINIMUM_SEATS = 1;
const MAXIMUM_LIST_SEATS = 10;
const MAXIMUM_MUTATING_SEATS = 10;
const OBJECTS_PER_SEAT = 100;
const WATCHES_PER_SEAT = 10;
const EVENT_ADDITIONAL_MS = 5;
/** kube's infiniteObjectCount, assumed when the count is stale. */
const INFINITE_OBJECT_COUNT = 1_000_000_000;

/** The request facts estimation reads, besides the query. */
export interface EstimatedRequest extends TrackedRequest {
  subresource: string;
  /** Storage type of the resource; undefined when the resource is not served (no count exists). */
  storageType: string | undefined;
  /** The request's query string. */
  query: URLSearchParams;
}

/**
 * kube's request work estimator (util/flowcontrol/request): a LIST costs a seat per 100 objects it
 * will go through (1 to 10); a WATCH that starts with the current state (no resourceVersion, "0", or
 * sendInitialEvents) costs as a LIST of it while it initialises; a create, update, patch or delete
 * holds one seat while it runs and, when 10 or more watches will see the change, a seat per 10
 * watches for 5 ms per seat afterwards; everything else one seat. `maxSeats(level)` caps the
 * estimate per level (15% of its seats, and no more than a hand's share).
 *
 * kube 1.36 estimates LISTs by bytes (objects × average size, `SizeBasedListCostEstimate`); Capstan's
 * storage counts objects but not bytes, so the estimate is kube's count-based one. Both give 10
 * seats to large lists served from a cache, which is where Capstan serves every list from.
 */
export class WorkEstimator {
  constructor(
    private readonly counts: ObjectCounts,
    private readonly watches: WatchTracker,
  ) {}

  estimate(request: EstimatedRequest, levelMaxSeats: number, observeWatchCount: (count: number) => void): WorkEstimate {
    switch (request.verb) {
      case 'list':
        return this.listEstimate(request, levelMaxSeats);
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
    const q = request.query;
    const rv = q.get('resourceVersion') ?? '';
    if (request.verb === 'watch') {
      const initialEvents = q.get('sendInitialEvents') === 'true';
      if (!initialEvents && rv !== '' && rv !== '0') return seats(MINIMUM_SEATS);
    }
    const limitText = q.get('limit');
    const limit = limitText !== null && /^\d+$/.test(limitText) ? Number(limitText) : 0;
    const match = q.get('resourceVersionMatch') ?? '';
    // kube's ShouldDelegateListMeta with ConsistentListFromCache: these LISTs are read from etcd.
    const fromStorage =
      match === 'Exact' ||
      (match !== '' && match !== 'NotOlderThan') ||
      (match === '' && ((q.get('continue') ?? '') !== '' || (limit > 0 && rv !== '' && rv !== '0')));
    const fromCache = request.verb === 'watch' || !fromStorage;
    if (request.storageType === undefined) return seats(MINIMUM_SEATS);
    const answer = this.counts.get(request.storageType);
    if (answer.kind === 'unknown') return seats(MINIMUM_SEATS);
    const stored = answer.kind === 'stale' ? INFINITE_OBJECT_COUNT : answer.count;
    const limited = limit > 0 && limit < stored ? limit : stored;
    let objects: number;
    if (request.name !== '') objects = 1;
    else if (fromCache) objects = stored;
    else if ((q.get('fieldSelector') ?? '') !== '' || (q.get('labelSelector') ?? '') !== '') objects = stored + limited;
    else objects = 2 * limited;
    return seats(Math.min(maxSeats, Math.max(MINIMUM_SEATS, Math.ceil(objects / OBJECTS_PER_SEAT))));
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
