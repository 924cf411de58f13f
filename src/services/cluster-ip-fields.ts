import { isIPv6 } from 'node:net';
import type { StatusCause } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import { ipv4Problem } from '../config/ip-range.js';
import {
  allocatesNodePorts,
  clusterIPOf,
  healthCheckPortOf,
  isHeadless,
  needsClusterIP,
  needsHealthCheckPort,
  nodePortOf,
  policyOf,
  portsOf,
  serviceType,
  setStringList,
  stringList,
} from './service-spec.js';

/**
 * The fields of a Service that say which addresses it wants (clusterIP, clusterIPs, ipFamilies,
 * ipFamilyPolicy), prepared as kube-apiserver 1.36 prepares them before allocating: synced,
 * completed from the stored Service on update, checked (422 causes in kube's words) and defaulted
 * for this single-stack IPv4 cluster.
 */

/** Go's JSON rendering of a field error's value: `null` for an unset list, JSON otherwise. */
export function goValue(value: unknown): string {
  return value === undefined ? 'null' : JSON.stringify(value);
}

export function invalidCause(field: string, value: unknown, detail: string): StatusCause {
  return { reason: 'FieldValueInvalid', field, message: `Invalid value: ${goValue(value)}: ${detail}` };
}

function clusterIPsValue(spec: Obj): string[] | undefined {
  const ips = stringList(spec, 'clusterIPs');
  return ips.length === 0 ? undefined : ips;
}

/**
 * Keeps clusterIP and clusterIPs in step, as kube's normalizeClusterIPs: a create that names only
 * clusterIP gets it as clusterIPs; an update from a client that knows only clusterIP keeps the stored
 * list, or follows a changed clusterIP.
 */
export function normalizeClusterIPs(spec: Obj, old: Obj | undefined): void {
  const ip = clusterIPOf(spec);
  const ips = stringList(spec, 'clusterIPs');
  if (old === undefined) {
    if (ip !== '' && ips.length === 0) spec.clusterIPs = [ip];
    return;
  }
  const oldIps = stringList(old, 'clusterIPs');
  if (oldIps.length > 0 && ips.length === 0 && clusterIPOf(old) === ip) setStringList(spec, 'clusterIPs', oldIps);
  if (clusterIPOf(old) !== ip) {
    const same = JSON.stringify(stringList(spec, 'clusterIPs')) === JSON.stringify(oldIps);
    if (clusterIPOf(old) !== '' && ip === '') {
      if (same) delete spec.clusterIPs;
    } else if (same) spec.clusterIPs = [ip];
  }
}

/**
 * Lets an update leave out what the server allocated (kube's patchAllocatedValues): the stored
 * cluster IPs, node ports (matched by port name, unless another port now uses them) and health check
 * port are kept when the new spec leaves them unset.
 */
export function keepAllocatedValues(spec: Obj, old: Obj): void {
  if (needsClusterIP(old) && needsClusterIP(spec)) {
    if (clusterIPOf(spec) === '' && clusterIPOf(old) !== '') spec.clusterIP = old.clusterIP;
    if (stringList(spec, 'clusterIPs').length === 0 && stringList(old, 'clusterIPs').length > 0) spec.clusterIPs = [...stringList(old, 'clusterIPs')];
  }
  const keepsNodePorts = (s: Obj): boolean => serviceType(s) === 'NodePort' || (serviceType(s) === 'LoadBalancer' && allocatesNodePorts(s));
  if (keepsNodePorts(old) && keepsNodePorts(spec)) {
    const newPorts = new Set(
      portsOf(spec)
        .map(nodePortOf)
        .filter((p) => p !== 0),
    );
    const used = new Set(
      portsOf(old)
        .map(nodePortOf)
        .filter((p) => p !== 0 && newPorts.has(p)),
    );
    const byName = new Map<string, number>();
    for (const p of portsOf(old)) byName.set(typeof p.name === 'string' ? p.name : '', nodePortOf(p));
    for (const p of portsOf(spec)) {
      if (nodePortOf(p) !== 0) continue;
      const previous = byName.get(typeof p.name === 'string' ? p.name : '') ?? 0;
      if (previous !== 0 && !used.has(previous)) p.nodePort = previous;
    }
  }
  if (needsHealthCheckPort(old) && needsHealthCheckPort(spec) && healthCheckPortOf(spec) === 0 && healthCheckPortOf(old) !== 0) {
    spec.healthCheckNodePort = old.healthCheckNodePort;
  }
}

