import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { canonicalize, isObject, metadataOf, nowTimestamp, stringField, type Obj } from '../api/object-util.js';
import { logger } from '../logging/logger.js';
import { type Storage } from '../storage/storage.js';
import { StorageError } from '../api/storage-error.js';

/** kube's IdentityLeaseDurationSeconds. */
export const IDENTITY_LEASE_DURATION_SECONDS = 3600;
/** kube's IdentityLeaseRenewIntervalPeriod. */
export const IDENTITY_LEASE_RENEW_MS = 10_000;
/** kube's IdentityLeaseGCPeriod. */
export const IDENTITY_LEASE_GC_MS = 3600_000;

const LEASES = 'leases.coordination.k8s.io';
const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity';
const COMPONENT = 'kube-apiserver';

/** Options of the controller (tests shorten the periods). */
export interface IdentityLeaseOptions {
  /** `address:port` announced in the `kubernetes.io/peer-advertise-address` annotation. */
  peerAddress: string;
  renewMs?: number;
  gcMs?: number;
  hostname?: string;
}

/**
 * kube-apiserver's identity (`apiserver-` + base32 of the SHA-256 of the length-prefixed hostname and
 * component name, as kube's generic server computes it): the same name kube-apiserver has on this host.
 */
export function apiserverIdentity(host: string): string {
  const part = (s: string): Buffer => {
    const bytes = Buffer.from(s, 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const hash = createHash('sha256')
    .update(Buffer.concat([part(host), part(COMPONENT)]))
    .digest()
    .subarray(0, 16);
  return `apiserver-${base32(hash).toLowerCase()}`;
}

/** RFC 4648 base32 without padding. */
function base32(bytes: Buffer): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

/** metav1.MicroTime: RFC 3339 with six fractional digits. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * kube-apiserver's identity lease controller and its garbage collector: keeps the Lease
 * `kube-system/apiserver-<hash>` (labels `apiserver.kubernetes.io/identity: kube-apiserver` and
 * `kubernetes.io/hostname`, the peer address annotation) held by this server and renewed every 10
 * seconds, and deletes identity leases of apiservers that stopped renewing (expired for longer than
 * their duration), checked every hour. Writes are compare-and-swap; a lost race waits for the next tick.
 */
export class ApiserverIdentityLease {
  private readonly name: string;
  private readonly holder: string;
  private readonly host: string;
  private renewTimer: NodeJS.Timeout | undefined;
  private gcTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly storage: Storage,
    private readonly options: IdentityLeaseOptions,
  ) {
    this.host = options.hostname ?? hostname();
    this.name = apiserverIdentity(this.host);
    this.holder = `${this.name}_${randomUUID()}`;
  }

  /** Writes the lease once, then keeps renewing it and collecting expired ones until `stop`. */
  async start(): Promise<void> {
    await this.renew();
    await this.collect();
    const renewMs = this.options.renewMs ?? IDENTITY_LEASE_RENEW_MS;
    const gcMs = this.options.gcMs ?? IDENTITY_LEASE_GC_MS;
    const tick = (): void => {
      this.renewTimer = setTimeout(() => {
        this.renew()
          .catch(report)
          .finally(() => {
            if (!this.stopped) tick();
          });
      }, renewMs);
    };
    const gc = (): void => {
      this.gcTimer = setTimeout(() => {
        this.collect()
          .catch(report)
          .finally(() => {
            if (!this.stopped) gc();
          });
      }, gcMs);
    };
    tick();
    gc();
  }

  /** Stops renewing (the lease stays, and expires, as kube's does on shutdown). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.renewTimer);
    clearTimeout(this.gcTimer);
  }

  private async renew(): Promise<void> {
    const key = `kube-system/${this.name}`;
    const stored = await this.storage.get(LEASES, key);
    const now = Date.now();
    const base: Obj = stored
      ? (JSON.parse(stored.json) as Obj)
      : { metadata: { name: this.name, namespace: 'kube-system', uid: randomUUID(), creationTimestamp: nowTimestamp() } };
    const meta = metadataOf(base);
    meta.labels = { ...(isObject(meta.labels) ? meta.labels : {}), [IDENTITY_LABEL]: COMPONENT, 'kubernetes.io/hostname': this.host };
    meta.annotations = { ...(isObject(meta.annotations) ? meta.annotations : {}), 'kubernetes.io/peer-advertise-address': this.options.peerAddress };
    base.spec = { holderIdentity: this.holder, leaseDurationSeconds: IDENTITY_LEASE_DURATION_SECONDS, renewTime: microTime(now) };
    const lease = canonicalize(base, 'Lease', 'coordination.k8s.io/v1');
    try {
      if (stored) await this.storage.update(LEASES, key, lease, stored.resourceVersion);
      else await this.storage.create(LEASES, key, lease);
    } catch (err) {
      if (!(err instanceof StorageError && (err.code === 'Conflict' || err.code === 'AlreadyExists' || err.code === 'NotFound'))) throw err;
    }
  }

  /** apiserverleasegc: deletes kube-apiserver identity leases whose renewTime plus duration has passed. */
  private async collect(): Promise<void> {
    const listed = await this.storage.list(LEASES, { namespace: 'kube-system' });
    const now = Date.now();
    for (const item of listed.items) {
      const lease = JSON.parse(item.json) as Obj;
      const labels = metadataOf(lease).labels;
      if (!isObject(labels) || labels[IDENTITY_LABEL] !== COMPONENT) continue;
      const spec = isObject(lease.spec) ? lease.spec : {};
      const renewed = Date.parse(stringField(spec, 'renewTime'));
      const duration = typeof spec.leaseDurationSeconds === 'number' ? spec.leaseDurationSeconds : 0;
      if (Number.isFinite(renewed) && renewed + duration * 1000 > now) continue;
      try {
        await this.storage.delete(LEASES, item.key, item.resourceVersion);
      } catch (err) {
        if (!(err instanceof StorageError && (err.code === 'Conflict' || err.code === 'NotFound'))) throw err;
      }
    }
  }
}

function report(err: unknown): void {
  logger.warn('apiserver identity lease', { error: err instanceof Error ? err.message : String(err) });
}
