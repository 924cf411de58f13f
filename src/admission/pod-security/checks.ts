/**
 * The Pod Security Standards checks of k8s.io/pod-security-admission 1.36, each in every version it
 * has: what a pod's metadata and spec may not do at the `baseline` and `restricted` levels, and the
 * reason and detail kube words a violation with (`host namespaces (hostNetwork=true)`).
 */
import { goQuote } from '../../codec/go-quote.js';
import { arrayField, asObject, asString } from '../../api/values.js';
import { objects } from '../../validation/value-access.js';
import type { Obj } from '../../api/object-util.js';

/** A violation: the succinct reason and, optionally, the values behind it. */
export interface Violation {
  reason: string;
  detail: string;
}

/** A check of one pod; undefined when the pod passes. */
export type CheckFn = (meta: Obj, spec: Obj) => Violation | undefined;

/** One check: its id, level, and the revisions starting at a policy minor version (1.x). */
export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  versions: { since: number; check: CheckFn; overrides?: string[] }[];
}

const plural = (singular: string, pluralForm: string, n: number): string => (n === 1 ? singular : pluralForm);
const joinQuote = (items: readonly string[]): string => (items.length === 0 ? '' : `"${items.join('", "')}"`);
/** Go's sets.NewString(...).List(): distinct, sorted bytewise. */
const sortedSet = (items: Iterable<string>): string[] => [...new Set(items)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const present = (v: unknown): boolean => v !== undefined && v !== null;

/** Init containers, containers and ephemeral containers, in that order (visitContainers). */
function containers(spec: Obj): Obj[] {
  return [...objects(spec.initContainers), ...objects(spec.containers), ...objects(spec.ephemeralContainers)];
}

const securityContext = (o: Obj): Obj | undefined => (present(o.securityContext) ? asObject(o.securityContext) : undefined);
const isWindows = (spec: Obj): boolean => asObject(spec.os).name === 'windows';
/** A pod in its own user namespace (`hostUsers: false`) is held to relaxed rules from 1.35. */
const inUserNamespace = (spec: Obj): boolean => spec.hostUsers === false;
const containerList = (names: string[]): string => `${plural('container', 'containers', names.length)} ${joinQuote(names)}`;

const allowPrivilegeEscalation: CheckFn = (_meta, spec) => {
  const bad = containers(spec)
    .filter((c) => securityContext(c)?.allowPrivilegeEscalation !== false)
    .map((c) => asString(c.name));
  if (bad.length === 0) return undefined;
  return { reason: 'allowPrivilegeEscalation != false', detail: `${containerList(bad)} must set securityContext.allowPrivilegeEscalation=false` };
};

const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';

const appArmorProfile: CheckFn = (meta, spec) => {
  const allowedType = (t: unknown): boolean => t === 'RuntimeDefault' || t === 'Localhost';
  const setters: string[] = [];
  const values = new Set<string>();
  const podProfile = securityContext(spec)?.appArmorProfile;
  if (present(podProfile) && !allowedType(asObject(podProfile).type)) {
    setters.push('pod');
    values.add(asString(asObject(podProfile).type));
  }
  const bad: string[] = [];
  for (const c of containers(spec)) {
    const profile = securityContext(c)?.appArmorProfile;
    if (present(profile) && !allowedType(asObject(profile).type)) {
      bad.push(asString(c.name));
      values.add(asString(asObject(profile).type));
    }
  }
  if (bad.length > 0) setters.push(containerList(bad));
  const annotations = Object.entries(asObject(meta.annotations))
    .filter(([k, v]) => k.startsWith(APPARMOR_ANNOTATION_PREFIX) && !(asString(v) === '' || v === 'runtime/default' || asString(v).startsWith('localhost/')))
    .map(([k, v]) => `${k}=${goQuote(asString(v))}`)
    .sort();
  const valueList = [...sortedSet(values), ...annotations];
  if (annotations.length > 0) setters.push(plural('annotation', 'annotations', annotations.length));
  if (setters.length === 0) return undefined;
  return {
    reason: plural('forbidden AppArmor profile', 'forbidden AppArmor profiles', valueList.length),
    detail: `${setters.join(' and ')} must not set AppArmor profile type to ${joinQuote(valueList)}`,
  };
};

const DEFAULT_CAPABILITIES = new Set([
  'AUDIT_WRITE',
  'CHOWN',
  'DAC_OVERRIDE',
  'FOWNER',
  'FSETID',
  'KILL',
  'MKNOD',
  'NET_BIND_SERVICE',
  'SETFCAP',
  'SETGID',
  'SETPCAP',
  'SETUID',
  'SYS_CHROOT',
]);

const capabilitiesBaseline: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const caps: string[] = [];
  for (const c of containers(spec)) {
    const capabilities = securityContext(c)?.capabilities;
    if (!present(capabilities)) continue;
    const extra = (Array.isArray(asObject(capabilities).add) ? (asObject(capabilities).add as unknown[]) : [])
      .map(asString)
      .filter((n) => !DEFAULT_CAPABILITIES.has(n));
    if (extra.length > 0) {
      bad.push(asString(c.name));
      caps.push(...extra);
    }
  }
  if (bad.length === 0) return undefined;
  return {
    reason: 'non-default capabilities',
    detail: `${containerList(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
  };
};

const capabilitiesRestricted: CheckFn = (_meta, spec) => {
  const missingDropAll: string[] = [];
  const adding: string[] = [];
  const caps: string[] = [];
  for (const c of containers(spec)) {
    const capabilities = securityContext(c)?.capabilities;
    if (!present(capabilities)) {
      missingDropAll.push(asString(c.name));
      continue;
    }
    const capabilityNames = (key: string): string[] => arrayField(capabilities, key).map(asString);
    if (!capabilityNames('drop').includes('ALL')) missingDropAll.push(asString(c.name));
    const forbidden = capabilityNames('add').filter((n) => n !== 'NET_BIND_SERVICE');
    if (forbidden.length > 0) {
      adding.push(asString(c.name));
      caps.push(...forbidden);
    }
  }
  const details: string[] = [];
  if (missingDropAll.length > 0) details.push(`${containerList(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length > 0) details.push(`${containerList(adding)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`);
  if (details.length === 0) return undefined;
  return { reason: 'unrestricted capabilities', detail: details.join('; ') };
};

const hostNamespaces: CheckFn = (_meta, spec) => {
  const shared = (['hostNetwork', 'hostPID', 'hostIPC'] as const).filter((k) => spec[k] === true).map((k) => `${k}=true`);
  return shared.length === 0 ? undefined : { reason: 'host namespaces', detail: shared.join(', ') };
};

const hostPathVolumes: CheckFn = (_meta, spec) => {
  const volumes = objects(spec.volumes)
    .filter((v) => present(v.hostPath))
    .map((v) => asString(v.name));
  return volumes.length === 0 ? undefined : { reason: 'hostPath volumes', detail: `${plural('volume', 'volumes', volumes.length)} ${joinQuote(volumes)}` };
};

const hostPorts: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const ports: string[] = [];
  for (const c of containers(spec)) {
    const used = objects(c.ports)
      .map((p) => (typeof p.hostPort === 'number' ? p.hostPort : 0))
      .filter((p) => p !== 0);
    if (used.length > 0) {
      bad.push(asString(c.name));
      ports.push(...used.map(String));
    }
  }
  if (bad.length === 0) return undefined;
  const distinct = sortedSet(ports);
  return {
    reason: 'hostPort',
    detail: `${containerList(bad)} ${plural('uses', 'use', bad.length)} ${plural('hostPort', 'hostPorts', distinct.length)} ${distinct.join(', ')}`,
  };
};

/** The hosts an HTTP or TCP probe or lifecycle handler names. */
function handlerHosts(handler: unknown): string[] {
  if (!present(handler)) return [];
  const h = asObject(handler);
  return [asString(asObject(h.httpGet).host), asString(asObject(h.tcpSocket).host)].filter((host) => host !== '');
}

const hostProbesAndHostLifecycle: CheckFn = (_meta, spec) => {
  const bad = new Set<string>();
  const hosts = new Set<string>();
  for (const c of containers(spec)) {
    const lifecycle = asObject(c.lifecycle);
    for (const handler of [c.livenessProbe, c.readinessProbe, c.startupProbe, lifecycle.postStart, lifecycle.preStop]) {
      const found = handlerHosts(handler);
      if (found.length === 0) continue;
      bad.add(asString(c.name));
      for (const h of found) hosts.add(h);
    }
  }
  if (bad.size === 0) return undefined;
  return {
    reason: 'probe or lifecycle host',
    detail:
      `${containerList(sortedSet(bad))} ${plural('uses', 'use', bad.size)} ` +
      `${plural('probe or lifecycle host', 'probe or lifecycle hosts', hosts.size)} ${joinQuote(sortedSet(hosts))}`,
  };
};

const privileged: CheckFn = (_meta, spec) => {
  const bad = containers(spec)
    .filter((c) => securityContext(c)?.privileged === true)
    .map((c) => asString(c.name));
  return bad.length === 0 ? undefined : { reason: 'privileged', detail: `${containerList(bad)} must not set securityContext.privileged=true` };
};

const procMount: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const c of containers(spec)) {
    const mount = securityContext(c)?.procMount;
    if (!present(mount) || mount === 'Default') continue;
    bad.push(asString(c.name));
    types.push(asString(mount));
  }
  if (bad.length === 0) return undefined;
  return { reason: 'procMount', detail: `${containerList(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}` };
};

