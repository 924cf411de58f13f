/**
 * Leader election over a coordination.k8s.io/v1 Lease, as client-go's leaderelection package does:
 * the holder renews `renewTime` every retry period; a candidate takes the lease over once it has seen
 * the same record unchanged for `leaseDurationSeconds` (local observation time, so clock skew between
 * hosts does not matter); a leader that cannot renew within the renew deadline steps down. Every
 * write is a compare-and-swap on the Lease's resourceVersion, so at most one holder is recorded.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { canonicalize, isObject, objectKey, type Obj } from '../api/object-util.js';
import { logger } from '../logging/logger.js';
import { type Storage, type StoredObject } from '../storage/storage.js';
import { StorageError } from '../api/storage-error.js';

/** Storage type of Leases. */
const LEASE_TYPE = 'leases.coordination.k8s.io';

/** Timing of an election (client-go's defaults for kube-controller-manager). */
export interface ElectionTiming {
  leaseDurationSeconds: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** kube-controller-manager's defaults: lease 15 s, renew deadline 10 s, retry every 2 s. */
export const DEFAULT_ELECTION_TIMING: ElectionTiming = { leaseDurationSeconds: 15, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** Callbacks of an election. `onStartedLeading`'s signal aborts when leadership is lost or the election stops. */
export interface ElectionCallbacks {
  onStartedLeading(signal: AbortSignal): void;
  onStoppedLeading(): void;
}

/** A unique identity of this process as a candidate: `hostname_uuid`, as kube's components use. */
export function candidateIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

/** metav1.MicroTime: RFC 3339 with microseconds. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The Lease spec fields the election reads. */
interface LeaseRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions: number;
}

function recordOf(obj: Obj): LeaseRecord {
  const spec = isObject(obj.spec) ? obj.spec : {};
  return {
    holderIdentity: typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '',
    leaseDurationSeconds: typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : 0,
    acquireTime: typeof spec.acquireTime === 'string' ? spec.acquireTime : undefined,
    renewTime: typeof spec.renewTime === 'string' ? spec.renewTime : undefined,
    leaseTransitions: typeof spec.leaseTransitions === 'number' ? spec.leaseTransitions : 0,
  };
}

/** One candidate in the election for `namespace/name`; `run` until its signal aborts. */
export class LeaderElector {
  private observedRaw = '';
  private observedAt = 0;
  private leading = false;
  private lastRenew = 0;
  private attempted: (leading: boolean) => void = () => undefined;
  /** Settles after the first attempt to acquire the lease: true when it was acquired. */
  readonly firstAttempt = new Promise<boolean>((resolve) => {
    this.attempted = resolve;
  });

  constructor(
    private readonly storage: Storage,
    readonly namespace: string,
    readonly name: string,
    readonly identity: string,
    private readonly callbacks: ElectionCallbacks,
    private readonly timing: ElectionTiming = DEFAULT_ELECTION_TIMING,
  ) {}

  /** Whether this candidate holds the lease (as of its last successful write). */
  isLeader(): boolean {
    return this.leading;
  }

  /**
   * Tries to acquire or renew every retry period until `signal` aborts; on abort a leader releases
   * the lease (holder cleared, duration 1 s) so another candidate takes over at once.
   */
  async run(signal: AbortSignal): Promise<void> {
    let leaderAbort: AbortController | undefined;
    while (!signal.aborted) {
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew();
      } catch (err) {
        logger.warn('leader election: cannot read or write the lease', {
          lease: `${this.namespace}/${this.name}`,
          error: err instanceof Error ? err.message : String(err),
        });
      }
      const now = Date.now();
      if (ok) {
        this.lastRenew = now;
        if (!this.leading) {
          this.leading = true;
          leaderAbort = new AbortController();
          logger.info('leader election: acquired the lease', { lease: `${this.namespace}/${this.name}`, identity: this.identity });
          this.callbacks.onStartedLeading(leaderAbort.signal);
        }
      } else if (this.leading && now - this.lastRenew >= this.timing.renewDeadlineMs) {
        this.stepDown(leaderAbort);
        leaderAbort = undefined;
      } else if (this.leading && !ok && this.observedRaw !== '' && this.lastHolder() !== this.identity) {
        // Someone else holds it now: stop at once.
        this.stepDown(leaderAbort);
        leaderAbort = undefined;
      }
      this.attempted(this.leading);
      await sleep(this.timing.retryPeriodMs, signal);
    }
    this.attempted(false);
    if (this.leading) {
      this.stepDown(leaderAbort);
      await this.release().catch((err: unknown) =>
        logger.warn('leader election: cannot release the lease', { error: err instanceof Error ? err.message : String(err) }),
      );
    }
  }

