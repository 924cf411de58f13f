/**
 * kube 1.36's checks of a pod spec against its operating system and user namespace: `os.name`
 * (validateOS: linux or windows), the fields a Linux pod may not set (validateLinux: Windows options)
 * and those a Windows pod may not set (validateWindows: Linux security settings, host PID/IPC
 * namespaces, hostUsers), and what `hostUsers: false` rules out (validateHostUsers: host PID and IPC
 * namespaces, host networking (its UserNamespacesHostNetworkSupport gate is alpha, off by default) and
 * raw block devices).
 */
import type { StatusCause } from '../api/errors.js';
import { forbiddenField, notSupportedField, requiredField } from './field-errors.js';
import { asArray, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { isSet, objects } from './value-access.js';

const OS_NAMES = ['linux', 'windows'];
const WINDOWS_FORBIDDEN = 'cannot be set for a windows pod';
const LINUX_FORBIDDEN = 'windows options cannot be set for a linux pod';
/** Pod security context fields a Windows pod may not set. */
const WINDOWS_POD_SECURITY_FIELDS = [
  'seLinuxOptions',
  'seccompProfile',
  'fsGroup',
  'fsGroupChangePolicy',
  'runAsUser',
  'runAsGroup',
  'supplementalGroups',
  'supplementalGroupsPolicy',
  'seLinuxChangePolicy',
];
/** Container security context fields a Windows pod may not set. */
const WINDOWS_CONTAINER_SECURITY_FIELDS = [
  'appArmorProfile',
  'seLinuxOptions',
  'seccompProfile',
  'capabilities',
  'readOnlyRootFilesystem',
  'privileged',
  'allowPrivilegeEscalation',
  'procMount',
  'runAsUser',
  'runAsGroup',
];

function containersWithPath(spec: Obj, field: string): Array<{ container: Obj; path: string }> {
  return ['initContainers', 'containers', 'ephemeralContainers'].flatMap((key) =>
    objects(spec[key]).map((container, i) => ({ container, path: `${field}.${key}[${i}]` })),
  );
}

function linuxCauses(spec: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (isSet(asObject(spec.securityContext).windowsOptions)) causes.push(forbiddenField(`${field}.securityContext.windowsOptions`, LINUX_FORBIDDEN));
  for (const { container, path } of containersWithPath(spec, field)) {
    if (isSet(asObject(container.securityContext).windowsOptions)) causes.push(forbiddenField(`${path}.securityContext.windowsOptions`, LINUX_FORBIDDEN));
  }
  return causes;
}

function windowsCauses(spec: Obj, field: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const sc = asObject(spec.securityContext);
  if (isSet(sc.appArmorProfile)) causes.push(forbiddenField(`${field}.securityContext.appArmorProfile`, WINDOWS_FORBIDDEN));
  // hostUsers, hostPID, hostIPC and shareProcessNamespace are part of kube's internal pod security context.
  if (isSet(spec.hostUsers)) causes.push(forbiddenField(`${field}.hostUsers`, WINDOWS_FORBIDDEN));
  if (spec.hostPID === true) causes.push(forbiddenField(`${field}.hostPID`, WINDOWS_FORBIDDEN));
  if (spec.hostIPC === true) causes.push(forbiddenField(`${field}.hostIPC`, WINDOWS_FORBIDDEN));
  if (asArray(sc.sysctls).length > 0) causes.push(forbiddenField(`${field}.securityContext.sysctls`, WINDOWS_FORBIDDEN));
  if (isSet(spec.shareProcessNamespace)) causes.push(forbiddenField(`${field}.shareProcessNamespace`, WINDOWS_FORBIDDEN));
  for (const key of WINDOWS_POD_SECURITY_FIELDS) {
    if (isSet(sc[key])) causes.push(forbiddenField(`${field}.securityContext.${key}`, WINDOWS_FORBIDDEN));
  }
  for (const { container, path } of containersWithPath(spec, field)) {
    const csc = objectOrUndefined(container.securityContext);
    if (csc === undefined) continue;
    for (const key of WINDOWS_CONTAINER_SECURITY_FIELDS) {
      if (isSet(csc[key])) causes.push(forbiddenField(`${path}.securityContext.${key}`, WINDOWS_FORBIDDEN));
    }
  }
  return causes;
}

/** validateOS, then validateLinux or validateWindows: `spec.os` of the pod spec at `field`. */
export function validatePodOS(spec: Obj, field: string): StatusCause[] {
  const os = objectOrUndefined(spec.os);
  if (os === undefined) return [];
  const name = asString(os.name);
  if (name === '') return [requiredField(`${field}.os.name`)];
  if (!OS_NAMES.includes(name)) return [notSupportedField(`${field}.os`, name, OS_NAMES)];
  return name === 'linux' ? linuxCauses(spec, field) : windowsCauses(spec, field);
}

/** validateHostUsers: with `hostUsers: false`, no host network, PID or IPC namespace and no volume devices. */
export function validateHostUsers(spec: Obj, field: string): StatusCause[] {
  if (spec.hostUsers !== false) return [];
  const causes: StatusCause[] = [];
  if (spec.hostNetwork === true) causes.push(forbiddenField(`${field}.hostNetwork`, 'when `hostUsers` is false'));
  // kube names these two by its internal Go field names.
  if (spec.hostPID === true) causes.push(forbiddenField(`${field}.HostPID`, 'when `hostUsers` is false'));
  if (spec.hostIPC === true) causes.push(forbiddenField(`${field}.HostIPC`, 'when `hostUsers` is false'));
  for (const { container, path } of containersWithPath(spec, field)) {
    if (asArray(container.volumeDevices).length > 0) causes.push(forbiddenField(`${path}.volumeDevices`, 'when `hostUsers` is false'));
  }
  return causes;
}
