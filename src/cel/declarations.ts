/**
 * The function declarations the checker resolves calls against: CEL's standard functions, the
 * extension libraries kube-apiserver 1.36 enables (strings v2, sets, lists v3, optional types, two
 * variable comprehensions are not declared: the evaluator lacks them) and the Kubernetes libraries
 * (lists, regex, URLs, quantity, IP, CIDR, format, semver, authorizer). Written as signatures:
 * `recv.name(arg, ...) result` for methods, `name(arg, ...) result` for functions, where `A` is a
 * type parameter bound by the first argument that mentions it.
 */
import { BOOL, BYTES, DOUBLE, DURATION, DYN, INT, NULL, STRING, TIMESTAMP, TYPE, UINT, listOf, mapOf, opaque, optionalOf, type CelType } from './types.js';

export interface FnDecl {
  name: string;
  /** The receiver type of a method; undefined for a global function. */
  receiver?: CelType;
  args: CelType[];
  result: CelType;
}

const PARAM: CelType = { kind: 'dyn', name: 'A' };

function parseType(s: string): CelType {
  s = s.trim();
  const m = /^(\w+)\((.*)\)$/.exec(s);
  if (m !== null) {
    const inner = splitTop(m[2]).map(parseType);
    if (m[1] === 'list') return listOf(inner[0]);
    if (m[1] === 'map') return mapOf(inner[0], inner[1]);
    if (m[1] === 'optional') return optionalOf(inner[0]);
  }
  switch (s) {
    case 'A':
      return PARAM;
    case 'int':
      return INT;
    case 'uint':
      return UINT;
    case 'double':
      return DOUBLE;
    case 'string':
      return STRING;
    case 'bool':
      return BOOL;
    case 'bytes':
      return BYTES;
    case 'dyn':
      return DYN;
    case 'null':
      return NULL;
    case 'type':
      return TYPE;
    case 'timestamp':
      return TIMESTAMP;
    case 'duration':
      return DURATION;
    case 'list':
      return listOf(DYN);
    case 'map':
      return mapOf(DYN, DYN);
    default:
      return opaque(s);
  }
}

function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of s) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += c;
  }
  if (cur.trim() !== '') out.push(cur);
  return out;
}

function decl(sig: string): FnDecl {
  const m = /^(?:(.+)\.)?(\w+)\((.*)\)\s+(.+)$/.exec(sig);
  if (m === null) throw new Error(`bad signature ${sig}`);
  let [, recv, name] = m;
  // Namespaced global functions (`optional.of`, `sets.contains`, `strings.quote`) are functions.
  if (recv !== undefined && /^(optional|sets|lists|strings|format|ip)$/.test(recv)) {
    name = `${recv}.${name}`;
    recv = undefined as unknown as string;
  }
  return { name, receiver: recv === undefined ? undefined : parseType(recv), args: splitTop(m[3]).map(parseType), result: parseType(m[4]) };
}

const TIME_GETTERS = [
  'getFullYear',
  'getMonth',
  'getDate',
  'getDayOfMonth',
  'getDayOfWeek',
  'getDayOfYear',
  'getHours',
  'getMinutes',
  'getSeconds',
  'getMilliseconds',
];

