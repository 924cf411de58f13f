import type { Obj } from '../api/object-util.js';
import { type Storage } from '../storage/storage.js';
import { AllocationError, type ServiceRef } from './cluster-ip-allocator.js';
import { reserveFreeSlot } from './free-slot-probe.js';
import { holdsPort, staticPortBandSize, type PortRange } from '../config/port-range.js';
import { StorageError } from '../api/storage-error.js';

/**
 * Service node ports. kube-apiserver keeps them in a bitmap that no API serves; Capstan keeps one
 * record per port in use under an internal storage type that no resource path maps to (API types
 * are named `resource[.group]` with a registered group, and `capstan.internal` is none). Creating
 * the record (create-if-absent) is the reservation, so two workers or processes can never hand out
 * the same port; deleting it is the release.
 */

/** Storage type of node port records: never served over the API. */
export const NODE_PORT_TYPE = 'servicenodeports.capstan.internal';

function nodePortRecord(port: number, owner: ServiceRef): Obj {
  return { kind: 'ServiceNodePort', apiVersion: 'capstan.internal/v1', metadata: { name: String(port), resourceVersion: '' }, service: owner };
}

export class NodePortAllocator {
  constructor(
    private readonly storage: Storage,
    readonly range: PortRange,
  ) {}

  /**
   * Reserves the requested `port` for `owner`. Throws AllocationError `NotInRange` (with the valid
   * range, kube's words) or `Allocated` when another Service holds it.
   */
  async allocate(port: number, owner: ServiceRef): Promise<void> {
    if (!holdsPort(this.range, port)) {
      throw new AllocationError('NotInRange', `provided port is not in the valid range. The range of valid ports is ${this.range.text}`);
    }
    if (!(await this.tryCreate(port, owner))) throw new AllocationError('Allocated', 'provided port is already allocated');
  }

  /** Whether some Service holds `port` (what a dry-run checks of a requested port). */
  async isAllocated(port: number): Promise<boolean> {
    if (!Number.isInteger(port)) return false;
    return (await this.storage.get(NODE_PORT_TYPE, String(port))) !== undefined;
  }

  /** Reserves a free port for `owner` (kube's search order) and returns it; `Full` when none is left. */
  async allocateNext(owner: ServiceRef): Promise<number> {
    const slot = await reserveFreeSlot(this.range.size, staticPortBandSize(this.range), (s) => this.tryCreate(this.range.base + s, owner));
    if (slot === undefined) throw new AllocationError('Full', 'range is full');
    return this.range.base + slot;
  }

  /** Releases `port`. Releasing a port nobody holds does nothing. */
  async release(port: number): Promise<void> {
    try {
      await this.storage.delete(NODE_PORT_TYPE, String(port));
    } catch (err) {
      if (!(err instanceof StorageError && err.code === 'NotFound')) throw err;
    }
  }

  private async tryCreate(port: number, owner: ServiceRef): Promise<boolean> {
    try {
      await this.storage.create(NODE_PORT_TYPE, String(port), nodePortRecord(port, owner));
      return true;
    } catch (err) {
      if (err instanceof StorageError && err.code === 'AlreadyExists') return false;
      throw err;
    }
  }
}
