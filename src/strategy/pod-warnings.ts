import { isObject, type Obj } from '../api/object-util.js';
import { goQuote } from '../codec/go-quote.js';
import { canonicalQuantity, milliValueOf } from '../api/quantity.js';
import { formatIPv6, parseIP } from '../validation/ip-formats.js';
import { isDNS1123Label, isLabelValue } from '../validation/string-formats.js';
import { objectAt, objectsAt } from '../api/field-defaults.js';
import { asNumber, asObject, asString } from '../api/values.js';

/**
 * kube-apiserver 1.36's warnings about pod specs (pkg/api/pod/warnings.go and the helpers it calls),
 * sent as `Warning` headers on writes of Pods and of every kind with a pod template: deprecated node
 * labels, annotations and volume plugins, overlapping volume paths, duplicate host aliases, image pull
 * secrets, environment variables and ports, fractional byte quantities, seccomp and AppArmor
 * annotations without their fields, negative termination grace periods, null label selectors, and
 * IP addresses in non-standard forms. Messages, field paths (`spec.template.spec...` for templates)
 * and order are kube's; where kube iterates a Go map (node selector keys) the object's order is used.
 */

/** A field path as kube's field.Path prints it: children joined by dots, `[i]` for indexes and keys. */
class Path {
  constructor(private readonly text: string) {}
  child(...names: string[]): Path {
    return new Path([this.text, ...names].filter((s) => s !== '').join('.'));
  }
  index(i: number): Path {
    return new Path(`${this.text}[${i}]`);
  }
  key(k: string): Path {
    return new Path(`${this.text}[${k}]`);
  }
  /** The path as text. */
  get s(): string {
    return this.text;
  }
}

const ROOT = new Path('');

/** Node labels kube deprecates, with its message (pkg/api/node/util.go). */
const DEPRECATED_NODE_LABELS: Record<string, string> = {
  'beta.kubernetes.io/arch': 'deprecated since v1.14; use "kubernetes.io/arch" instead',
  'beta.kubernetes.io/os': 'deprecated since v1.14; use "kubernetes.io/os" instead',
  'failure-domain.beta.kubernetes.io/region': 'deprecated since v1.17; use "topology.kubernetes.io/region" instead',
  'failure-domain.beta.kubernetes.io/zone': 'deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
  'beta.kubernetes.io/instance-type': 'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead',
  'app.kubernetes.io/created-by': 'deprecated since v1.9',
  'scheduler.alpha.kubernetes.io/preferAvoidPods': 'deprecated since v1.22; use Taints and Tolerations instead',
  'node-role.kubernetes.io/master': 'use "node-role.kubernetes.io/control-plane" instead',
};

function deprecatedNodeLabel(key: string): string | undefined {
  return Object.hasOwn(DEPRECATED_NODE_LABELS, key) ? DEPRECATED_NODE_LABELS[key] : undefined;
}

const DEPRECATED_ANNOTATIONS: [string, string][] = [
  ['scheduler.alpha.kubernetes.io/critical-pod', 'non-functional in v1.16+; use the "priorityClassName" field instead'],
  ['security.alpha.kubernetes.io/sysctls', 'non-functional in v1.11+; use the "sysctls" field instead'],
  ['security.alpha.kubernetes.io/unsafe-sysctls', 'non-functional in v1.11+; use the "sysctls" field instead'],
];

/** Volume plugins kube deprecated or removed, in the order it checks them, with its message. */
const DEPRECATED_VOLUMES: [string, string][] = [
  ['photonPersistentDisk', 'deprecated in v1.11, non-functional in v1.16+'],
  ['gitRepo', 'deprecated in v1.11, and disabled by default in v1.33+'],
  ['scaleIO', 'deprecated in v1.16, non-functional in v1.22+'],
  ['flocker', 'deprecated in v1.22, non-functional in v1.25+'],
  ['storageOS', 'deprecated in v1.22, non-functional in v1.25+'],
  ['quobyte', 'deprecated in v1.22, non-functional in v1.25+'],
  ['glusterfs', 'deprecated in v1.25, non-functional in v1.26+'],
];
const REMOVED_VOLUMES: [string, string][] = [
  ['cephfs', 'deprecated in v1.28, non-functional in v1.31+'],
  ['rbd', 'deprecated in v1.28, non-functional in v1.31+'],
];

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const APPARMOR_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
const has = (o: Obj | undefined, k: string): boolean => o !== undefined && o[k] !== undefined && o[k] !== null;

