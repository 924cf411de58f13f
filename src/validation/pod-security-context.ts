/**
 * kube 1.36's validation of a pod's and a container's security context (validatePodSpecSecurityContext,
 * validateSysctls, ValidateSecurityContext): user and group ids, sysctl names (kube's regex with `.` or
 * `/` separators, unique, and no network or IPC sysctl in a namespace shared with the host), seccomp
 * and AppArmor profiles (a supported type, `localhostProfile` set exactly for Localhost), process
 * namespace sharing, /proc mount types, Windows options (./windows-options.ts), the supplemental-groups
 * and SELinux change policies, and no privilege escalation refused alongside privileged mode or
 * CAP_SYS_ADMIN. Whether a sysctl is safe is the kubelet's decision, not the API server's: any
 * well-formed name is accepted here, and values are not checked. Privileged containers are accepted
 * (kube-apiserver refuses them only without --allow-privileged, which clusters set).
 */
import type { StatusCause } from '../api/errors.js';
import { goJson, invalidField, notSupportedField, requiredField, tooLongField, duplicateField } from './field-errors.js';
import { idProblems } from './value-formats.js';
import { localDescendingPath } from './volumes.js';
import { validateWindowsOptions } from './windows-options.js';
import { asArray, asString, numberOrUndefined, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const SYSCTL_MAX_LENGTH = 253;
const SYSCTL_SEGMENT = '[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const SYSCTL_PATTERN = `^(${SYSCTL_SEGMENT}[\\./])*${SYSCTL_SEGMENT}$`;
const SYSCTL_RE = new RegExp(SYSCTL_PATTERN);
const PROFILE_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'];
const PROC_MOUNT_TYPES = ['Default', 'Unmasked'];
const FS_GROUP_CHANGE_POLICIES = ['Always', 'OnRootMismatch'];
const SUPPLEMENTAL_GROUPS_POLICIES = ['Merge', 'Strict'];
const SELINUX_CHANGE_POLICIES = ['MountOption', 'Recursive'];
const MAX_APPARMOR_PROFILE_LENGTH = 4095;
/** Sysctls in the IPC namespace by full name (component-helpers' sysctl.GetNamespace). */
const IPC_SYSCTLS = new Set([
  'kernel.sem',
  'kernel.shmall',
  'kernel.shmmax',
  'kernel.shmmni',
  'kernel.shm_rmid_forced',
  'kernel.shm',
  'kernel.msgmax',
  'kernel.msgmnb',
  'kernel.msgmni',
  'kernel.msg',
]);

/** NormalizeName: a name written with `/` separators read as the `.`-separated one. */
function normalizeSysctl(name: string): string {
  const first = name.search(/[./]/);
  if (first === -1 || name[first] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '.' ? '/' : '.'));
}

/** The kernel namespace a sysctl lives in, as the API server knows it. */
function sysctlNamespace(name: string): 'net' | 'ipc' | undefined {
  let normalized = normalizeSysctl(name);
  const star = normalized.indexOf('*');
  if (star !== -1) normalized = normalized.slice(0, star);
  if (IPC_SYSCTLS.has(normalized)) return 'ipc';
  if (normalized.startsWith('net.')) return 'net';
  if (normalized.startsWith('fs.mqueue.')) return 'ipc';
  return undefined;
}

/** validateSysctls: pod-level `securityContext.sysctls` of `spec` at `field`. */
function sysctlCauses(spec: Obj, sysctls: unknown, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  objects(sysctls).forEach((s, i) => {
    const at = `${field}[${i}].name`;
    const name = asString(s.name);
    if (name === '') causes.push(requiredField(at));
    else if (name.length > SYSCTL_MAX_LENGTH || !SYSCTL_RE.test(name)) {
      causes.push(invalidField(at, name, `must have at most ${SYSCTL_MAX_LENGTH} characters and match regex ${SYSCTL_PATTERN}`));
    } else if (names.has(name)) causes.push(duplicateField(at, name));
    const ns = sysctlNamespace(name);
    if (spec.hostNetwork === true && ns === 'net') causes.push(invalidField(at, name, "may not be specified when 'hostNetwork' is true"));
    else if (spec.hostIPC === true && ns === 'ipc') causes.push(invalidField(at, name, "may not be specified when 'hostIPC' is true"));
    names.add(name);
  });
  return causes;
}

