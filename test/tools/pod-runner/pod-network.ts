/**
 * Pod networking for the pod runner: one Linux bridge on the host (default `capstan-pods`,
 * 10.244.0.1/16) and, per pod, a network namespace joined to it by a veth pair, with the pod IP on
 * the namespace's `eth0` and a default route through the bridge. The host reaches every pod IP
 * directly, and two pods may listen on the same port. Needs root (CAP_NET_ADMIN) and `ip`.
 */
import { execFileSync } from 'node:child_process';

/** A pod's network: its namespace name, host-side veth and IP. */
export interface PodNetwork {
  namespace: string;
  hostVeth: string;
  ip: string;
  slot: number;
}

const NAMESPACE_PREFIX = 'capstan-pod-';

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function tryIp(...args: string[]): void {
  try {
    ip(...args);
  } catch {
    // already gone
  }
}

/** The highest slot: 10.244.255.254. */
const LAST_SLOT = 0xfffe;

/**
 * The first slot from `from` on (wrapping around after LAST_SLOT) that is not in `used` and whose IP
 * is no network or broadcast address of its /24; throws when every slot is used.
 */
export function freeSlotFrom(used: ReadonlySet<number>, from: number): number {
  let slot = from < 2 || from > LAST_SLOT ? 2 : from;
  for (let tried = 0; used.has(slot) || (slot & 255) === 0 || (slot & 255) === 255; tried++) {
    if (tried > LAST_SLOT) throw new Error('no free pod IP in 10.244.0.0/16');
    slot = slot >= LAST_SLOT ? 2 : slot + 1;
  }
  return slot;
}

/** The bridge and the pod namespaces on it; slots number the pods' IPs (10.244.x.y). */
export class PodNetworks {
  private readonly used = new Set<number>();
  /** Where the search for a free slot starts. */
  private nextSlot = 2;

  constructor(readonly bridge = 'capstan-pods') {}

  /** The bridge's address: the pods' gateway. */
  get gateway(): string {
    return '10.244.0.1';
  }

  /** Removes namespaces and the bridge a previous run left, then creates the bridge. */
  setUp(): void {
    this.removeLeftovers();
    ip('link', 'add', this.bridge, 'type', 'bridge');
    ip('addr', 'add', `${this.gateway}/16`, 'dev', this.bridge);
    ip('link', 'set', this.bridge, 'up');
  }

  /**
   * Creates a namespace with the next free IP after the last one given, wrapping around the /16, as
   * CNI's host-local IPAM gives pod IPs on a real node: an address is not given again soon after its
   * pod is gone, so nothing still addressed to the old pod reaches the new one.
   */
  create(): PodNetwork {
    const slot = freeSlotFrom(this.used, this.nextSlot);
    this.nextSlot = slot >= LAST_SLOT ? 2 : slot + 1;
    this.used.add(slot);
    const net: PodNetwork = { namespace: NAMESPACE_PREFIX + slot, hostVeth: `cpod${slot}`, ip: `10.244.${slot >> 8}.${slot & 255}`, slot };
    try {
      ip('netns', 'add', net.namespace);
      ip('link', 'add', net.hostVeth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', net.namespace);
      ip('link', 'set', net.hostVeth, 'master', this.bridge, 'up');
      ip('-n', net.namespace, 'addr', 'add', `${net.ip}/16`, 'dev', 'eth0');
      ip('-n', net.namespace, 'link', 'set', 'eth0', 'up');
      ip('-n', net.namespace, 'link', 'set', 'lo', 'up');
      ip('-n', net.namespace, 'route', 'add', 'default', 'via', this.gateway);
    } catch (err) {
      this.remove(net);
      throw err;
    }
    return net;
  }

  /** Deletes a pod's namespace (its veth pair goes with it) and frees its IP. */
  remove(net: PodNetwork): void {
    tryIp('link', 'del', net.hostVeth);
    tryIp('netns', 'del', net.namespace);
    this.used.delete(net.slot);
  }

  /** Gives the host `address` too (on the bridge, so it goes with it): a fake node's address, where its kubelet API listens. */
  addHostAddress(address: string): void {
    ip('addr', 'add', `${address}/32`, 'dev', this.bridge);
  }

  /** Deletes every pod namespace and the bridge. */
  tearDown(): void {
    this.removeLeftovers();
  }

  private removeLeftovers(): void {
    const list = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' });
    for (const line of list.split('\n')) {
      const name = line.split(' ')[0];
      if (name?.startsWith(NAMESPACE_PREFIX)) tryIp('netns', 'del', name);
    }
    tryIp('link', 'del', this.bridge);
    this.used.clear();
  }
}