/** `path: fractional byte value "q" is invalid, must be an integer` when q is not a whole number of bytes. */
function fractionalBytes(path: Path, quantity: unknown): string[] {
  if (typeof quantity !== 'string' && typeof quantity !== 'number') return [];
  const text = String(quantity);
  const milli = milliValueOf(text);
  if (milli === undefined || milli % 1000n === 0n) return [];
  return [`${path.s}: fractional byte value ${goQuote(canonicalQuantity(text))} is invalid, must be an integer`];
}

/** GetWarningsForIP: a legacy-valid address in a form kube no longer prefers. */
function ipWarnings(path: Path, value: string): string[] {
  const sloppy = parseIP(value);
  if (sloppy === undefined) return [];
  const strict = parseIP(value, true);
  const mapped = sloppy.length === 16 && sloppy.slice(0, 10).every((b) => b === 0) && sloppy[10] === 0xff && sloppy[11] === 0xff;
  if (strict === undefined || mapped) {
    const preferred = sloppy.length === 4 ? sloppy.join('.') : mapped ? sloppy.slice(12).join('.') : formatIPv6(sloppy);
    return [`${path.s}: non-standard IP address ${goQuote(value)} is invalid: use ${goQuote(preferred)}`];
  }
  if (strict.length === 16) {
    const canonical = formatIPv6(strict);
    if (canonical !== value) return [`${path.s}: IPv6 address ${goQuote(value)} should be in RFC 5952 canonical format (${goQuote(canonical)})`];
  }
  return [];
}

/** GetWarningsForPersistentVolumeClaimSpec: fractional storage requests and limits. */
export function pvcSpecWarnings(at: Path | string, spec: Obj | undefined): string[] {
  const path = typeof at === 'string' ? new Path(at) : at;
  const resources = objectAt(spec ?? {}, 'resources') ?? {};
  return [
    ...fractionalBytes(path.child('resources', 'requests').key('storage'), asObject(resources.requests).storage),
    ...fractionalBytes(path.child('resources', 'limits').key('storage'), asObject(resources.limits).storage),
  ];
}

/** GetWarningsForNodeSelectorTerm. */
function nodeSelectorTermWarnings(term: Obj, checkValues: boolean, path: Path): string[] {
  const out: string[] = [];
  objectsAt(term, 'matchExpressions').forEach((e, i) => {
    const key = asString(e.key);
    const msg = deprecatedNodeLabel(key);
    if (msg !== undefined) out.push(`${path.child('matchExpressions').index(i).child('key').s}: ${key} is ${msg}`);
    if (!checkValues || !Array.isArray(e.values)) return;
    e.values.forEach((value: unknown, j: number) => {
      for (const m of isLabelValue(asString(value)))
        out.push(`${path.child('matchExpressions').index(i).child('values').index(j).s}: ${asString(value)} is invalid, ${m}`);
    });
  });
  return out;
}

/** The containers kube visits (VisitContainersWithPath): init containers, containers, ephemeral containers. */
function containersWithPaths(spec: Obj, specPath: Path): [Obj, Path][] {
  const out: [Obj, Path][] = [];
  for (const key of ['initContainers', 'containers', 'ephemeralContainers']) {
    const list = Array.isArray(spec[key]) ? (spec[key] as unknown[]) : [];
    list.forEach((c, i) => {
      if (isObject(c)) out.push([c, specPath.child(key).index(i)]);
    });
  }
  return out;
}

