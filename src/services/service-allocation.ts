import { internalError, invalid, type StatusCause } from '../api/errors.js';
import { metadataOf, stringField, type Obj } from '../api/object-util.js';
import { logger } from '../logging/logger.js';
import { AllocationError, type ServiceRef } from './cluster-ip-allocator.js';
import { clusterIPChangeCauses, goValue, initIPFamilyFields, invalidCause, keepAllocatedValues, normalizeClusterIPs } from './cluster-ip-fields.js';
import { Reservations, type ServiceNetwork } from './reservations.js';
import {
  allocatesNodePorts,
  clusterIPOf,
  hasNodePorts,
  healthCheckPortOf,
  isHeadless,
  needsClusterIP,
  needsHealthCheckPort,
  nodePortOf,
  nodePortsHeld,
  orderSpecFields,
  portsOf,
  serviceType,
  specOf,
  stringList,
} from './service-spec.js';

export { ServiceNetwork } from './reservations.js';

/**
 * The one entry point of Service address allocation, called by the write path: cluster IPs and node
 * ports are reserved when a Service is created or changes type, kept across updates, and released when
 * it is deleted or no longer needs them, with kube-apiserver 1.36's rules and 422 messages (its
 * pkg/registry/core/service/storage/alloc.go). Reservations are atomic in storage (see the allocators),
 * a write that fails after reserving gives its reservations back, and releases an update implies happen
 * only once the update is stored. A dry-run reserves and releases nothing, and reports the placeholder
 * values kube's dry-run allocators report.
 */

/** Where a write happens: the server's ranges, the type written, and the request's namespace. */
export interface AllocationTarget {
  server: { serviceNetwork: ServiceNetwork };
  info: { group: string; resource: string };
  ri: { namespace: string; subresource: string };
}

/** Writes of the Service itself allocate; its status subresource's do not. */
function isServiceWrite(r: AllocationTarget): boolean {
  return r.ri.subresource === '';
}

function throwIfAny(name: string, causes: StatusCause[]): void {
  if (causes.length > 0) throw invalid('Service', '', name, causes);
}

/** kube's allocClusterIPs: the IPv4 address of a Service that needs one, requested or free. */
async function allocateClusterIP(res: Reservations, spec: Obj, name: string): Promise<void> {
  if (!needsClusterIP(spec) || isHeadless(spec)) return;
  const requested = stringList(spec, 'clusterIPs')[0] ?? '';
  const ip = await res.clusterIP(requested, spec, name);
  spec.clusterIPs = [ip, ...stringList(spec, 'clusterIPs').slice(1)];
  spec.clusterIP = ip;
}

function nodePortInvalid(name: string, index: number, port: number, err: unknown): unknown {
  if (!(err instanceof AllocationError)) return err;
  return invalid('Service', '', name, [invalidCause(`spec.ports[${index}].nodePort`, port, err.message)]);
}

/** kube's initNodePorts (create): requested ports reserved, others allocated; one node port per service port number. */
async function allocateNodePorts(res: Reservations, spec: Obj, name: string): Promise<void> {
  if (!hasNodePorts(spec)) return;
  const byServicePort = new Map<unknown, number>();
  const ports = portsOf(spec);
  for (const [i, port] of ports.entries()) {
    if (nodePortOf(port) === 0 && !allocatesNodePorts(spec)) continue;
    const shared = byServicePort.get(port.port) ?? 0;
    if (shared === 0) {
      const requested = ports.slice(i).find((p) => p.port === port.port && nodePortOf(p) !== 0);
      const wanted = requested === undefined ? 0 : nodePortOf(requested);
      if (wanted !== 0) {
        try {
          await res.nodePort(wanted);
        } catch (err) {
          throw nodePortInvalid(name, i, wanted, err);
        }
        port.nodePort = wanted;
      } else port.nodePort = await res.nextNodePort();
      byServicePort.set(port.port, nodePortOf(port));
    } else if (nodePortOf(port) !== shared) {
      if (nodePortOf(port) === 0) port.nodePort = shared;
      else {
        try {
          await res.nodePort(nodePortOf(port));
        } catch (err) {
          throw nodePortInvalid(name, i, nodePortOf(port), err);
        }
      }
    }
  }
}