const ALLOWED_VOLUME_SOURCES = ['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret'];
/** The restricted volume sources, in the order kube names the first one a volume has. */
const RESTRICTED_VOLUME_SOURCES = [
  'hostPath',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'gitRepo',
  'nfs',
  'iscsi',
  'glusterfs',
  'rbd',
  'flexVolume',
  'cinder',
  'cephfs',
  'flocker',
  'fc',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'scaleIO',
];
/** Sources whose name in the message differs from the field name. */
const SOURCE_NAMES: Record<string, string> = { storageos: 'storageos' };

const restrictedVolumes: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const volume of objects(spec.volumes)) {
    if (ALLOWED_VOLUME_SOURCES.some((k) => present(volume[k]))) continue;
    bad.push(asString(volume.name));
    const source = RESTRICTED_VOLUME_SOURCES.find((k) => present(volume[k])) ?? (present(volume.storageos) ? SOURCE_NAMES.storageos : 'unknown');
    types.push(source);
  }
  if (bad.length === 0) return undefined;
  const distinct = sortedSet(types);
  return {
    reason: 'restricted volume types',
    detail:
      `${plural('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${plural('uses', 'use', bad.length)} ` +
      `${plural('restricted volume type', 'restricted volume types', distinct.length)} ${joinQuote(distinct)}`,
  };
};