/** ApparmorFieldForAnnotation, as JSON, or undefined. */
function appArmorFieldFor(annotation: string): Obj | undefined {
  if (annotation === 'unconfined') return { type: 'Unconfined' };
  if (annotation === 'runtime/default') return { type: 'RuntimeDefault' };
  if (annotation.startsWith('localhost/') && annotation.length > 'localhost/'.length)
    return { type: 'Localhost', localhostProfile: annotation.slice('localhost/'.length) };
  return undefined;
}

function sameAppArmor(a: Obj | undefined, b: Obj | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return asString(a.type) === asString(b.type) && (a.localhostProfile ?? null) === (b.localhostProfile ?? null);
}

/** A container port as Go prints the internal ContainerPort with `%+v`. */
function portText(p: Obj): string {
  return `{Name:${asString(p.name)} HostPort:${asNumber(p.hostPort)} ContainerPort:${asNumber(p.containerPort)} Protocol:${asString(p.protocol)} HostIP:${asString(p.hostIP)}}`;
}

interface PathAndSource {
  path: string;
  source: string;
}

const sourceText = (ps: PathAndSource): string => (ps.source !== '' ? `${goQuote(ps.path)} (${ps.source})` : goQuote(ps.path));

function overlapsWith(haystack: PathAndSource[], needle: PathAndSource): PathAndSource[] {
  if (needle.path === '') return [];
  return haystack.filter(
    (item) =>
      item.path !== '' &&
      ((item.path === needle.path && item.source === needle.source) ||
        `${item.path}/`.startsWith(`${needle.path}/`) ||
        `${needle.path}/`.startsWith(`${item.path}/`)),
  );
}

const trimSlashes = (p: string): string => p.replace(/\/+$/, '');

function pathsOf(items: unknown, source: string): PathAndSource[] {
  return (Array.isArray(items) ? items : []).filter(isObject).map((i) => ({ path: asString(i.path), source }));
}

/** The overlaps of one list of paths, each against those before it. */
function mappingOverlaps(paths: PathAndSource[]): string[] {
  const out: string[] = [];
  const seen: PathAndSource[] = [];
  for (const p of paths) {
    const ps = { ...p, path: trimSlashes(p.path) };
    for (const c of overlapsWith(seen, ps)) out.push(`${sourceText(ps)} with ${sourceText(c)}`);
    seen.push(ps);
  }
  return out;
}

const PROJECTION_KINDS = ['secret', 'downwardAPI', 'configMap', 'serviceAccountToken', 'clusterTrustBundle', 'podCertificate'];

/** The paths one projected volume source writes, as kube names their source. */
function projectionPaths(source: Obj): PathAndSource[] {
  const cm = objectAt(source, 'configMap');
  if (cm !== undefined && Array.isArray(cm.items)) return pathsOf(cm.items, `ConfigMap ${goQuote(asString(cm.name))}`);
  const secret = objectAt(source, 'secret');
  if (secret !== undefined && Array.isArray(secret.items)) return pathsOf(secret.items, `Secret ${goQuote(asString(secret.name))}`);
  const downward = objectAt(source, 'downwardAPI');
  if (downward !== undefined && Array.isArray(downward.items)) return pathsOf(downward.items, 'DownwardAPI');
  const token = objectAt(source, 'serviceAccountToken');
  if (token !== undefined) return [{ path: asString(token.path), source: 'ServiceAccountToken' }];
  const bundle = objectAt(source, 'clusterTrustBundle');
  if (bundle !== undefined) {
    const name = typeof bundle.name === 'string' ? bundle.name : asString(bundle.signerName);
    return [{ path: asString(bundle.path), source: `ClusterTrustBundle ${goQuote(name)}` }];
  }
  const cert = objectAt(source, 'podCertificate');
  if (cert !== undefined) {
    const out: PathAndSource[] = [];
    if (asString(cert.certificateChainPath) !== '') out.push({ path: asString(cert.certificateChainPath), source: 'PodCertificate chain' });
    if (asString(cert.keyPath) !== '') out.push({ path: asString(cert.keyPath), source: 'PodCertificate key' });
    if (asString(cert.credentialBundlePath) !== '') out.push({ path: asString(cert.credentialBundlePath), source: 'PodCertificate credential bundle' });
    return out;
  }
  return [];
}