/** kube's check of one requested cluster IP (IsValidIPForLegacyField, strict): the detail, or undefined. */
function clusterIPProblem(ip: string): string | undefined {
  if (isIPv6(ip)) {
    return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip) ? 'must not be an IPv4-mapped IPv6 address' : undefined;
  }
  return ipv4Problem(ip);
}

/**
 * kube's ValidateServiceClusterIPsRelatedFields, the loose check made before allocating: clusterIP and
 * clusterIPs agree, each requested IP is an IP, families and policy are known values.
 */
function clusterIPFieldCauses(spec: Obj, old: Obj | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  const ip = clusterIPOf(spec);
  const ips = stringList(spec, 'clusterIPs');
  if (ip !== '') {
    if (ips.length === 0) causes.push({ reason: 'FieldValueRequired', field: 'spec.clusterIPs', message: 'Required value' });
    else if (ips[0] !== ip) causes.push(invalidCause('spec.clusterIPs', ips, 'first value must match `clusterIP`'));
  } else if (ips.length > 0) {
    causes.push(invalidCause('spec.clusterIPs', ips, 'must be empty when `clusterIP` is not specified'));
  }
  const seen = new Set<string>();
  for (const [i, family] of stringList(spec, 'ipFamilies').entries()) {
    if (family !== 'IPv4' && family !== 'IPv6') {
      causes.push({
        reason: 'FieldValueNotSupported',
        field: `spec.ipFamilies[${i}]`,
        message: `Unsupported value: ${JSON.stringify(family)}: supported values: "IPv4", "IPv6"`,
      });
    }
    if (seen.has(family)) causes.push({ reason: 'FieldValueDuplicate', field: `spec.ipFamilies[${i}]`, message: `Duplicate value: ${JSON.stringify(family)}` });
    seen.add(family);
  }
  const policy = policyOf(spec);
  if (policy !== undefined && !['PreferDualStack', 'RequireDualStack', 'SingleStack'].includes(policy)) {
    causes.push({
      reason: 'FieldValueNotSupported',
      field: 'spec.ipFamilyPolicy',
      message: `Unsupported value: ${JSON.stringify(policy)}: supported values: "PreferDualStack", "RequireDualStack", "SingleStack"`,
    });
  }
  const oldIps = old === undefined ? [] : stringList(old, 'clusterIPs');
  let badIPs = false;
  for (const [i, value] of ips.entries()) {
    if (i === 0 && value === 'None') {
      if (ips.length > 1) {
        badIPs = true;
        causes.push(invalidCause('spec.clusterIPs', ips, "'None' must be the first and only value"));
      }
      continue;
    }
    if (oldIps.includes(value)) continue;
    const problem = clusterIPProblem(value);
    if (problem !== undefined) {
      badIPs = true;
      causes.push(invalidCause(`spec.clusterIPs[${i}]`, value, problem));
    }
  }
  if (ips.length > 2) causes.push(invalidCause('spec.clusterIPs', ips, 'may only hold up to 2 values'));
  if (badIPs) return causes;
  if (ips.length > 1 && (ips.length !== 2 || isIPv6(ips[0]) === isIPv6(ips[1]))) {
    causes.push(invalidCause('spec.clusterIPs', ips, 'may specify no more than one IP for each IP family'));
  }
  const families = stringList(spec, 'ipFamilies');
  if (!isHeadless(spec)) {
    for (const [i, value] of ips.entries()) {
      if (i >= families.length) break;
      if (families[i] === 'IPv4' && isIPv6(value))
        causes.push(invalidCause(`spec.clusterIPs[${i}]`, value, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (families[i] === 'IPv6' && !isIPv6(value))
        causes.push(invalidCause(`spec.clusterIPs[${i}]`, value, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    }
  }
  return causes;
}

/**
 * Defaults and checks ipFamilyPolicy and ipFamilies for a cluster that serves IPv4 only, as kube's
 * initIPFamilyFields: the policy comes from the stored Service or is SingleStack (RequireDualStack for
 * a headless Service without selector); families follow the requested IPs, else IPv4. Returns the
 * causes of a 422 (empty when the fields are fine). ExternalName Services are left alone.
 */
export function initIPFamilyFields(spec: Obj, old: Obj | undefined): StatusCause[] {
  if (serviceType(spec) === 'ExternalName') return [];
  const headlessSelectorless =
    clusterIPOf(spec) === 'None' && !(typeof spec.selector === 'object' && spec.selector !== null && Object.keys(spec.selector).length > 0);
  if (policyOf(spec) === undefined) {
    if (old !== undefined && policyOf(old) !== undefined) spec.ipFamilyPolicy = old.ipFamilyPolicy;
    else spec.ipFamilyPolicy = headlessSelectorless ? 'RequireDualStack' : 'SingleStack';
  }
  const checked = clusterIPFieldCauses(spec, old);
  if (checked.length > 0) return checked;
  const causes: StatusCause[] = [];
  const policy = policyOf(spec);
  const families = stringList(spec, 'ipFamilies');
  const ips = stringList(spec, 'clusterIPs');
  if (old !== undefined) {
    const oldIps = stringList(old, 'clusterIPs');
    const oldFamilies = stringList(old, 'ipFamilies');
    if (policy === 'SingleStack') {
      if (JSON.stringify(oldIps) === JSON.stringify(ips) && ips.length > 1) spec.clusterIPs = ips.slice(0, 1);
      if (JSON.stringify(oldFamilies) === JSON.stringify(families) && families.length > 1) spec.ipFamilies = families.slice(0, 1);
    } else {
      if (ips.length > 0 && ips.length < oldIps.length)
        causes.push(invalidCause('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary cluster IP"));
      if (families.length > 0 && families.length < oldFamilies.length)
        causes.push(invalidCause('spec.ipFamilyPolicy', policy, "must be 'SingleStack' to release the secondary IP family"));
    }
  }
  const currentIps = stringList(spec, 'clusterIPs');
  const currentFamilies = stringList(spec, 'ipFamilies');
  if (policy === 'SingleStack') {
    if (currentIps.length === 2)
      causes.push(invalidCause('spec.ipFamilyPolicy', policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"));
    if (currentFamilies.length === 2)
      causes.push(invalidCause('spec.ipFamilyPolicy', policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"));
  }
  for (const [i, value] of currentIps.entries()) {
    if (value === 'None') break;
    if (i < currentFamilies.length) continue;
    if (isIPv6(value)) causes.push(invalidCause(`spec.clusterIPs[${i}]`, currentIps, 'IPv6 is not configured on this cluster'));
    else currentFamilies.push('IPv4');
  }
  setStringList(spec, 'ipFamilies', currentFamilies);
  if (causes.length > 0) return causes;
  if (headlessSelectorless) {
    if (currentFamilies.length === 0) currentFamilies.push('IPv4');
    if (currentFamilies.length < 2 && policy !== 'SingleStack') currentFamilies.push(currentFamilies[0] === 'IPv4' ? 'IPv6' : 'IPv4');
    setStringList(spec, 'ipFamilies', currentFamilies);
    return [];
  }
  if (policy === 'RequireDualStack') causes.push(invalidCause('spec.ipFamilyPolicy', policy, 'this cluster is not configured for dual-stack services'));
  for (const [i, family] of currentFamilies.entries()) {
    if (family !== 'IPv4') causes.push(invalidCause(`spec.ipFamilies[${i}]`, family, 'not configured on this cluster'));
  }
  if (causes.length > 0) return causes;
  if (currentFamilies.length === 0) setStringList(spec, 'ipFamilies', ['IPv4']);
  return [];
}

/**
 * kube's check that an update keeps the primary cluster IP (validateUpgradeDowngradeClusterIPs, the
 * part a single-stack cluster can meet): the 422 causes, empty when it is kept.
 */
export function clusterIPChangeCauses(spec: Obj, old: Obj): StatusCause[] {
  if (serviceType(spec) === 'ExternalName' || serviceType(old) === 'ExternalName') return [];
  if (isHeadless(spec) && isHeadless(old)) return [];
  const ips = stringList(spec, 'clusterIPs');
  const oldIps = stringList(old, 'clusterIPs');
  const causes: StatusCause[] = [];
  if (oldIps.length === ips.length) {
    for (const [i, ip] of oldIps.entries()) {
      if (ip !== ips[i]) causes.push(invalidCause(`spec.clusterIPs[${i}]`, ips, 'may not change once set'));
    }
  } else if (oldIps.length > ips.length) {
    if (ips.length === 0) causes.push(invalidCause('spec.clusterIPs[0]', clusterIPsValue(spec), 'primary clusterIP can not be unset'));
    if (oldIps.length > 0 && ips.length > 0 && ips[0] !== oldIps[0]) causes.push(invalidCause('spec.clusterIPs[0]', ips, 'may not change once set'));
    if (ips.length === 1 && policyOf(spec) !== 'SingleStack') {
      causes.push(invalidCause('spec.ipFamilyPolicy', policyOf(spec), "must be set to 'SingleStack' when releasing the secondary clusterIP"));
    }
  } else if (oldIps.length > 0 && ips[0] !== oldIps[0]) {
    causes.push(invalidCause('spec.clusterIPs[0]', ips, 'may not change once set'));
  }
  return causes;
}