  /** The holder in the last observed spec (observedRaw is the spec alone, not the Lease). */
  private lastHolder(): string {
    try {
      const spec: unknown = JSON.parse(this.observedRaw);
      return isObject(spec) && typeof spec.holderIdentity === 'string' ? spec.holderIdentity : '';
    } catch {
      return '';
    }
  }

  private stepDown(leaderAbort: AbortController | undefined): void {
    this.leading = false;
    logger.info('leader election: lost the lease', { lease: `${this.namespace}/${this.name}`, identity: this.identity });
    leaderAbort?.abort();
    this.callbacks.onStoppedLeading();
  }

  private key(): string {
    return objectKey(this.namespace, this.name);
  }

  /** One attempt: create, renew, or take over an expired lease. True when this candidate holds it. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = Date.now();
    const stored = await this.storage.get(LEASE_TYPE, this.key());
    if (stored === undefined) {
      const lease = canonicalize(
        {
          metadata: { name: this.name, namespace: this.namespace, uid: randomUUID(), creationTimestamp: microTime(now).replace(/\.\d+Z$/, 'Z') },
          spec: {
            holderIdentity: this.identity,
            leaseDurationSeconds: this.timing.leaseDurationSeconds,
            acquireTime: microTime(now),
            renewTime: microTime(now),
            leaseTransitions: 0,
          },
        },
        'Lease',
        'coordination.k8s.io/v1',
      );
      try {
        const created = await this.storage.create(LEASE_TYPE, this.key(), lease);
        this.observe(created, now);
        return true;
      } catch (err) {
        if (err instanceof StorageError && err.code === 'AlreadyExists') return false;
        throw err;
      }
    }
    const obj = JSON.parse(stored.json) as Obj;
    const record = recordOf(obj);
    const rawSpec = JSON.stringify(obj.spec ?? null);
    if (rawSpec !== this.observedRaw) {
      this.observedRaw = rawSpec;
      this.observedAt = now;
    }
    const held = record.holderIdentity !== '' && record.holderIdentity !== this.identity;
    if (held && this.observedAt + record.leaseDurationSeconds * 1000 > now) return false;
    const spec: Obj = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.timing.leaseDurationSeconds,
      acquireTime: record.holderIdentity === this.identity && record.acquireTime !== undefined ? record.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: record.holderIdentity === this.identity ? record.leaseTransitions : record.leaseTransitions + 1,
    };
    obj.spec = { ...(isObject(obj.spec) ? obj.spec : {}), ...spec };
    try {
      const updated = await this.storage.update(LEASE_TYPE, this.key(), obj, stored.resourceVersion);
      this.observe(updated, now);
      return true;
    } catch (err) {
      if (err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound')) return false;
      throw err;
    }
  }

  private observe(stored: StoredObject, now: number): void {
    this.observedRaw = JSON.stringify((JSON.parse(stored.json) as Obj).spec ?? null);
    this.observedAt = now;
  }

  /** client-go's ReleaseOnCancel: clear the holder so the next candidate does not wait for expiry. */
  private async release(): Promise<void> {
    const stored = await this.storage.get(LEASE_TYPE, this.key());
    if (stored === undefined) return;
    const obj = JSON.parse(stored.json) as Obj;
    const record = recordOf(obj);
    if (record.holderIdentity !== this.identity) return;
    const now = microTime(Date.now());
    obj.spec = { ...(isObject(obj.spec) ? obj.spec : {}), holderIdentity: '', leaseDurationSeconds: 1, renewTime: now, acquireTime: now };
    try {
      await this.storage.update(LEASE_TYPE, this.key(), obj, stored.resourceVersion);
    } catch (err) {
      if (!(err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound'))) throw err;
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
