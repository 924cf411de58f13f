import { internalError, invalid } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import type { Storage } from '../storage/storage.js';
import { AllocationError, ClusterIpAllocator, type ServiceRef } from './cluster-ip-allocator.js';
import { invalidCause } from './cluster-ip-fields.js';
import type { IpRange } from '../config/ip-range.js';
import { NodePortAllocator } from './node-port-allocator.js';
import type { PortRange } from '../config/port-range.js';
import { stringList } from './service-spec.js';

/**
 * The reservations one Service write makes, as kube's allocation transactions: what it reserved is
 * given back when the write fails (`revert`), what it no longer needs is released only once the write
 * is stored (`commit`). A dry-run reserves nothing and answers with kube's dry-run placeholders: the
 * range's network address for a cluster IP, 32769 and up for node ports.
 */

/** The Service address ranges of this server and the allocators over them. */
export class ServiceNetwork {
  readonly clusterIPs: ClusterIpAllocator;
  readonly nodePorts: NodePortAllocator;

  constructor(storage: Storage, clusterIPRange: IpRange, nodePortRange: PortRange) {
    this.clusterIPs = new ClusterIpAllocator(storage, clusterIPRange);
    this.nodePorts = new NodePortAllocator(storage, nodePortRange);
  }
}

/** The reservations of one write: undone if the write fails, its deferred releases done if it succeeds. */
export class Reservations {
  private readonly ips: string[] = [];
  private readonly ports: number[] = [];
  private readonly ipsToRelease: string[] = [];
  private readonly portsToRelease: number[] = [];

  constructor(
    private readonly network: ServiceNetwork,
    private readonly owner: ServiceRef,
    private readonly dryRun: boolean,
  ) {}

  /** Reserves the requested cluster IP, or any free one when `requested` is empty; returns the address. */
  async clusterIP(requested: string, spec: Obj, name: string): Promise<string> {
    const allocator = this.network.clusterIPs;
    try {
      if (requested === '') {
        if (this.dryRun) return allocator.dryRunAddress();
        const ip = await allocator.allocateNext(this.owner);
        this.ips.push(ip);
        return ip;
      }
      if (this.dryRun) allocator.checkDryRun(requested);
      else {
        await allocator.allocate(requested, this.owner);
        this.ips.push(requested);
      }
      return requested;
    } catch (err) {
      if (!(err instanceof AllocationError)) throw err;
      const ips = stringList(spec, 'clusterIPs');
      if (requested === '' && err.reason === 'Full') throw internalError(`failed to allocate a serviceIP for Service ${JSON.stringify(name)}: ${err.message}`);
      const detail = requested === '' ? `failed to allocate IP: ${err.message}` : `failed to allocate IP ${requested}: ${err.message}`;
      throw invalid('Service', '', name, [invalidCause('spec.clusterIPs', ips, detail)]);
    }
  }

  /** Reserves the requested node port (kube's dry-run checks only that nobody holds it). */
  async nodePort(port: number): Promise<void> {
    if (this.dryRun) {
      if (this.ports.includes(port) || (await this.network.nodePorts.isAllocated(port)))
        throw new AllocationError('Allocated', 'provided port is already allocated');
      this.ports.push(port);
      return;
    }
    await this.network.nodePorts.allocate(port, this.owner);
    this.ports.push(port);
  }

  /** Reserves any free node port; a dry-run reports kube's placeholder (one above 32768 or the last one it gave). */
  async nextNodePort(): Promise<number> {
    if (this.dryRun) {
      const port = this.ports.length === 0 ? 32769 : Math.max(...this.ports) + 1;
      this.ports.push(port);
      return port;
    }
    try {
      const port = await this.network.nodePorts.allocateNext(this.owner);
      this.ports.push(port);
      return port;
    } catch (err) {
      if (err instanceof AllocationError) throw internalError(`failed to allocate a nodePort: ${err.message}`);
      throw err;
    }
  }

  releaseIPLater(ip: string): void {
    this.ipsToRelease.push(ip);
  }

  releasePortLater(port: number): void {
    this.portsToRelease.push(port);
  }

  async commit(): Promise<void> {
    if (this.dryRun) return;
    for (const ip of this.ipsToRelease) await this.network.clusterIPs.release(ip);
    for (const port of this.portsToRelease) await this.network.nodePorts.release(port);
  }

  async revert(): Promise<void> {
    if (this.dryRun) return;
    for (const ip of this.ips) await this.network.clusterIPs.release(ip);
    for (const port of this.ports) await this.network.nodePorts.release(port);
  }
}
