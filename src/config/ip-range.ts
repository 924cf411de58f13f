/**
 * IPv4 addresses and CIDR ranges as Service cluster IPs use them: parsing (strict dotted quads, as
 * kube-apiserver 1.36 validates with StrictIPCIDRValidation), formatting, and the addresses of a range
 * that may be handed out. Addresses are held as unsigned 32-bit numbers.
 */

/** An IPv4 CIDR range, e.g. 10.96.0.0/12. */
export interface IpRange {
  /** The network address (host bits zero). */
  readonly network: number;
  readonly prefixLength: number;
  /** Canonical `a.b.c.d/n` text, as kube prints the range in messages. */
  readonly text: string;
}

const DOTTED_QUAD = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** Why `text` is not a valid IPv4 address (kube's words), or undefined when it is one. */
export function ipv4Problem(text: string): string | undefined {
  const m = DOTTED_QUAD.exec(text);
  if (m === null || m.slice(1).some((part) => Number(part) > 255)) return 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
  if (m.slice(1).some((part) => part.length > 1 && part.startsWith('0'))) return 'must not have leading 0s';
  return undefined;
}

/** The address `text` as a number; throws on anything `ipv4Problem` refuses. */
export function parseIPv4(text: string): number {
  const problem = ipv4Problem(text);
  if (problem !== undefined) throw new Error(`invalid IPv4 address "${text}": ${problem}`);
  const parts = text.split('.').map(Number);
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
}

export function formatIPv4(address: number): string {
  return [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255].join('.');
}

/** A dotted-quad address with its host bits cleared for `prefixLength`. */
function masked(address: number, prefixLength: number): number {
  if (prefixLength === 0) return 0;
  return (address & (~0 << (32 - prefixLength))) >>> 0;
}

/**
 * Parses `a.b.c.d/n` (IPv4 only). The address may have host bits set, as Go's ParseCIDR allows;
 * the range is its network. Throws with a one-line reason on anything else.
 */
export function parseIpRange(text: string): IpRange {
  const slash = text.indexOf('/');
  if (slash < 0) throw new Error(`invalid CIDR address: ${text}`);
  const addressText = text.slice(0, slash);
  const lengthText = text.slice(slash + 1);
  if (addressText.includes(':')) throw new Error(`only IPv4 ranges are supported: ${text}`);
  if (ipv4Problem(addressText) !== undefined || !/^\d{1,2}$/.test(lengthText) || Number(lengthText) > 32) {
    throw new Error(`invalid CIDR address: ${text}`);
  }
  const prefixLength = Number(lengthText);
  if (prefixLength > 30) throw new Error(`the range ${text} holds no address for Services (at most /30)`);
  const network = masked(parseIPv4(addressText), prefixLength);
  return { network, prefixLength, text: `${formatIPv4(network)}/${prefixLength}` };
}

/** How many addresses the range spans, network and broadcast included. */
export function rangeSize(range: IpRange): number {
  return 2 ** (32 - range.prefixLength);
}

/** The first address a Service may get: the one after the network address (the `kubernetes` Service's). */
export function firstServiceAddress(range: IpRange): number {
  return range.network + 1;
}

/** The last address a Service may get: the one before the broadcast address. */
export function lastServiceAddress(range: IpRange): number {
  return range.network + rangeSize(range) - 2;
}

/** Whether `address` lies in the range, network and broadcast addresses excluded (as kube's ServiceCIDR check). */
export function holdsServiceAddress(range: IpRange, address: number): boolean {
  return address >= firstServiceAddress(range) && address <= lastServiceAddress(range);
}

/**
 * How many addresses at the start of the range are kept for static (requested) allocation, as
 * kube's KEP-3070 reserves them: dynamic allocation takes from above them first. min(max(16,
 * size/16), 256), or none for ranges of 16 addresses or fewer.
 */
export function staticBandSize(range: IpRange): number {
  const size = rangeSize(range);
  if (size <= 16) return 0;
  return Math.min(Math.max(16, Math.floor(size / 16)), 256);
}
