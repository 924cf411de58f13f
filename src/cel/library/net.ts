/**
 * kube's IP and CIDR libraries: `ip`, `isIP`, `ip.isCanonical`, `family`, `isUnspecified`,
 * `isLoopback`, `isLinkLocalMulticast`, `isLinkLocalUnicast`, `isGlobalUnicast`, `cidr`, `isCIDR`,
 * `containsIP`, `containsCIDR`, `ip()`, `masked`, `prefixLength`, and `string()` of both. Parsing is
 * Go's netip: no leading zeros, no zones, no IPv4-mapped IPv6 addresses.
 */
import { formatIPv6, parseIP, type IPBytes } from '../../validation/ip-formats.js';
import { asOpaque, opaqueValue } from '../values.js';
import { CelEvalError, defineFunction, defineMethod } from './registry.js';

const IP = 'net.IP';
const CIDR = 'net.CIDR';

interface Prefix {
  ip: IPBytes;
  bits: number;
}

function ipString(ip: IPBytes): string {
  return ip.length === 4 ? ip.join('.') : formatIPv6(ip);
}

function isMapped(ip: IPBytes): boolean {
  return ip.length === 16 && ip.slice(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff;
}

/** netip.ParseAddr as kube's library uses it; a string is the error. */
function parseAddr(raw: string): IPBytes | string {
  if (raw.includes('%')) return `IP address ${JSON.stringify(raw)} with zone value is not allowed`;
  const ip = parseIP(raw, true);
  if (ip === undefined)
    return `IP Address ${JSON.stringify(raw)} parse error during conversion from string: ParseAddr(${JSON.stringify(raw)}): unable to parse IP`;
  if (isMapped(ip)) return `IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`;
  return ip;
}

function parsePrefix(raw: string): Prefix | string {
  const slash = raw.indexOf('/');
  const addr = slash < 0 ? undefined : parseIP(raw.slice(0, slash), true);
  const bitsText = slash < 0 ? '' : raw.slice(slash + 1);
  const bits = /^(0|[1-9][0-9]*)$/.test(bitsText) ? Number(bitsText) : NaN;
  if (addr === undefined || Number.isNaN(bits) || bits > addr.length * 8 || raw.includes('%')) {
    return `network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(raw)}): invalid prefix`;
  }
  if (isMapped(addr)) return `IPv4-mapped IPv6 address ${JSON.stringify(raw)} is not allowed`;
  return { ip: addr, bits };
}

function mask(ip: IPBytes, bits: number): IPBytes {
  return ip.map((b, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
}

const ipValue = (ip: IPBytes): ReturnType<typeof opaqueValue> => opaqueValue(IP, ipString(ip), ip);
const cidrValue = (p: Prefix): ReturnType<typeof opaqueValue> => opaqueValue(CIDR, `${ipString(p.ip)}/${p.bits}`, p);

defineFunction('ip', 1, (s) => {
  if (typeof s !== 'string') return undefined;
  const ip = parseAddr(s);
  if (typeof ip === 'string') throw new CelEvalError(ip);
  return ipValue(ip);
});
defineFunction('isIP', 1, (s) => (typeof s === 'string' ? typeof parseAddr(s) !== 'string' : undefined));
defineFunction('ip.isCanonical', 1, (s) => {
  if (typeof s !== 'string') return undefined;
  const ip = parseAddr(s);
  if (typeof ip === 'string') throw new CelEvalError(ip);
  return ipString(ip) === s;
});
const ipOf = (v: unknown): IPBytes | undefined => asOpaque<IPBytes>(v, IP);
const ipTest = (name: string, test: (ip: IPBytes) => boolean): void =>
  defineMethod(name, 0, (r) => {
    const ip = ipOf(r);
    return ip === undefined ? undefined : test(ip);
  });
defineMethod('family', 0, (r) => {
  const ip = ipOf(r);
  return ip === undefined ? undefined : ip.length === 4 ? 4n : 6n;
});
ipTest('isUnspecified', (ip) => ip.every((b) => b === 0));
ipTest('isLoopback', (ip) => (ip.length === 4 ? ip[0] === 127 : ip.slice(0, 15).every((b) => b === 0) && ip[15] === 1));
ipTest('isLinkLocalMulticast', (ip) => (ip.length === 4 ? ip[0] === 224 && ip[1] === 0 && ip[2] === 0 : ip[0] === 0xff && (ip[1] & 0x0f) === 0x02));
ipTest('isLinkLocalUnicast', (ip) => (ip.length === 4 ? ip[0] === 169 && ip[1] === 254 : ip[0] === 0xfe && (ip[1] & 0xc0) === 0x80));
ipTest('isGlobalUnicast', (ip) => {
  if (ip.length === 4) {
    const bcast = ip.every((b) => b === 255);
    return !bcast && !ip.every((b) => b === 0) && ip[0] !== 127 && !(ip[0] >= 224) && !(ip[0] === 169 && ip[1] === 254);
  }
  return (
    !ip.every((b) => b === 0) && !(ip.slice(0, 15).every((b) => b === 0) && ip[15] === 1) && ip[0] !== 0xff && !(ip[0] === 0xfe && (ip[1] & 0xc0) === 0x80)
  );
});

defineFunction('cidr', 1, (s) => {
  if (typeof s !== 'string') return undefined;
  const p = parsePrefix(s);
  if (typeof p === 'string') throw new CelEvalError(p);
  return cidrValue(p);
});
defineFunction('isCIDR', 1, (s) => (typeof s === 'string' ? typeof parsePrefix(s) !== 'string' : undefined));
const cidrOf = (v: unknown): Prefix | undefined => asOpaque<Prefix>(v, CIDR);
function contains(p: Prefix, ip: IPBytes): boolean {
  if (ip.length !== p.ip.length) return false;
  const a = mask(ip, p.bits);
  const b = mask(p.ip, p.bits);
  return a.every((x, i) => x === b[i]);
}
defineMethod('containsIP', 1, (r, other) => {
  const p = cidrOf(r);
  if (p === undefined) return undefined;
  let ip = ipOf(other);
  if (typeof other === 'string') {
    const parsed = parseAddr(other);
    if (typeof parsed === 'string') throw new CelEvalError(parsed);
    ip = parsed;
  }
  return ip === undefined ? undefined : contains(p, ip);
});
defineMethod('containsCIDR', 1, (r, other) => {
  const p = cidrOf(r);
  if (p === undefined) return undefined;
  let o = cidrOf(other);
  if (typeof other === 'string') {
    const parsed = parsePrefix(other);
    if (typeof parsed === 'string') throw new CelEvalError(parsed);
    o = parsed;
  }
  if (o === undefined) return undefined;
  return o.ip.length === p.ip.length && o.bits >= p.bits && contains(p, o.ip);
});
defineMethod('ip', 0, (r) => {
  const p = cidrOf(r);
  return p === undefined ? undefined : ipValue(p.ip);
});
defineMethod('masked', 0, (r) => {
  const p = cidrOf(r);
  return p === undefined ? undefined : cidrValue({ ip: mask(p.ip, p.bits), bits: p.bits });
});
defineMethod('prefixLength', 0, (r) => {
  const p = cidrOf(r);
  return p === undefined ? undefined : BigInt(p.bits);
});
defineFunction('string', 1, (v) => {
  const ip = ipOf(v);
  if (ip !== undefined) return ipString(ip);
  const p = cidrOf(v);
  if (p !== undefined) return `${ipString(p.ip)}/${p.bits}`;
  return undefined;
});