const runAsNonRoot: CheckFn = (_meta, spec) => {
  const setters: string[] = [];
  let podNonRoot = false;
  const podValue = securityContext(spec)?.runAsNonRoot;
  if (typeof podValue === 'boolean') {
    if (!podValue) setters.push('pod');
    else podNonRoot = true;
  }
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containers(spec)) {
    const value = securityContext(c)?.runAsNonRoot;
    if (typeof value === 'boolean') {
      if (!value) explicit.push(asString(c.name));
    } else if (!podNonRoot) implicit.push(asString(c.name));
  }
  if (explicit.length > 0) setters.push(containerList(explicit));
  if (setters.length > 0) return { reason: 'runAsNonRoot != true', detail: `${setters.join(' and ')} must not set securityContext.runAsNonRoot=false` };
  if (implicit.length > 0) return { reason: 'runAsNonRoot != true', detail: `pod or ${containerList(implicit)} must set securityContext.runAsNonRoot=true` };
  return undefined;
};

const runAsUser: CheckFn = (_meta, spec) => {
  const setters: string[] = [];
  if (securityContext(spec)?.runAsUser === 0) setters.push('pod');
  const bad = containers(spec)
    .filter((c) => securityContext(c)?.runAsUser === 0)
    .map((c) => asString(c.name));
  if (bad.length > 0) setters.push(containerList(bad));
  return setters.length === 0 ? undefined : { reason: 'runAsUser=0', detail: `${setters.join(' and ')} must not set runAsUser=0` };
};

function seLinuxOptions(allowedTypes: Set<string>): CheckFn {
  return (_meta, spec) => {
    const setters: string[] = [];
    const types = new Set<string>();
    let setUser = false;
    let setRole = false;
    const valid = (options: Obj): boolean => {
      let ok = true;
      if (!allowedTypes.has(asString(options.type))) {
        ok = false;
        types.add(asString(options.type));
      }
      if (asString(options.user) !== '') {
        ok = false;
        setUser = true;
      }
      if (asString(options.role) !== '') {
        ok = false;
        setRole = true;
      }
      return ok;
    };
    const podOptions = securityContext(spec)?.seLinuxOptions;
    if (present(podOptions) && !valid(asObject(podOptions))) setters.push('pod');
    const bad: string[] = [];
    for (const c of containers(spec)) {
      const options = securityContext(c)?.seLinuxOptions;
      if (present(options) && !valid(asObject(options))) bad.push(asString(c.name));
    }
    if (bad.length > 0) setters.push(containerList(bad));
    if (setters.length === 0) return undefined;
    const data: string[] = [];
    if (types.size > 0) data.push(`${plural('type', 'types', types.size)} ${joinQuote(sortedSet(types))}`);
    if (setUser) data.push('user may not be set');
    if (setRole) data.push('role may not be set');
    return { reason: 'seLinuxOptions', detail: `${setters.join(' and ')} set forbidden securityContext.seLinuxOptions: ${data.join('; ')}` };
  };
}