/** warningsForOverlappingVirtualPaths: keys of one ConfigMap, Secret, DownwardAPI or projected volume written to one path. */
function overlappingPathWarnings(volumes: Obj[]): string[] {
  const out: string[] = [];
  const warn = (name: string, desc: string, body: string): void => {
    out.push(`volume ${goQuote(name)} (${desc}): overlapping paths: ${body}`);
  };
  for (const v of volumes) {
    const name = asString(v.name);
    const cm = objectAt(v, 'configMap');
    if (cm !== undefined && Array.isArray(cm.items))
      for (const o of mappingOverlaps(pathsOf(cm.items, ''))) warn(name, `ConfigMap ${goQuote(asString(cm.name))}`, o);
    const secret = objectAt(v, 'secret');
    if (secret !== undefined && Array.isArray(secret.items)) {
      for (const o of mappingOverlaps(pathsOf(secret.items, ''))) warn(name, `Secret ${goQuote(asString(secret.secretName))}`, o);
    }
    const downward = objectAt(v, 'downwardAPI');
    if (downward !== undefined && Array.isArray(downward.items)) for (const o of mappingOverlaps(pathsOf(downward.items, ''))) warn(name, 'DownwardAPI', o);
    const projected = objectAt(v, 'projected');
    if (projected === undefined) continue;
    const all: PathAndSource[] = [];
    for (const source of objectsAt(projected, 'sources')) {
      if (!PROJECTION_KINDS.some((k) => has(source, k))) {
        out.push(`volume ${goQuote(name)} (Projected) has no sources provided`);
        continue;
      }
      for (const p of projectionPaths(source)) {
        const ps = { ...p, path: trimSlashes(p.path) };
        for (const c of overlapsWith(all, ps)) warn(name, 'Projected', `${sourceText(ps)} with ${sourceText(c)}`);
        all.push(ps);
      }
    }
  }
  return out;
}

function nullSelectorWarnings(terms: Obj[], path: Path, weighted: boolean): string[] {
  const out: string[] = [];
  terms.forEach((t, i) => {
    const term = weighted ? (objectAt(t, 'podAffinityTerm') ?? {}) : t;
    if (!has(term, 'labelSelector')) {
      out.push(
        `${(weighted ? path.index(i).child('podAffinityTerm', 'labelSelector') : path.index(i).child('labelSelector')).s}: a null labelSelector results in matching no pod`,
      );
    }
  });
  return out;
}