/** validateSeccompProfileField: a supported type, and a relative `localhostProfile` exactly for Localhost. */
export function validateSeccompProfile(profileValue: unknown, field: string): StatusCause[] {
  const profile = objectOrUndefined(profileValue);
  if (profile === undefined) return [];
  const causes: StatusCause[] = [];
  const type = asString(profile.type);
  if (type === '') causes.push(requiredField(`${field}.type`, 'type is required when seccompProfile is set'));
  else if (!PROFILE_TYPES.includes(type)) causes.push(notSupportedField(`${field}.type`, type, PROFILE_TYPES));
  const localhost = profile.localhostProfile;
  if (type === 'Localhost') {
    if (typeof localhost !== 'string') causes.push(requiredField(`${field}.localhostProfile`, 'must be set when seccomp type is Localhost'));
    else causes.push(...localDescendingPath(localhost, `${field}.localhostProfile`));
  } else if (typeof localhost === 'string') {
    const printed = goJson({ Type: type, LocalhostProfile: localhost });
    causes.push(invalidField(`${field}.localhostProfile`, printed, 'can only be set when seccomp type is Localhost'));
  }
  return causes;
}

/** ValidateAppArmorProfileField: a supported type, and an unpadded `localhostProfile` exactly for Localhost. */
export function validateAppArmorProfile(profileValue: unknown, field: string): StatusCause[] {
  const profile = objectOrUndefined(profileValue);
  if (profile === undefined) return [];
  const type = asString(profile.type);
  const localhost = profile.localhostProfile;
  const at = `${field}.localhostProfile`;
  switch (type) {
    case 'Localhost': {
      if (typeof localhost !== 'string') return [requiredField(at, 'must be set when AppArmor type is Localhost')];
      const causes: StatusCause[] = [];
      if (localhost.trim() !== localhost) causes.push(invalidField(at, localhost, 'must not be padded with whitespace'));
      else if (localhost === '') causes.push(requiredField(at, 'must be set when AppArmor type is Localhost'));
      if (Buffer.byteLength(localhost, 'utf8') > MAX_APPARMOR_PROFILE_LENGTH) causes.push(tooLongField(at, MAX_APPARMOR_PROFILE_LENGTH));
      return causes;
    }
    case 'RuntimeDefault':
    case 'Unconfined':
      return typeof localhost === 'string' ? [invalidField(at, localhost, 'can only be set when AppArmor type is Localhost')] : [];
    case '':
      return [requiredField(`${field}.type`, 'type is required when appArmorProfile is set')];
    default:
      return [notSupportedField(`${field}.type`, type, PROFILE_TYPES)];
  }
}

function idCauses(sc: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const key of ['runAsUser', 'runAsGroup'] as const) {
    const id = numberOrUndefined(sc[key]);
    if (id !== undefined) causes.push(...idProblems(id).map((msg) => invalidField(`${field}.${key}`, id, msg)));
  }
  return causes;
}

/**
 * Whether the pod runs in the host's user namespace (`hostUsers` unset or true), as kube reads it
 * before validating containers.
 */
export function usesHostUsers(spec: Obj): boolean {
  return spec.hostUsers !== false;
}

/**
 * validatePodSpecSecurityContext: the pod-level security context of `spec` (at `field`.securityContext).
 * `allowAnySELinuxChangePolicy` is set on the update of a Pod that already had a seLinuxChangePolicy.
 */
export function validatePodSecurityContext(spec: Obj, field: string, allowAnySELinuxChangePolicy = false): StatusCause[] {
  const sc = objectOrUndefined(spec.securityContext);
  if (sc === undefined) return [];
  const at = `${field}.securityContext`;
  const causes: StatusCause[] = [];
  const fsGroup = numberOrUndefined(sc.fsGroup);
  if (fsGroup !== undefined) causes.push(...idProblems(fsGroup).map((msg) => invalidField(`${at}.fsGroup`, fsGroup, msg)));
  causes.push(...idCauses(sc, at));
  (Array.isArray(sc.supplementalGroups) ? sc.supplementalGroups : []).forEach((gid, i) => {
    if (typeof gid === 'number') causes.push(...idProblems(gid).map((msg) => invalidField(`${at}.supplementalGroups[${i}]`, gid, msg)));
  });
  if (spec.hostPID === true && spec.shareProcessNamespace === true) {
    causes.push(invalidField(`${at}.shareProcessNamespace`, true, 'ShareProcessNamespace and HostPID cannot both be enabled'));
  }
  if (Array.isArray(sc.sysctls) && sc.sysctls.length > 0) causes.push(...sysctlCauses(spec, sc.sysctls, `${at}.sysctls`));
  const policy = sc.fsGroupChangePolicy;
  if (typeof policy === 'string' && !FS_GROUP_CHANGE_POLICIES.includes(policy)) {
    causes.push(notSupportedField(`${at}.fsGroupChangePolicy`, policy, FS_GROUP_CHANGE_POLICIES));
  }
  causes.push(...validateSeccompProfile(sc.seccompProfile, `${at}.seccompProfile`));
  causes.push(...validateWindowsOptions(sc.windowsOptions, `${at}.windowsOptions`));
  causes.push(...validateAppArmorProfile(sc.appArmorProfile, `${at}.appArmorProfile`));
  const groupsPolicy = sc.supplementalGroupsPolicy;
  if (typeof groupsPolicy === 'string' && !SUPPLEMENTAL_GROUPS_POLICIES.includes(groupsPolicy)) {
    causes.push(notSupportedField(`${at}.supplementalGroupsPolicy`, groupsPolicy, SUPPLEMENTAL_GROUPS_POLICIES));
  }
  const changePolicy = sc.seLinuxChangePolicy;
  if (typeof changePolicy === 'string') {
    // With the SELinuxMount gate off (1.36's default) only Recursive is accepted, unless the stored pod had a policy.
    const allowed = allowAnySELinuxChangePolicy ? SELINUX_CHANGE_POLICIES : ['Recursive'];
    if (!allowed.includes(changePolicy)) causes.push(notSupportedField(`${at}.seLinuxChangePolicy`, changePolicy, allowed));
  }
  return causes;
}

