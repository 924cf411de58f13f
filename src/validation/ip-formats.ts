/**
 * IP address and CIDR checks of kube 1.36 for "legacy" fields (apimachinery's
 * IsValidIPForLegacyField / IsValidCIDRForLegacyField with StrictIPCIDRValidation on, as it is by
 * default in 1.36), worded as kube words them. Parsing follows Go's sloppy parser (k8s.io/utils/net):
 * IPv4 octets may carry leading zeros, IPv6 may end in an embedded IPv4 address; the strict layer then
 * rejects leading zeros, IPv4-mapped IPv6 addresses and (for CIDRs) bits set beyond the prefix.
 * Not handled: Go's acceptance of over-long zero-padded IPv6 groups (e.g. "00001::").
 */

/** A parsed address: 4 bytes for IPv4 text, 16 for IPv6 text. */
export type IPBytes = number[];

/** A parsed CIDR: the network address (masked) and the prefix length. */
export interface ParsedCIDR {
  ip: IPBytes;
  network: IPBytes;
  bits: number;
}

const IP_INVALID = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const CIDR_INVALID = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

/** Dotted-quad IPv4; `strict` refuses octets with leading zeros. */
function parseIPv4(s: string, strict: boolean): IPBytes | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out: IPBytes = [];
  for (const p of parts) {
    if (!/^[0-9]+$/.test(p)) return undefined;
    if (strict && p.length > 1 && p.startsWith('0')) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

/** RFC 4291 IPv6 text, possibly ending in an IPv4 address (no zones). */
function parseIPv6(s: string, strict: boolean): IPBytes | undefined {
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (text: string): IPBytes | undefined => {
    if (text === '') return [];
    const out: IPBytes = [];
    const fields = text.split(':');
    for (const [i, f] of fields.entries()) {
      if (i === fields.length - 1 && f.includes('.')) {
        const v4 = parseIPv4(f, strict);
        if (v4 === undefined) return undefined;
        out.push(...v4);
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(f)) return undefined;
      const n = parseInt(f, 16);
      out.push(n >> 8, n & 0xff);
    }
    return out;
  };
  const head = groups(halves[0] ?? '');
  const tail = halves.length === 2 ? groups(halves[1] ?? '') : [];
  if (head === undefined || tail === undefined) return undefined;
  // An embedded IPv4 address may only come last.
  if (halves.length === 2 && (halves[0] ?? '').includes('.')) return undefined;
  const used = head.length + tail.length;
  if (halves.length === 1) return used === 16 ? head : undefined;
  if (used > 14) return undefined;
  return [...head, ...new Array<number>(16 - used).fill(0), ...tail];
}

/** Parses as Go's ParseIPSloppy (`strict` false) or netip.ParseAddr without zones (`strict` true). */
export function parseIP(s: string, strict = false): IPBytes | undefined {
  if (s.includes(':')) return parseIPv6(s, strict);
  if (s.includes('.')) return parseIPv4(s, strict);
  return undefined;
}

/** Whether a 16-byte address is an IPv4-mapped IPv6 address (::ffff:a.b.c.d). */
export function isIPv4Mapped(ip: IPBytes): boolean {
  return ip.length === 16 && ip.slice(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff;
}

/** Go's IP.To4 view: the 4 IPv4 bytes of an IPv4 or IPv4-mapped address. */
export function asIPv4(ip: IPBytes): IPBytes | undefined {
  if (ip.length === 4) return ip;
  return isIPv4Mapped(ip) ? ip.slice(12) : undefined;
}

/** The problems kube reports for a legacy IP field (none when valid). */
export function legacyIPProblems(value: string): string[] {
  const ip = parseIP(value);
  if (ip === undefined) return [IP_INVALID];
  const problems: string[] = [];
  if (parseIP(value, true) === undefined) problems.push('must not have leading 0s');
  if (isIPv4Mapped(ip)) problems.push('must not be an IPv4-mapped IPv6 address');
  return problems;
}

function maskBytes(ip: IPBytes, bits: number): IPBytes {
  return ip.map((b, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
}

/** Parses a CIDR as Go's ParseCIDRSloppy (leading zeros allowed in the IP and the prefix length). */
export function parseCIDR(value: string): ParsedCIDR | undefined {
  const slash = value.indexOf('/');
  if (slash < 0) return undefined;
  const ip = parseIP(value.slice(0, slash));
  const bitsText = value.slice(slash + 1);
  if (ip === undefined || !/^[0-9]+$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  if (bits > ip.length * 8) return undefined;
  // Go keeps an IPv4 network as 4 bytes even when written in IPv4-mapped form.
  const v4 = ip.length === 16 && isIPv4Mapped(ip) && bits >= 96 ? ip.slice(12) : undefined;
  const base = v4 ?? ip;
  const baseBits = v4 !== undefined ? bits - 96 : bits;
  return { ip, network: maskBytes(base, baseBits), bits: baseBits };
}

/** The problems kube reports for a legacy CIDR field (none when valid). */
export function legacyCIDRProblems(value: string): string[] {
  const parsed = parseCIDR(value);
  if (parsed === undefined) return [CIDR_INVALID];
  const slash = value.indexOf('/');
  const strictIP = parseIP(value.slice(0, slash), true);
  const bitsText = value.slice(slash + 1);
  if (strictIP === undefined || (bitsText.length > 1 && bitsText.startsWith('0'))) return ['must not have leading 0s in IP or prefix length'];
  if (isIPv4Mapped(strictIP)) return ['must not have an IPv4-mapped IPv6 address'];
  const bits = Number(bitsText);
  if (maskBytes(strictIP, bits).some((b, i) => b !== strictIP[i])) return ['must not have bits set beyond the prefix length'];
  return [];
}

/** Go's IPNet.Contains: whether `ip` lies in the network (an IPv4 address never lies in an IPv6 network). */
export function cidrContains(cidr: ParsedCIDR, ip: IPBytes): boolean {
  const candidate = asIPv4(ip) ?? ip;
  if (candidate.length !== cidr.network.length) return false;
  const masked = maskBytes(candidate, cidr.bits);
  return masked.every((b, i) => b === cidr.network[i]);
}

/**
 * ValidateEndpointIP's problems: a parsable address that is not unspecified, loopback, link-local
 * unicast or link-local multicast (Go's net.IP classification, IPv4-mapped addresses read as IPv4).
 */
export function endpointIPProblems(value: string): string[] {
  const ip = parseIP(value);
  if (ip === undefined) return ['must be a valid IP address'];
  const v4 = asIPv4(ip);
  const problems: string[] = [];
  if (v4 !== undefined) {
    const [a = 0, b = 0, c = 0] = v4;
    if (v4.every((x) => x === 0)) problems.push(`may not be unspecified (${value})`);
    if (a === 127) problems.push('may not be in the loopback range (127.0.0.0/8, ::1/128)');
    if (a === 169 && b === 254) problems.push('may not be in the link-local range (169.254.0.0/16, fe80::/10)');
    if (a === 224 && b === 0 && c === 0) problems.push('may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)');
    return problems;
  }
  const [a = 0, b = 0] = ip;
  if (ip.every((x) => x === 0)) problems.push(`may not be unspecified (${value})`);
  if (ip.slice(0, 15).every((x) => x === 0) && ip[15] === 1) problems.push('may not be in the loopback range (127.0.0.0/8, ::1/128)');
  if (a === 0xfe && (b & 0xc0) === 0x80) problems.push('may not be in the link-local range (169.254.0.0/16, fe80::/10)');
  if (a === 0xff && (b & 0x0f) === 0x02) problems.push('may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)');
  return problems;
}

/** Go's net.IP.String() of a 16-byte IPv6 address: RFC 5952 (lower-case hex, longest zero run of 2+ groups as '::'). */
export function formatIPv6(ip: IPBytes): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((ip[i] ?? 0) << 8) | (ip[i + 1] ?? 0));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]): string => gs.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

/** IsValidIP (for new fields): strict parsing, and the address in canonical form. */
export function strictIPProblems(value: string): string[] {
  const problems = legacyIPProblems(value);
  if (problems.length > 0) return problems;
  const ip = parseIP(value) ?? [];
  const canonical = ip.length === 4 ? ip.join('.') : formatIPv6(ip);
  return canonical === value ? [] : [`must be in canonical form ("${canonical}")`];
}