/** warningsForPodSpecAndMeta: `at` is undefined for a Pod, the template's path for a pod template. */
function podSpecWarnings(at: Path | undefined, spec: Obj, meta: Obj): string[] {
  const base = at ?? ROOT;
  const specPath = base.child('spec');
  const annotations = asObject(meta.annotations);
  const out: string[] = [];

  for (const key of Object.keys(asObject(spec.nodeSelector))) {
    const msg = deprecatedNodeLabel(key);
    if (msg !== undefined) out.push(`${specPath.child('nodeSelector').key(key).s}: ${msg}`);
  }
  const affinity = objectAt(spec, 'affinity');
  const nodeAffinity = affinity === undefined ? undefined : objectAt(affinity, 'nodeAffinity');
  if (nodeAffinity !== undefined) {
    const required = objectAt(nodeAffinity, 'requiredDuringSchedulingIgnoredDuringExecution');
    if (required !== undefined) {
      const termsPath = specPath.child('affinity', 'nodeAffinity', 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms');
      objectsAt(required, 'nodeSelectorTerms').forEach((t, i) => out.push(...nodeSelectorTermWarnings(t, false, termsPath.index(i))));
    }
    const preferredPath = specPath.child('affinity', 'nodeAffinity', 'preferredDuringSchedulingIgnoredDuringExecution');
    objectsAt(nodeAffinity, 'preferredDuringSchedulingIgnoredDuringExecution').forEach((t, i) =>
      out.push(...nodeSelectorTermWarnings(objectAt(t, 'preference') ?? {}, true, preferredPath.index(i).child('preference'))),
    );
  }
  objectsAt(spec, 'topologySpreadConstraints').forEach((t, i) => {
    const path = specPath.child('topologySpreadConstraints').index(i);
    const msg = deprecatedNodeLabel(asString(t.topologyKey));
    if (msg !== undefined) out.push(`${path.child('topologyKey').s}: ${asString(t.topologyKey)} is ${msg}`);
    if (!has(t, 'labelSelector')) out.push(`${path.child('labelSelector').s}: a null labelSelector results in matching no pod`);
  });

  for (const [key, message] of DEPRECATED_ANNOTATIONS) {
    if (Object.hasOwn(annotations, key)) out.push(`${base.child('metadata', 'annotations').key(key).s}: ${message}`);
  }

  const volumes = objectsAt(spec, 'volumes');
  volumes.forEach((v, i) => {
    const path = specPath.child('volumes').index(i);
    for (const [plugin, message] of DEPRECATED_VOLUMES) if (has(v, plugin)) out.push(`${path.child(plugin).s}: ${message}`);
    const claim = objectAt(objectAt(v, 'ephemeral') ?? {}, 'volumeClaimTemplate');
    if (claim !== undefined) out.push(...pvcSpecWarnings(path.child('ephemeral', 'volumeClaimTemplate', 'spec'), objectAt(claim, 'spec')));
    for (const [plugin, message] of REMOVED_VOLUMES) if (has(v, plugin)) out.push(`${path.child(plugin).s}: ${message}`);
  });
  out.push(...overlappingPathWarnings(volumes));

  const aliases = objectsAt(spec, 'hostAliases');
  if (aliases.length > 1) {
    const ips = new Set<string>();
    aliases.forEach((a, i) => {
      const ip = asString(a.ip);
      if (ips.has(ip)) out.push(`${specPath.child('hostAliases').index(i).child('ip').s}: duplicate ip ${goQuote(ip)}`);
      else ips.add(ip);
    });
  }
  const pullSecrets = objectsAt(spec, 'imagePullSecrets');
  if (pullSecrets.length > 1) {
    const names = new Set<string>();
    pullSecrets.forEach((s, i) => {
      const name = asString(s.name);
      if (names.has(name)) out.push(`${specPath.child('imagePullSecrets').index(i).child('name').s}: duplicate name ${goQuote(name)}`);
      else names.add(name);
    });
  }
  pullSecrets.forEach((s, i) => {
    if (asString(s.name) === '') out.push(`${specPath.child('imagePullSecrets').index(i).child('name').s}: invalid empty name ""`);
  });

  const overhead = asObject(spec.overhead);
  for (const r of ['memory', 'ephemeral-storage']) out.push(...fractionalBytes(specPath.child('overhead').key(r), overhead[r]));

  const podSecurity = objectAt(spec, 'securityContext');
  if (!has(podSecurity, 'seccompProfile') && Object.hasOwn(annotations, SECCOMP_POD_ANNOTATION)) {
    out.push(`${base.child('metadata', 'annotations').key(SECCOMP_POD_ANNOTATION).s}: non-functional in v1.27+; use the "seccompProfile" field instead`);
  }
  const podAppArmor = podSecurity === undefined ? undefined : objectAt(podSecurity, 'appArmorProfile');

  const containers = containersWithPaths(spec, specPath);
  for (const [c, path] of containers) {
    const name = asString(c.name);
    const sc = objectAt(c, 'securityContext');
    if (!has(sc, 'seccompProfile') && Object.hasOwn(annotations, SECCOMP_CONTAINER_PREFIX + name)) {
      out.push(
        `${base.child('metadata', 'annotations').key(SECCOMP_CONTAINER_PREFIX + name).s}: non-functional in v1.27+; use the "seccompProfile" field instead`,
      );
    }
    // Pods warn about these annotations as their fields are synced (appArmorSkewWarnings).
    const annotation = annotations[APPARMOR_PREFIX + name];
    if (at !== undefined && !has(sc, 'appArmorProfile') && typeof annotation === 'string') {
      if (podAppArmor === undefined || !sameAppArmor(podAppArmor, appArmorFieldFor(annotation))) {
        out.push(`${base.child('metadata', 'annotations').key(APPARMOR_PREFIX + name).s}: deprecated since v1.30; use the "appArmorProfile" field instead`);
      }
    }
    const resources = objectAt(c, 'resources') ?? {};
    const limits = asObject(resources.limits);
    const requests = asObject(resources.requests);
    out.push(...fractionalBytes(path.child('resources', 'limits').key('memory'), limits.memory));
    out.push(...fractionalBytes(path.child('resources', 'requests').key('memory'), requests.memory));
    out.push(...fractionalBytes(path.child('resources', 'limits').key('ephemeral-storage'), limits['ephemeral-storage']));
    out.push(...fractionalBytes(path.child('resources', 'requests').key('ephemeral-storage'), requests['ephemeral-storage']));
    const env = objectsAt(c, 'env');
    if (env.length > 1) {
      const names = new Set<string>();
      env.forEach((e, i) => {
        const envName = asString(e.name);
        if (!names.has(envName)) {
          names.add(envName);
          return;
        }
        const ref = `$(${envName})`;
        const value = asString(e.value);
        if (has(e, 'valueFrom') || value === ref || !value.includes(ref)) {
          out.push(`${path.child('env').index(i).s}: hides previous definition of ${goQuote(envName)}, which may be dropped when using apply`);
        }
      });
    }
  }

  const byPort = new Map<string, { path: Path; port: Obj }[]>();
  for (const [c, path] of containers) {
    objectsAt(c, 'ports').forEach((port, i) => {
      const here = path.child('ports').index(i);
      if (asString(port.hostIP) !== '' && asNumber(port.hostPort) === 0) out.push(`${here.s}: hostIP set without hostPort: ${portText(port)}`);
      const key = `${asNumber(port.containerPort)}/${asString(port.protocol)}`;
      const others = byPort.get(key) ?? [];
      for (const other of others) {
        const [ipA, ipB] = [asString(port.hostIP), asString(other.port.hostIP)];
        const [hpA, hpB] = [asNumber(port.hostPort), asNumber(other.port.hostPort)];
        if (ipA === ipB && hpA === hpB) out.push(`${here.s}: duplicate port definition with ${other.path.s}`);
        else if (hpA === 0 || hpB === 0) out.push(`${here.s}: overlapping port definition with ${other.path.s}`);
        else if (hpA === hpB && (ipA === '') !== (ipB === '')) out.push(`${here.s}: dangerously ambiguous port definition with ${other.path.s}`);
      }
      byPort.set(key, [...others, { path: here, port }]);
    });
  }
  const portNames = new Map<string, Path>();
  for (const [c, path] of containers) {
    objectsAt(c, 'ports').forEach((port, i) => {
      const name = asString(port.name);
      if (name === '') return;
      const here = path.child('ports').index(i);
      const other = portNames.get(name);
      if (other !== undefined) {
        out.push(`${here.s}: duplicate port name ${goQuote(name)} with ${other.s}, services and probes that select ports by name will use ${other.s}`);
      } else portNames.set(name, here);
    });
  }

  if (typeof spec.terminationGracePeriodSeconds === 'number' && spec.terminationGracePeriodSeconds < 0) {
    out.push(`${specPath.child('terminationGracePeriodSeconds').s}: must be >= 0; negative values are invalid and will be treated as 1`);
  }

  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = affinity === undefined ? undefined : objectAt(affinity, kind);
    if (a === undefined) continue;
    const path = specPath.child('affinity', kind);
    out.push(
      ...nullSelectorWarnings(
        objectsAt(a, 'requiredDuringSchedulingIgnoredDuringExecution'),
        path.child('requiredDuringSchedulingIgnoredDuringExecution'),
        false,
      ),
    );
    out.push(
      ...nullSelectorWarnings(
        objectsAt(a, 'preferredDuringSchedulingIgnoredDuringExecution'),
        path.child('preferredDuringSchedulingIgnoredDuringExecution'),
        true,
      ),
    );
  }

  const dnsConfig = objectAt(spec, 'dnsConfig');
  const nameservers = dnsConfig !== undefined && Array.isArray(dnsConfig.nameservers) ? dnsConfig.nameservers : [];
  nameservers.forEach((ns: unknown, i: number) => out.push(...ipWarnings(specPath.child('dnsConfig', 'nameservers').index(i), asString(ns))));
  aliases.forEach((a, i) => out.push(...ipWarnings(specPath.child('hostAliases').index(i).child('ip'), asString(a.ip))));
  return out;
}