/** kube's internal SecurityContext as its field errors print it (Go field names, nil pointers as null). */
function internalSecurityContext(sc: Obj): unknown {
  const pick = (o: unknown, fields: Record<string, string>, zero: unknown): unknown => {
    const value = objectOrUndefined(o);
    return value === undefined ? null : Object.fromEntries(Object.entries(fields).map(([goName, key]) => [goName, value[key] ?? zero]));
  };
  const profile = (o: unknown): unknown => pick(o, { Type: 'type', LocalhostProfile: 'localhostProfile' }, null);
  const seLinux = objectOrUndefined(sc.seLinuxOptions);
  return {
    Capabilities: pick(sc.capabilities, { Add: 'add', Drop: 'drop' }, null),
    Privileged: sc.privileged ?? null,
    SELinuxOptions: seLinux === undefined ? null : { User: seLinux.user ?? '', Role: seLinux.role ?? '', Type: seLinux.type ?? '', Level: seLinux.level ?? '' },
    WindowsOptions: pick(
      sc.windowsOptions,
      {
        GMSACredentialSpecName: 'gmsaCredentialSpecName',
        GMSACredentialSpec: 'gmsaCredentialSpec',
        RunAsUserName: 'runAsUserName',
        HostProcess: 'hostProcess',
      },
      null,
    ),
    RunAsUser: sc.runAsUser ?? null,
    RunAsGroup: sc.runAsGroup ?? null,
    RunAsNonRoot: sc.runAsNonRoot ?? null,
    ReadOnlyRootFilesystem: sc.readOnlyRootFilesystem ?? null,
    AllowPrivilegeEscalation: sc.allowPrivilegeEscalation ?? null,
    ProcMount: sc.procMount ?? null,
    SeccompProfile: profile(sc.seccompProfile),
    AppArmorProfile: profile(sc.appArmorProfile),
  };
}

/** With `allowPrivilegeEscalation: false`, a container may be neither privileged nor add CAP_SYS_ADMIN. */
function privilegeEscalationCauses(sc: Obj, field: string): StatusCause[] {
  if (sc.allowPrivilegeEscalation !== false) return [];
  const causes: StatusCause[] = [];
  if (sc.privileged === true)
    causes.push(invalidField(field, goJson(internalSecurityContext(sc)), 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
  for (const capability of asArray(objectOrUndefined(sc.capabilities)?.add)) {
    if (capability === 'CAP_SYS_ADMIN') {
      causes.push(
        invalidField(field, goJson(internalSecurityContext(sc)), 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'),
      );
    }
  }
  return causes;
}

/** ValidateSecurityContext: a container's security context at `field`; `hostUsers` as {@link usesHostUsers}. */
export function validateContainerSecurityContext(scValue: unknown, field: string, hostUsers: boolean): StatusCause[] {
  const sc = objectOrUndefined(scValue);
  if (sc === undefined) return [];
  const causes = idCauses(sc, field);
  if (typeof sc.procMount === 'string') {
    const procMount = sc.procMount;
    if (!PROC_MOUNT_TYPES.includes(procMount)) causes.push(notSupportedField(`${field}.procMount`, procMount, PROC_MOUNT_TYPES));
    if (hostUsers && procMount === 'Unmasked') causes.push(invalidField(`${field}.procMount`, procMount, '`hostUsers` must be false to use `Unmasked`'));
  }
  causes.push(...validateSeccompProfile(sc.seccompProfile, `${field}.seccompProfile`));
  causes.push(...privilegeEscalationCauses(sc, field));
  causes.push(...validateWindowsOptions(sc.windowsOptions, `${field}.windowsOptions`));
  causes.push(...validateAppArmorProfile(sc.appArmorProfile, `${field}.appArmorProfile`));
  return causes;
}
