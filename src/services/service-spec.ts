import { isObject, type Obj } from '../api/object-util.js';
import { stringElements } from '../api/values.js';

/**
 * Typed reads and writes of the Service spec fields allocation looks at, over the plain JSON object
 * (which has been through the typed decoder, so fields hold their declared types or are absent).
 */

/** The Service's spec, created empty when absent. */
export function specOf(svc: Obj): Obj {
  if (!isObject(svc.spec)) svc.spec = {};
  return svc.spec as Obj;
}

export function serviceType(spec: Obj): string {
  return typeof spec.type === 'string' ? spec.type : '';
}

/** The string elements of the list at `spec[field]`. */
export function stringList(spec: Obj, field: string): string[] {
  return stringElements(spec[field]);
}

export function clusterIPOf(spec: Obj): string {
  return typeof spec.clusterIP === 'string' ? spec.clusterIP : '';
}

/** Sets or clears a string list field, as Go's omitempty writes it (an empty list is absent). */
export function setStringList(spec: Obj, field: string, values: string[] | undefined): void {
  if (values === undefined || values.length === 0) delete spec[field];
  else spec[field] = values;
}

export function policyOf(spec: Obj): string | undefined {
  return typeof spec.ipFamilyPolicy === 'string' ? spec.ipFamilyPolicy : undefined;
}

export function portsOf(spec: Obj): Obj[] {
  return Array.isArray(spec.ports) ? spec.ports.filter(isObject) : [];
}

export function nodePortOf(port: Obj): number {
  return typeof port.nodePort === 'number' ? port.nodePort : 0;
}

/** Whether the Service is headless: its only cluster IP is `None`. */
export function isHeadless(spec: Obj): boolean {
  const ips = stringList(spec, 'clusterIPs');
  return ips.length === 1 && ips[0] === 'None';
}

/** Every type but ExternalName gets cluster IPs. */
export function needsClusterIP(spec: Obj): boolean {
  return serviceType(spec) !== 'ExternalName';
}

/** NodePort Services, and LoadBalancers unless they opted out of node ports, get node ports. */
export function allocatesNodePorts(spec: Obj): boolean {
  if (serviceType(spec) === 'NodePort') return true;
  return serviceType(spec) === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false;
}

/** Whether the type keeps node ports at all (requested ones are honoured even when not allocated). */
export function hasNodePorts(spec: Obj): boolean {
  return serviceType(spec) === 'NodePort' || serviceType(spec) === 'LoadBalancer';
}

/** A LoadBalancer with `externalTrafficPolicy: Local` needs a health check node port. */
export function needsHealthCheckPort(spec: Obj): boolean {
  return serviceType(spec) === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
}

export function healthCheckPortOf(spec: Obj): number {
  return typeof spec.healthCheckNodePort === 'number' ? spec.healthCheckNodePort : 0;
}

/**
 * The node ports a Service holds: its ports' non-zero nodePorts when its type has node ports. A
 * nodePort written on another type was never reserved, so it is never released either (it may be
 * another Service's).
 */
export function nodePortsHeld(spec: Obj): number[] {
  if (!hasNodePorts(spec)) return [];
  return portsOf(spec)
    .map(nodePortOf)
    .filter((p) => p !== 0);
}

/** ServiceSpec fields in the order of kube's Go struct, so the stored JSON reads as kube's. */
const SPEC_ORDER = [
  'ports',
  'selector',
  'clusterIP',
  'clusterIPs',
  'type',
  'externalIPs',
  'sessionAffinity',
  'loadBalancerIP',
  'loadBalancerSourceRanges',
  'externalName',
  'externalTrafficPolicy',
  'healthCheckNodePort',
  'publishNotReadyAddresses',
  'sessionAffinityConfig',
  'ipFamilies',
  'ipFamilyPolicy',
  'allocateLoadBalancerNodePorts',
  'loadBalancerClass',
  'internalTrafficPolicy',
  'trafficDistribution',
];
const PORT_ORDER = ['name', 'protocol', 'appProtocol', 'port', 'targetPort', 'nodePort'];

function ordered(obj: Obj, order: string[]): Obj {
  const out: Obj = {};
  for (const k of order) if (obj[k] !== undefined) out[k] = obj[k];
  for (const [k, v] of Object.entries(obj)) if (!(k in out) && v !== undefined) out[k] = v;
  return out;
}

/** Puts the spec's fields (and its ports' fields) back in kube's order after allocation added some. */
export function orderSpecFields(svc: Obj): void {
  const spec = ordered(specOf(svc), SPEC_ORDER);
  if (Array.isArray(spec.ports)) spec.ports = (spec.ports as unknown[]).map((p) => (isObject(p) ? ordered(p, PORT_ORDER) : p));
  svc.spec = spec;
}
