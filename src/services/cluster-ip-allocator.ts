import { randomUUID } from 'node:crypto';
import { canonicalize, nowTimestamp, type Obj } from '../api/object-util.js';
import { storageTypeOf } from '../api/resource-info.js';
import { type Storage } from '../storage/storage.js';
import { reserveFreeSlot } from './free-slot-probe.js';
import {
  firstServiceAddress,
  formatIPv4,
  holdsServiceAddress,
  ipv4Problem,
  lastServiceAddress,
  parseIPv4,
  staticBandSize,
  type IpRange,
} from '../config/ip-range.js';
import { StorageError } from '../api/storage-error.js';

/**
 * Service cluster IPs, reserved as kube-apiserver 1.36's MultiCIDRServiceAllocator reserves them: one
 * `networking.k8s.io/v1` IPAddress object per address in use, named by the address and pointing at
 * its Service. Creating that object (create-if-absent in storage) is the reservation itself, so two
 * workers or processes can never hand out the same address; deleting it is the release.
 */

/** Storage type of IPAddress objects. */
export const IP_ADDRESS_TYPE = storageTypeOf({ group: 'networking.k8s.io', resource: 'ipaddresses' });

/** The manager kube labels its IPAddress objects with. */
const MANAGED_BY = 'ipallocator.k8s.io';

/** The Service an address belongs to. */
export interface ServiceRef {
  namespace: string;
  name: string;
}

/** Why an address could not be reserved, in kube's words (the allocators' error texts). */
export class AllocationError extends Error {
  constructor(
    readonly reason: 'NotInRange' | 'Allocated' | 'Full',
    message: string,
  ) {
    super(message);
    this.name = 'AllocationError';
  }
}

/** The IPAddress object kube stores for `ip` held by `owner`. */
export function ipAddressObject(ip: string, owner: ServiceRef): Obj {
  return canonicalize(
    {
      metadata: {
        name: ip,
        uid: randomUUID(),
        creationTimestamp: nowTimestamp(),
        labels: { 'ipaddress.kubernetes.io/ip-family': 'IPv4', 'ipaddress.kubernetes.io/managed-by': MANAGED_BY },
      },
      spec: { parentRef: { resource: 'services', namespace: owner.namespace, name: owner.name } },
    },
    'IPAddress',
    'networking.k8s.io/v1',
  );
}

export class ClusterIpAllocator {
  constructor(
    private readonly storage: Storage,
    readonly range: IpRange,
  ) {}

  /**
   * Reserves the requested `ip` for `owner`. Throws AllocationError `NotInRange` when the address is
   * not one of the range's Service addresses, `Allocated` when an IPAddress object already holds it.
   */
  async allocate(ip: string, owner: ServiceRef): Promise<void> {
    this.checkInRange(ip);
    if (!(await this.tryCreate(ip, owner))) throw new AllocationError('Allocated', 'provided IP is already allocated');
  }

  /**
   * The check a dry-run makes of a requested address: only that it lies in the range (kube's dry-run
   * allocator looks no further, so an address already held passes).
   */
  checkDryRun(ip: string): void {
    if (!this.holds(ip)) {
      throw new AllocationError('NotInRange', `the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${this.range.text}`);
    }
  }

  /** Reserves a free address for `owner` (kube's search order) and returns it; `Full` when none is left. */
  async allocateNext(owner: ServiceRef): Promise<string> {
    const first = firstServiceAddress(this.range);
    const size = lastServiceAddress(this.range) - first + 1;
    const slot = await reserveFreeSlot(size, staticBandSize(this.range), (s) => this.tryCreate(formatIPv4(first + s), owner));
    if (slot === undefined) throw new AllocationError('Full', 'range is full');
    return formatIPv4(first + slot);
  }

  /** The address a dry-run reports for a Service without one: the range's network address, as kube's. */
  dryRunAddress(): string {
    return formatIPv4(this.range.network);
  }

  /** Releases `ip`: deletes its IPAddress object. Releasing an address nobody holds does nothing. */
  async release(ip: string): Promise<void> {
    try {
      await this.storage.delete(IP_ADDRESS_TYPE, ip);
    } catch (err) {
      if (!(err instanceof StorageError && err.code === 'NotFound')) throw err;
    }
  }

  /** Whether `ip` is an IPv4 address the range may hand out (anything else, even malformed, is not). */
  private holds(ip: string): boolean {
    return ipv4Problem(ip) === undefined && holdsServiceAddress(this.range, parseIPv4(ip));
  }

  private checkInRange(ip: string): void {
    if (!this.holds(ip)) {
      // kube 1.36 finds no ServiceCIDR holding the address.
      throw new AllocationError('NotInRange', 'the provided network does not match the current range');
    }
  }

  private async tryCreate(ip: string, owner: ServiceRef): Promise<boolean> {
    try {
      await this.storage.create(IP_ADDRESS_TYPE, ip, ipAddressObject(ip, owner));
      return true;
    } catch (err) {
      if (err instanceof StorageError && err.code === 'AlreadyExists') return false;
      throw err;
    }
  }
}