const SIGNATURES = [
  // Standard functions.
  ...['string', 'bytes', 'list', 'map'].flatMap((t) => [`size(${t}) int`, `${t}.size() int`]),
  'string.contains(string) bool',
  'string.startsWith(string) bool',
  'string.endsWith(string) bool',
  'string.matches(string) bool',
  'matches(string, string) bool',
  'int(dyn) int',
  'uint(dyn) uint',
  'double(dyn) double',
  'string(dyn) string',
  'bytes(dyn) bytes',
  'bool(dyn) bool',
  'dyn(dyn) dyn',
  'type(dyn) type',
  'duration(string) duration',
  'timestamp(string) timestamp',
  'timestamp(int) timestamp',
  ...TIME_GETTERS.flatMap((g) => [`timestamp.${g}() int`, `timestamp.${g}(string) int`]),
  ...['getHours', 'getMinutes', 'getSeconds', 'getMilliseconds'].map((g) => `duration.${g}() int`),
  // Strings extension, version 2.
  'string.charAt(int) string',
  'string.indexOf(string) int',
  'string.indexOf(string, int) int',
  'string.lastIndexOf(string) int',
  'string.lastIndexOf(string, int) int',
  'string.lowerAscii() string',
  'string.upperAscii() string',
  'string.replace(string, string) string',
  'string.replace(string, string, int) string',
  'string.split(string) list(string)',
  'string.split(string, int) list(string)',
  'string.substring(int) string',
  'string.substring(int, int) string',
  'string.trim() string',
  'list(string).join() string',
  'list(string).join(string) string',
  'string.format(list) string',
  'strings.quote(string) string',
  // Sets extension.
  'sets.contains(list(A), list(A)) bool',
  'sets.equivalent(list(A), list(A)) bool',
  'sets.intersects(list(A), list(A)) bool',
  // Lists extension, version 3.
  'list(A).slice(int, int) list(A)',
  'list.flatten() list',
  'list.flatten(int) list',
  'lists.range(int) list(int)',
  'list(A).distinct() list(A)',
  'list(A).reverse() list(A)',
  'list(A).sort() list(A)',
  // Kubernetes lists.
  'list(A).isSorted() bool',
  'list(A).sum() A',
  'list(A).min() A',
  'list(A).max() A',
  'list(A).indexOf(A) int',
  'list(A).lastIndexOf(A) int',
  // Kubernetes regex.
  'string.find(string) string',
  'string.findAll(string) list(string)',
  'string.findAll(string, int) list(string)',
  // Kubernetes URLs.
  'url(string) kubernetes.URL',
  'isURL(string) bool',
  'kubernetes.URL.getScheme() string',
  'kubernetes.URL.getHost() string',
  'kubernetes.URL.getHostname() string',
  'kubernetes.URL.getPort() string',
  'kubernetes.URL.getEscapedPath() string',
  'kubernetes.URL.getQuery() map(string, list(string))',
  // Kubernetes quantity.
  'quantity(string) kubernetes.Quantity',
  'isQuantity(string) bool',
  'kubernetes.Quantity.sign() int',
  'kubernetes.Quantity.isInteger() bool',
  'kubernetes.Quantity.asInteger() int',
  'kubernetes.Quantity.asApproximateFloat() double',
  'kubernetes.Quantity.add(kubernetes.Quantity) kubernetes.Quantity',
  'kubernetes.Quantity.add(int) kubernetes.Quantity',
  'kubernetes.Quantity.sub(kubernetes.Quantity) kubernetes.Quantity',
  'kubernetes.Quantity.sub(int) kubernetes.Quantity',
  'kubernetes.Quantity.isLessThan(kubernetes.Quantity) bool',
  'kubernetes.Quantity.isGreaterThan(kubernetes.Quantity) bool',
  'kubernetes.Quantity.compareTo(kubernetes.Quantity) int',
  // Kubernetes IP and CIDR.
  'ip(string) net.IP',
  'isIP(string) bool',
  'ip.isCanonical(string) bool',
  'net.IP.family() int',
  'net.IP.isUnspecified() bool',
  'net.IP.isLoopback() bool',
  'net.IP.isLinkLocalMulticast() bool',
  'net.IP.isLinkLocalUnicast() bool',
  'net.IP.isGlobalUnicast() bool',
  'string(net.IP) string',
  'cidr(string) net.CIDR',
  'isCIDR(string) bool',
  'net.CIDR.containsIP(string) bool',
  'net.CIDR.containsIP(net.IP) bool',
  'net.CIDR.containsCIDR(string) bool',
  'net.CIDR.containsCIDR(net.CIDR) bool',
  'net.CIDR.ip() net.IP',
  'net.CIDR.masked() net.CIDR',
  'net.CIDR.prefixLength() int',
  'string(net.CIDR) string',
  // Kubernetes format.
  'format.named(string) optional(kubernetes.NamedFormat)',
  ...[
    'dns1123Label',
    'dns1123Subdomain',
    'dns1035Label',
    'qualifiedName',
    'dns1123LabelPrefix',
    'dns1123SubdomainPrefix',
    'dns1035LabelPrefix',
    'labelValue',
    'uri',
    'uuid',
    'byte',
    'date',
    'datetime',
  ].map((f) => `format.${f}() kubernetes.NamedFormat`),
  'kubernetes.NamedFormat.validate(string) optional(list(string))',
  // Kubernetes semver.
  'semver(string) kubernetes.Semver',
  'semver(string, bool) kubernetes.Semver',
  'isSemver(string) bool',
  'isSemver(string, bool) bool',
  'kubernetes.Semver.major() int',
  'kubernetes.Semver.minor() int',
  'kubernetes.Semver.patch() int',
  'kubernetes.Semver.isLessThan(kubernetes.Semver) bool',
  'kubernetes.Semver.isGreaterThan(kubernetes.Semver) bool',
  'kubernetes.Semver.compareTo(kubernetes.Semver) int',
  // Optional types.
  'optional.of(A) optional(A)',
  'optional.ofNonZeroValue(A) optional(A)',
  'optional.none() optional(dyn)',
  'optional(A).hasValue() bool',
  'list(A).first() optional(A)',
  'list(A).last() optional(A)',
  'optional(A).value() A',
  'optional(A).orValue(A) A',
  'optional(A).or(optional(A)) optional(A)',
  // Kubernetes authorizer.
  'kubernetes.authorization.Authorizer.group(string) kubernetes.authorization.GroupCheck',
  'kubernetes.authorization.Authorizer.serviceAccount(string, string) kubernetes.authorization.Authorizer',
  'kubernetes.authorization.Authorizer.path(string) kubernetes.authorization.PathCheck',
  'kubernetes.authorization.GroupCheck.resource(string) kubernetes.authorization.ResourceCheck',
  'kubernetes.authorization.ResourceCheck.subresource(string) kubernetes.authorization.ResourceCheck',
  'kubernetes.authorization.ResourceCheck.namespace(string) kubernetes.authorization.ResourceCheck',
  'kubernetes.authorization.ResourceCheck.name(string) kubernetes.authorization.ResourceCheck',
  'kubernetes.authorization.ResourceCheck.fieldSelector(string) kubernetes.authorization.ResourceCheck',
  'kubernetes.authorization.ResourceCheck.labelSelector(string) kubernetes.authorization.ResourceCheck',
  'kubernetes.authorization.ResourceCheck.check(string) kubernetes.authorization.Decision',
  'kubernetes.authorization.PathCheck.check(string) kubernetes.authorization.Decision',
  'kubernetes.authorization.Decision.allowed() bool',
  'kubernetes.authorization.Decision.reason() string',
  'kubernetes.authorization.Decision.errored() bool',
  'kubernetes.authorization.Decision.error() string',
];

/** Every declaration, by function name. */
export const DECLARATIONS: ReadonlyMap<string, readonly FnDecl[]> = (() => {
  const out = new Map<string, FnDecl[]>();
  for (const sig of SIGNATURES) {
    const d = decl(sig);
    const list = out.get(d.name) ?? [];
    list.push(d);
    out.set(d.name, list);
  }
  return out;
})();

/** Whether T is the type parameter `A` of a declaration. */
export function isParam(t: CelType): boolean {
  return t === PARAM;
}