/** GetWarningsForPodTemplate: the warnings of the template at `path` (e.g. `spec.template`). */
export function podTemplateWarnings(path: string, template: unknown): string[] {
  if (!isObject(template)) return [];
  return podSpecWarnings(new Path(path), objectAt(template, 'spec') ?? {}, objectAt(template, 'metadata') ?? {});
}

/** The pod strategy's WarningsOnCreate: the name as a hostname, then GetWarningsForPod. */
export function podCreateWarnings(pod: Obj): string[] {
  const meta = objectAt(pod, 'metadata') ?? {};
  const out: string[] = [];
  const msgs = isDNS1123Label(asString(meta.name));
  if (msgs.length > 0) {
    out.push(`metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [${msgs.join(' ')}]`);
  }
  return [...out, ...podSpecWarnings(undefined, objectAt(pod, 'spec') ?? {}, meta)];
}

/** The pod status strategy's WarningsOnUpdate: pod and host IPs in non-standard forms. */
export function podStatusWarnings(pod: Obj): string[] {
  const status = objectAt(pod, 'status') ?? {};
  const out: string[] = [];
  for (const key of ['podIPs', 'hostIPs']) {
    objectsAt(status, key).forEach((entry, i) => out.push(...ipWarnings(new Path('status').child(key).index(i).child('ip'), asString(entry.ip))));
  }
  return out;
}

