import { lookup } from 'node:dns/promises';
import { isIPv6 } from 'node:net';
import { badRequest, notFound, unavailable } from '../api/errors.js';
import { objectKey } from '../api/object-util.js';
import { arrayField, isObject, numberField, objectElements, objectField, stringField, type Obj } from '../api/values.js';
import { storageTypeOf } from '../api/resource-info.js';
import type { ResourceTarget } from './server-context.js';
import { withStorage } from './storage-errors.js';
import type { KubeletClient, KubeletConnection } from '../kubelet/kubelet-client.js';

/** Where a proxy request goes: kube's `ResourceLocation` of a pod or service, before the path is added. */
export interface ProxyLocation {
  /** The scheme the name asked for: '' (then http), `http` or `https`. */
  scheme: string;
  /** The backend's address as a URL host: an IP (IPv6 in brackets), with `:port` when there is one. */
  host: string;
  /** A node's kubelet port: the kubelet client's TLS settings apply (its certificate, its CA). */
  kubelet?: KubeletConnection;
}

/**
 * apimachinery's SplitSchemeNamePort: `name`, `name:port` or `scheme:name:port`, the scheme `http`,
 * `https` or empty and the name non-empty; undefined for any other form.
 */
export function splitSchemeNamePort(id: string): { scheme: string; name: string; port: string } | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) [name, port] = parts;
  else if (parts.length === 3) [scheme, name, port] = parts;
  else return undefined;
  if (name === '' || !(scheme === '' || scheme === 'http' || scheme === 'https')) return undefined;
  return { scheme, name, port };
}