/** kube's allocHealthCheckNodePort: the requested health check port, or any free one. */
async function allocateHealthCheckPort(res: Reservations, spec: Obj): Promise<void> {
  const wanted = healthCheckPortOf(spec);
  if (wanted === 0) {
    spec.healthCheckNodePort = await res.nextNodePort();
    return;
  }
  try {
    await res.nodePort(wanted);
  } catch (err) {
    if (err instanceof AllocationError) throw internalError(`failed to allocate requested HealthCheck NodePort ${wanted}: ${err.message}`);
    throw err;
  }
}

async function allocateForCreate(res: Reservations, spec: Obj, name: string): Promise<void> {
  normalizeClusterIPs(spec, undefined);
  throwIfAny(name, initIPFamilyFields(spec, undefined));
  await allocateClusterIP(res, spec, name);
  await allocateNodePorts(res, spec, name);
  if (needsHealthCheckPort(spec)) await allocateHealthCheckPort(res, spec);
  throwIfAny(name, nodePortTypeCauses(spec));
}

/** kube's updateClusterIPs for a single-stack cluster: allocate when leaving ExternalName, release when entering it. */
async function updateClusterIP(res: Reservations, spec: Obj, old: Obj, name: string): Promise<void> {
  if (serviceType(old) === 'ExternalName' && serviceType(spec) !== 'ExternalName') {
    await allocateClusterIP(res, spec, name);
    return;
  }
  if (isHeadless(old)) return;
  if (serviceType(old) !== 'ExternalName' && serviceType(spec) === 'ExternalName') {
    for (const ip of stringList(old, 'clusterIPs')) res.releaseIPLater(ip);
  }
}

/** kube's txnUpdateNodePorts: release on leaving NodePort/LoadBalancer, reserve new or changed ports. */
async function updateNodePorts(res: Reservations, spec: Obj, old: Obj, name: string): Promise<void> {
  const oldPorts = nodePortsHeld(old);
  if (hasNodePorts(old) && (serviceType(spec) === 'ExternalName' || serviceType(spec) === 'ClusterIP')) {
    for (const p of oldPorts) res.releasePortLater(p);
  }
  if (hasNodePorts(spec)) {
    const reserved = new Set<number>();
    for (const [i, port] of portsOf(spec).entries()) {
      const wanted = nodePortOf(port);
      if (wanted === 0 && !allocatesNodePorts(spec)) continue;
      if (wanted !== 0) {
        if (!oldPorts.includes(wanted) && !reserved.has(wanted)) {
          try {
            await res.nodePort(wanted);
          } catch (err) {
            throw nodePortInvalid(name, i, wanted, err);
          }
          reserved.add(wanted);
        }
      } else port.nodePort = await res.nextNodePort();
    }
    const nowHeld = nodePortsHeld(spec);
    for (const p of oldPorts) if (!nowHeld.includes(p)) res.releasePortLater(p);
  }
  const hadCheck = needsHealthCheckPort(old);
  const needsCheck = needsHealthCheckPort(spec);
  if (!hadCheck && needsCheck) await allocateHealthCheckPort(res, spec);
  else if (hadCheck && !needsCheck && healthCheckPortOf(old) !== 0) res.releasePortLater(healthCheckPortOf(old));
}

/**
 * What kube's strategy drops when a type change leaves a field without meaning (dropTypeDependentFields,
 * the allocated fields): cluster IPs and families when becoming ExternalName, node ports when leaving
 * NodePort/LoadBalancer, the health check port when no longer needed; each only when the request left
 * it as it was stored.
 */