const SELINUX_TYPES_1_0 = new Set(['', 'container_t', 'container_init_t', 'container_kvm_t']);
const SELINUX_TYPES_1_31 = new Set([...SELINUX_TYPES_1_0, 'container_engine_t']);

const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
const validSeccompType = (t: unknown): boolean => t === 'Localhost' || t === 'RuntimeDefault';

const seccompAnnotations: CheckFn = (meta, spec) => {
  const annotations = asObject(meta.annotations);
  const validValue = (v: string): boolean => v === 'runtime/default' || v === 'docker/default' || v.startsWith('localhost/');
  const forbidden = new Set<string>();
  const checkKey = (key: string): void => {
    if (key in annotations && !validValue(asString(annotations[key]))) forbidden.add(`${key}=${goQuote(asString(annotations[key]))}`);
  };
  checkKey(SECCOMP_POD_ANNOTATION);
  for (const c of containers(spec)) checkKey(SECCOMP_CONTAINER_ANNOTATION_PREFIX + asString(c.name));
  if (forbidden.size === 0) return undefined;
  return { reason: 'seccompProfile', detail: `forbidden ${plural('annotation', 'annotations', forbidden.size)} ${sortedSet(forbidden).join(', ')}` };
};

/** The seccomp profile fields; `requireSet`: restricted also refuses a profile left unset. */
function seccompProfile(requireSet: boolean): CheckFn {
  return (_meta, spec) => {
    const setters: string[] = [];
    const values = new Set<string>();
    let podSet = false;
    const podProfile = securityContext(spec)?.seccompProfile;
    if (present(podProfile)) {
      if (!validSeccompType(asObject(podProfile).type)) {
        setters.push('pod');
        values.add(asString(asObject(podProfile).type));
      } else podSet = true;
    }
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const c of containers(spec)) {
      const profile = securityContext(c)?.seccompProfile;
      if (present(profile)) {
        if (!validSeccompType(asObject(profile).type)) {
          explicit.push(asString(c.name));
          values.add(asString(asObject(profile).type));
        }
      } else if (!podSet) implicit.push(asString(c.name));
    }
    if (explicit.length > 0) setters.push(containerList(explicit));
    if (setters.length > 0) {
      return {
        reason: 'seccompProfile',
        detail: `${setters.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`,
      };
    }
    if (requireSet && implicit.length > 0) {
      return {
        reason: 'seccompProfile',
        detail: `pod or ${containerList(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
      };
    }
    return undefined;
  };
}

const SYSCTLS_1_0 = [
  'kernel.shm_rmid_forced',
  'net.ipv4.ip_local_port_range',
  'net.ipv4.tcp_syncookies',
  'net.ipv4.ping_group_range',
  'net.ipv4.ip_unprivileged_port_start',
];
const SYSCTLS_1_27 = [...SYSCTLS_1_0, 'net.ipv4.ip_local_reserved_ports'];
const SYSCTLS_1_29 = [
  ...SYSCTLS_1_27,
  'net.ipv4.tcp_keepalive_time',
  'net.ipv4.tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_intvl',
  'net.ipv4.tcp_keepalive_probes',
];
const SYSCTLS_1_32 = [...SYSCTLS_1_29, 'net.ipv4.tcp_rmem', 'net.ipv4.tcp_wmem'];

function sysctls(allowed: readonly string[]): CheckFn {
  return (_meta, spec) => {
    const forbidden = objects(securityContext(spec)?.sysctls)
      .map((s) => asString(s.name))
      .filter((n) => !allowed.includes(n));
    return forbidden.length === 0 ? undefined : { reason: 'forbidden sysctls', detail: forbidden.join(', ') };
  };
}

const windowsHostProcess: CheckFn = (_meta, spec) => {
  const hostProcess = (o: Obj): boolean => asObject(securityContext(o)?.windowsOptions).hostProcess === true;
  const setters: string[] = [];
  if (hostProcess(spec)) setters.push('pod');
  const bad = containers(spec)
    .filter(hostProcess)
    .map((c) => asString(c.name));
  if (bad.length > 0) setters.push(containerList(bad));
  return setters.length === 0
    ? undefined
    : { reason: 'hostProcess', detail: `${setters.join(' and ')} must not set securityContext.windowsOptions.hostProcess=true` };
};

/** A check skipped for Windows pods (the restricted Linux-only rules from 1.25). */
const unlessWindows =
  (check: CheckFn): CheckFn =>
  (meta, spec) =>
    isWindows(spec) ? undefined : check(meta, spec);
/** A check skipped for pods in their own user namespace (from 1.35). */
const unlessUserNamespace =
  (check: CheckFn): CheckFn =>
  (meta, spec) =>
    inUserNamespace(spec) ? undefined : check(meta, spec);

/** Every check with its revisions (pod-security-admission's DefaultChecks). */
export const CHECKS: readonly Check[] = [
  {
    id: 'allowPrivilegeEscalation',
    level: 'restricted',
    versions: [
      { since: 8, check: allowPrivilegeEscalation },
      { since: 25, check: unlessWindows(allowPrivilegeEscalation) },
    ],
  },
  { id: 'appArmorProfile', level: 'baseline', versions: [{ since: 0, check: appArmorProfile }] },
  { id: 'capabilities_baseline', level: 'baseline', versions: [{ since: 0, check: capabilitiesBaseline }] },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { since: 22, check: capabilitiesRestricted, overrides: ['capabilities_baseline'] },
      { since: 25, check: unlessWindows(capabilitiesRestricted), overrides: ['capabilities_baseline'] },
    ],
  },
  { id: 'hostNamespaces', level: 'baseline', versions: [{ since: 0, check: hostNamespaces }] },
  { id: 'hostPathVolumes', level: 'baseline', versions: [{ since: 0, check: hostPathVolumes }] },
  { id: 'hostPorts', level: 'baseline', versions: [{ since: 0, check: hostPorts }] },
  { id: 'hostProbesAndHostLifecycle', level: 'baseline', versions: [{ since: 34, check: hostProbesAndHostLifecycle }] },
  { id: 'privileged', level: 'baseline', versions: [{ since: 0, check: privileged }] },
  {
    id: 'procMount',
    level: 'baseline',
    versions: [
      { since: 0, check: procMount },
      { since: 35, check: unlessUserNamespace(procMount) },
    ],
  },
  { id: 'procMount_restricted', level: 'restricted', versions: [{ since: 35, check: procMount, overrides: ['procMount'] }] },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ since: 0, check: restrictedVolumes, overrides: ['hostPathVolumes'] }] },
  {
    id: 'runAsNonRoot',
    level: 'restricted',
    versions: [
      { since: 0, check: runAsNonRoot },
      { since: 35, check: unlessUserNamespace(runAsNonRoot) },
    ],
  },
  {
    id: 'runAsUser',
    level: 'restricted',
    versions: [
      { since: 23, check: runAsUser },
      { since: 35, check: unlessUserNamespace(runAsUser) },
    ],
  },
  {
    id: 'seLinuxOptions',
    level: 'baseline',
    versions: [
      { since: 0, check: seLinuxOptions(SELINUX_TYPES_1_0) },
      { since: 31, check: seLinuxOptions(SELINUX_TYPES_1_31) },
    ],
  },
  {
    id: 'seccompProfile_baseline',
    level: 'baseline',
    versions: [
      { since: 0, check: seccompAnnotations },
      { since: 19, check: seccompProfile(false) },
    ],
  },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { since: 19, check: seccompProfile(true), overrides: ['seccompProfile_baseline'] },
      { since: 25, check: unlessWindows(seccompProfile(true)), overrides: ['seccompProfile_baseline'] },
    ],
  },
  {
    id: 'sysctls',
    level: 'baseline',
    versions: [
      { since: 0, check: sysctls(SYSCTLS_1_0) },
      { since: 27, check: sysctls(SYSCTLS_1_27) },
      { since: 29, check: sysctls(SYSCTLS_1_29) },
      { since: 32, check: sysctls(SYSCTLS_1_32) },
    ],
  },
  { id: 'windowsHostProcess', level: 'baseline', versions: [{ since: 0, check: windowsHostProcess }] },
];

/** The newest policy minor version any check has: `latest` and newer versions evaluate as this one. */
export const NEWEST_POLICY_MINOR = Math.max(...CHECKS.flatMap((c) => c.versions.map((v) => v.since)));