/** Workload strategies' name warning (Deployments, ReplicaSets, Jobs, CronJobs, ReplicationControllers). */
export function podNamePrefixWarnings(obj: Obj): string[] {
  const msgs = isDNS1123Label(asString((objectAt(obj, 'metadata') ?? {}).name));
  if (msgs.length === 0) return [];
  return [`metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [${msgs.join(' ')}]`];
}

/**
 * applyAppArmorVersionSkew's warnings, given a Pod before its fields are synced: a container's
 * AppArmor annotation without the field, when it names no valid profile or one other than the pod's.
 */
export function appArmorSkewWarnings(pod: Obj, valid: (profile: Obj) => boolean): string[] {
  const spec = objectAt(pod, 'spec');
  if (spec === undefined || objectAt(spec, 'os')?.name === 'windows') return [];
  const annotations = asObject((objectAt(pod, 'metadata') ?? {}).annotations);
  const podProfile = objectAt(objectAt(spec, 'securityContext') ?? {}, 'appArmorProfile');
  const out: string[] = [];
  for (const [c] of containersWithPaths(spec, ROOT)) {
    const key = APPARMOR_PREFIX + asString(c.name);
    const annotation = annotations[key];
    if (typeof annotation !== 'string' || has(objectAt(c, 'securityContext'), 'appArmorProfile')) continue;
    const profile = appArmorFieldFor(annotation);
    const usable = profile !== undefined && valid(profile) ? profile : undefined;
    if (usable === undefined || !sameAppArmor(usable, podProfile))
      out.push(`metadata.annotations[${key}]: deprecated since v1.30; use the "appArmorProfile" field instead`);
  }
  return out;
}