function dropReleasedFields(spec: Obj, old: Obj): void {
  const same = (a: unknown, b: unknown): boolean => goValue(a) === goValue(b);
  if (needsClusterIP(old) && !needsClusterIP(spec)) {
    if (clusterIPOf(spec) === clusterIPOf(old) && same(spec.clusterIPs, old.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (same(spec.ipFamilies, old.ipFamilies)) delete spec.ipFamilies;
    if (same(spec.ipFamilyPolicy, old.ipFamilyPolicy)) delete spec.ipFamilyPolicy;
  }
  const sortedPorts = (s: Obj): string =>
    JSON.stringify(
      [
        ...new Set(
          portsOf(s)
            .map(nodePortOf)
            .filter((p) => p !== 0),
        ),
      ].sort((a, b) => a - b),
    );
  if (hasNodePorts(old) && !hasNodePorts(spec) && sortedPorts(spec) === sortedPorts(old)) {
    for (const port of portsOf(spec)) delete port.nodePort;
  }
  if (needsHealthCheckPort(old) && !needsHealthCheckPort(spec) && healthCheckPortOf(spec) === healthCheckPortOf(old)) {
    delete spec.healthCheckNodePort;
  }
}

async function allocateForUpdate(res: Reservations, spec: Obj, old: Obj, name: string): Promise<void> {
  keepAllocatedValues(spec, old);
  normalizeClusterIPs(spec, old);
  throwIfAny(name, initIPFamilyFields(spec, old));
  await updateClusterIP(res, spec, old, name);
  await updateNodePorts(res, spec, old, name);
  dropReleasedFields(spec, old);
  throwIfAny(name, [...nodePortTypeCauses(spec), ...clusterIPChangeCauses(spec, old)]);
}

/**
 * kube's validation that a ClusterIP Service names no node port: such a port would be stored without
 * being reserved (kube's ValidateService words it so).
 */
function nodePortTypeCauses(spec: Obj): StatusCause[] {
  if (serviceType(spec) !== 'ClusterIP') return [];
  return portsOf(spec).flatMap((port, i) =>
    nodePortOf(port) === 0
      ? []
      : [
          {
            reason: 'FieldValueForbidden',
            field: `spec.ports[${i}].nodePort`,
            message: "Forbidden: may not be used when `type` is 'ClusterIP'",
          },
        ],
  );
}

/**
 * Runs one write of `obj` (created when `old` is undefined, else replacing `old`) with the Service's
 * addresses allocated first: fills `spec.clusterIP(s)`, `ipFamilies`, `ipFamilyPolicy` and node ports
 * into `obj`, then calls `write`. When `write` throws or resolves to undefined (nothing was stored, for
 * example a conflict the caller retries), every reservation is given back; when it resolves to a value,
 * addresses the update no longer uses are released. Throws 422 (kube's causes) for addresses that
 * cannot be had, 500 when a range is full. A status write is written untouched.
 */
export async function withServiceAllocation<T>(r: AllocationTarget, obj: Obj, old: Obj | undefined, dryRun: boolean, write: () => Promise<T>): Promise<T> {
  if (!isServiceWrite(r)) return write();
  const name = stringField(metadataOf(obj), 'name');
  const owner = { namespace: r.ri.namespace, name };
  const res = new Reservations(r.server.serviceNetwork, owner, dryRun);
  const spec = specOf(obj);
  let result: T;
  try {
    if (old === undefined) await allocateForCreate(res, spec, name);
    else await allocateForUpdate(res, spec, specOf(structuredClone(old)), name);
    orderSpecFields(obj);
    result = await write();
  } catch (err) {
    await settle('give back the reservations of a failed write', owner, () => res.revert());
    throw err;
  }
  if (result === undefined) await settle('give back the reservations of a retried write', owner, () => res.revert());
  else await settle('release addresses an update no longer uses', owner, () => res.commit());
  return result;
}

/**
 * Runs the clean-up after a write. Its failure (storage unreachable) must not change the write's
 * answer, which is decided already; it is logged, and the address stays held (kube-apiserver's
 * allocators do the same: "problems should be fixed by an eventual reconciliation").
 */
async function settle(what: string, owner: ServiceRef, step: () => Promise<void>): Promise<void> {
  try {
    await step();
  } catch (err) {
    logger.warn(`could not ${what}`, { service: `${owner.namespace}/${owner.name}`, error: err instanceof Error ? err.message : String(err) });
  }
}

/**
 * Releases everything a removed Service held (kube's releaseAllocatedResources); call after a real
 * delete. Never throws: the delete is done, and a release that fails is logged (see `settle`).
 */
export async function releaseServiceAllocation(r: AllocationTarget, removed: Obj): Promise<void> {
  if (!isServiceWrite(r)) return;
  const spec = specOf(removed);
  const network = r.server.serviceNetwork;
  const owner = { namespace: r.ri.namespace, name: stringField(metadataOf(removed), 'name') };
  await settle('release the addresses of a deleted Service', owner, async () => {
    if (needsClusterIP(spec) && !isHeadless(spec)) {
      for (const ip of stringList(spec, 'clusterIPs')) await network.clusterIPs.release(ip);
    }
    for (const port of nodePortsHeld(spec)) await network.nodePorts.release(port);
    if (needsHealthCheckPort(spec) && healthCheckPortOf(spec) > 0) await network.nodePorts.release(healthCheckPortOf(spec));
  });
}