/** IPv4 as Go's ParseIPSloppy reads it (leading zeros allowed), as four numbers; undefined if it is not one. */
function ipv4Octets(ip: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (m === null) return undefined;
  const octets = m.slice(1).map(Number);
  return octets.every((o) => o <= 255) ? octets : undefined;
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded dotted IPv4 tail read as two groups). */
function ipv6Groups(ip: string): number[] {
  let text = ip;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail !== null) {
    const [a, b, c, d] = ipv4Octets(tail[1]) ?? [0, 0, 0, 0];
    text = `${text.slice(0, -tail[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const zeros = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16));
}

/**
 * Go's `net.IP.IsGlobalUnicast` of a textual IP: a valid address that is not unspecified, loopback,
 * multicast, link-local or the IPv4 broadcast address (private ranges are global unicast to Go).
 */
export function isGlobalUnicast(ip: string): boolean {
  let v4 = ipv4Octets(ip);
  if (v4 === undefined && isIPv6(ip)) {
    const g = ipv6Groups(ip);
    // An IPv4-mapped address is judged as the IPv4 address it carries.
    if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) v4 = [g[6] >> 8, g[6] & 0xff, g[7] >> 8, g[7] & 0xff];
    else {
      const unspecifiedOrLoopback = g.slice(0, 7).every((x) => x === 0) && (g[7] === 0 || g[7] === 1);
      return !unspecifiedOrLoopback && (g[0] & 0xff00) !== 0xff00 && (g[0] & 0xffc0) !== 0xfe80;
    }
  }
  if (v4 === undefined) return false;
  const [a, b] = v4;
  if (v4.every((o) => o === 0) || a === 127 || (a >= 224 && a <= 239) || (a === 169 && b === 254)) return false;
  return !v4.every((o) => o === 255);
}

/** `ip` and `port` as a URL host: Go's net.JoinHostPort (brackets around IPv6). */
function joinHostPort(ip: string, port: string): string {
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return port === '' ? host : `${host}:${port}`;
}

async function readObject(r: ResourceTarget, resource: string, name: string): Promise<Obj | undefined> {
  const info = r.server.catalog.get('', 'v1', resource);
  if (info === undefined) return undefined;
  const stored = await withStorage(r, name, () => r.server.storage.get(storageTypeOf(info), objectKey(r.ri.namespace, name)));
  return stored === undefined ? undefined : (JSON.parse(stored.json) as Obj);
}

/** A pod's IPs: `status.podIPs`, or `status.podIP` when the list is absent. */
function podIPs(pod: Obj): string[] {
  const status = objectField(pod, 'status');
  const listed = objectElements(arrayField(status, 'podIPs')).map((p) => stringField(p, 'ip'));
  if (listed.length > 0) return listed;
  const single = stringField(status, 'podIP');
  return single === '' ? [] : [single];
}

/**
 * kube's pod ResourceLocation for `pods/ID/proxy`: ID is `name`, `name:port` or `scheme:name:port`
 * (400 `invalid pod request` otherwise); the pod must exist (404); without a port the first port of
 * the first container that declares one is used (none: the scheme's default port); the pod's first
 * IP must be global unicast (400 `address not allowed`).
 */
export async function podProxyLocation(r: ResourceTarget, id: string): Promise<ProxyLocation> {
  const parts = splitSchemeNamePort(id);
  if (parts === undefined) throw badRequest(`invalid pod request ${JSON.stringify(id)}`);
  const pod = await readObject(r, 'pods', parts.name);
  if (pod === undefined) throw notFound({ group: '', resource: 'pods' }, parts.name);
  let port = parts.port;
  if (port === '') {
    for (const container of objectElements(arrayField(objectField(pod, 'spec'), 'containers'))) {
      const ports = objectElements(arrayField(container, 'ports'));
      if (ports.length > 0) {
        port = String(numberField(ports[0], 'containerPort'));
        break;
      }
    }
  }
  const ip = podIPs(pod)[0] ?? '';
  if (!isGlobalUnicast(ip)) throw badRequest('address not allowed');
  return { scheme: parts.scheme, host: joinHostPort(ip, port) };
}

/** Go's strconv.ParseInt(s, 10, 64): an optional sign and decimal digits within int64. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

/** Whether an Endpoints address names a pod of the request's namespace that still has that IP. */
async function isPodAddress(r: ResourceTarget, address: Obj): Promise<boolean> {
  const ref = address.targetRef;
  if (!isObject(ref) || stringField(ref, 'namespace') !== r.ri.namespace) return false;
  try {
    const pod = await readObject(r, 'pods', stringField(ref, 'name'));
    return pod !== undefined && podIPs(pod).includes(stringField(address, 'ip'));
  } catch {
    // kube skips an address whose pod cannot be read and tries the next.
    return false;
  }
}

/** A random rotation of `items`: kube starts its search of subsets and addresses at a random index. */
function rotated<T>(items: T[]): T[] {
  const start = Math.floor(Math.random() * items.length);
  return [...items.slice(start), ...items.slice(0, start)];
}

/**
 * kube's service ResourceLocation for `services/ID/proxy`: ID is `name`, `name:port` or
 * `scheme:name:port` (400 `invalid service request` otherwise). A numeric port is the service port
 * with that number (404 for a missing service, 503 `no service port N found` for a missing port)
 * and stands for its name; any other port is a port name ('' for an unnamed one). The service's
 * Endpoints (404 naming the service when absent) give the backend: a ready address, chosen at random,
 * of a subset carrying the named port, that is a pod of this namespace with that IP; none is 503
 * `no endpoints available`.
 */
export async function serviceProxyLocation(r: ResourceTarget, id: string): Promise<ProxyLocation> {
  const parts = splitSchemeNamePort(id);
  if (parts === undefined) throw badRequest(`invalid service request ${JSON.stringify(id)}`);
  const { scheme, name } = parts;
  let portName = parts.port;
  const portNumber = parseInt64(portName);
  if (portNumber !== undefined) {
    const service = await readObject(r, 'services', name);
    if (service === undefined) throw notFound({ group: '', resource: 'services' }, name);
    const match = objectElements(arrayField(objectField(service, 'spec'), 'ports')).find((p) => BigInt(numberField(p, 'port')) === portNumber);
    if (match === undefined) throw unavailable(`no service port ${portNumber} found for service ${JSON.stringify(name)}`);
    portName = stringField(match, 'name');
  }
  const endpoints = await readObject(r, 'endpoints', name);
  if (endpoints === undefined) throw notFound({ group: '', resource: 'services' }, name);
  const subsets = objectElements(arrayField(endpoints, 'subsets'));
  if (subsets.length === 0) throw unavailable(`no endpoints available for service ${JSON.stringify(name)}`);
  for (const subset of rotated(subsets)) {
    const addresses = objectElements(arrayField(subset, 'addresses'));
    if (addresses.length === 0) continue;
    for (const port of objectElements(arrayField(subset, 'ports'))) {
      if (stringField(port, 'name') !== portName) continue;
      for (const address of rotated(addresses)) {
        if (await isPodAddress(r, address)) return { scheme, host: joinHostPort(stringField(address, 'ip'), String(numberField(port, 'port'))) };
      }
    }
  }
  throw unavailable(`no endpoints available for service ${JSON.stringify(id)}`);
}

/**
 * kube's IsProxyableHostname: every address `hostname` resolves to must be global unicast (400
 * `address not allowed` otherwise, as for a node at 127.0.0.1); a name that does not resolve is a 400
 * with the lookup's error.
 */
async function checkProxyableHostname(hostname: string): Promise<void> {
  let addresses: string[];
  try {
    addresses = (await lookup(hostname, { all: true })).map((a) => a.address);
  } catch {
    throw badRequest(`lookup ${hostname}: no such host`);
  }
  if (addresses.length === 0) throw badRequest(`No addresses for hostname`);
  if (!addresses.every(isGlobalUnicast)) throw badRequest('address not allowed');
}

/**
 * kube's node ResourceLocation for `nodes/ID/proxy`: ID is `name`, `name:port` or `scheme:name:port`
 * (400 `invalid node request` otherwise); the node must exist (404) and have an address of a
 * preferred type (kube's 500), which must be proxyable. Without a port, or with the kubelet's, the
 * request goes to the kubelet over HTTPS with the kubelet client's settings; any other port is
 * reached with the scheme asked for, as a pod's proxy reaches it.
 */
export async function nodeProxyLocation(r: ResourceTarget, kubelet: KubeletClient, id: string): Promise<ProxyLocation> {
  const parts = splitSchemeNamePort(id);
  if (parts === undefined) throw badRequest(`invalid node request ${JSON.stringify(id)}`);
  const node = await readObject(r, 'nodes', parts.name);
  if (node === undefined) throw notFound({ group: '', resource: 'nodes' }, parts.name);
  const connection = kubelet.connectionOf(node);
  await checkProxyableHostname(connection.hostname);
  if (parts.port === '' || parts.port === String(connection.port)) {
    return { scheme: connection.scheme, host: connection.address, kubelet: connection };
  }
  return { scheme: parts.scheme, host: joinHostPort(connection.hostname, parts.port) };
}
