/**
 * kube 1.36's Service validation beyond metadata and beyond the cluster IP and IP family fields (those
 * are checked where they are allocated, src/services/), checked against test/golden/validation/:
 * ports (numbers, names required when several, protocols, target ports, app protocols, no duplicate
 * port or node port), the type, ExternalName's name, the selector, session affinity and its timeout,
 * external IPs, `LoadBalancerSourceRanges` (kube's path, capital L), load balancer class and node
 * port allocation, and the traffic policies with the health check port.
 */
import { isIP } from 'node:net';
import type { StatusCause } from '../api/errors.js';
import { ipv4Problem } from '../config/ip-range.js';
import { duplicateField, forbiddenField, goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { validateLabels } from './object-meta.js';
import { isDNS1123Label, isDNS1123Subdomain, isLabelKey } from './string-formats.js';
import { asArray, asNumber, asObject, asString, numberOrUndefined, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';
import { portNameProblems, portNumberProblems } from './value-formats.js';

const TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const AFFINITIES = ['ClientIP', 'None'];
const TRAFFIC_POLICIES = ['Cluster', 'Local'];
const TRAFFIC_DISTRIBUTIONS = ['PreferClose', 'PreferSameZone', 'PreferSameNode'];
const MAX_AFFINITY_TIMEOUT = 86400;

function isHeadless(spec: Obj): boolean {
  const ips = asArray(spec.clusterIPs);
  return ips.length > 0 ? ips[0] === 'None' : spec.clusterIP === 'None';
}

function portCauses(port: Obj, requireName: boolean, names: Set<string>, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = asString(port.name);
  if (requireName && name === '') causes.push(requiredField(`${at}.name`));
  else if (name !== '') {
    causes.push(...isDNS1123Label(name).map((msg) => invalidField(`${at}.name`, name, msg)));
    if (names.has(name)) causes.push(duplicateField(`${at}.name`, name));
    else names.add(name);
  }
  const number = asNumber(port.port);
  causes.push(...portNumberProblems(number).map((msg) => invalidField(`${at}.port`, number, msg)));
  const protocol = asString(port.protocol);
  if (protocol === '') causes.push(requiredField(`${at}.protocol`));
  else if (!PROTOCOLS.includes(protocol)) causes.push(notSupportedField(`${at}.protocol`, protocol, PROTOCOLS));
  const target = port.targetPort;
  if (typeof target === 'string') causes.push(...portNameProblems(target).map((msg) => invalidField(`${at}.targetPort`, target, msg)));
  else {
    const n = typeof target === 'number' ? target : 0;
    causes.push(...portNumberProblems(n).map((msg) => invalidField(`${at}.targetPort`, n, msg)));
  }
  if (typeof port.appProtocol === 'string')
    causes.push(...isLabelKey(port.appProtocol).map((msg) => invalidField(`${at}.appProtocol`, port.appProtocol as string, msg)));
  return causes;
}

function affinityCauses(spec: Obj): StatusCause[] {
  const affinity = asString(spec.sessionAffinity);
  if (affinity === '') return [requiredField('spec.sessionAffinity')];
  if (!AFFINITIES.includes(affinity)) return [notSupportedField('spec.sessionAffinity', affinity, AFFINITIES)];
  const config = objectOrUndefined(spec.sessionAffinityConfig);
  if (affinity === 'None') return config !== undefined ? [forbiddenField('spec.sessionAffinityConfig', 'must not be set when session affinity is None')] : [];
  const why = 'when session affinity type is ClientIP';
  if (config === undefined) return [requiredField('spec.sessionAffinityConfig', why)];
  const clientIP = objectOrUndefined(config.clientIP);
  if (clientIP === undefined) return [requiredField('spec.sessionAffinityConfig.clientIP', why)];
  const timeout = numberOrUndefined(clientIP.timeoutSeconds);
  if (timeout === undefined) return [requiredField('spec.sessionAffinityConfig.clientIP.timeoutSeconds', why)];
  return timeout <= 0 || timeout > MAX_AFFINITY_TIMEOUT
    ? [invalidField('spec.sessionAffinityConfig.clientIP.timeoutSeconds', timeout, `must be greater than 0 and less than ${MAX_AFFINITY_TIMEOUT}`)]
    : [];
}

/** IsValidIPForLegacyField then ValidateEndpointIP, for one external IP. */
function externalIPCauses(ip: string, at: string, previous: string[]): StatusCause[] {
  if (isIP(ip) === 6) return ip === '::' ? [invalidField(at, ip, 'may not be unspecified (::)')] : [];
  const problem = ipv4Problem(ip);
  if (problem !== undefined && !(previous.includes(ip) && problem === 'must not have leading 0s')) return [invalidField(at, ip, problem)];
  const [a = 0, b = 0, c = 0] = ip.split('.').map(Number);
  if (ip === '0.0.0.0') return [invalidField(at, ip, 'may not be unspecified (0.0.0.0)')];
  if (a === 127) return [invalidField(at, ip, 'may not be in the loopback range (127.0.0.0/8, ::1/128)')];
  if (a === 169 && b === 254) return [invalidField(at, ip, 'may not be in the link-local range (169.254.0.0/16, fe80::/10)')];
  if (a === 224 && b === 0 && c === 0) return [invalidField(at, ip, 'may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)')];
  return [];
}

function validCIDR(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash < 0) return false;
  const address = value.slice(0, slash);
  const bits = value.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const family = isIP(address);
  return (family === 4 && Number(bits) <= 32) || (family === 6 && Number(bits) <= 128);
}

function trafficPolicyCauses(spec: Obj, type: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const accessible = type === 'LoadBalancer' || type === 'NodePort' || (type === 'ClusterIP' && asArray(spec.externalIPs).length > 0);
  const external = asString(spec.externalTrafficPolicy);
  if (!accessible) {
    if (external !== '') causes.push(invalidField('spec.externalTrafficPolicy', external, 'may only be set for externally-accessible services'));
  } else if (external === '') causes.push(requiredField('spec.externalTrafficPolicy'));
  else if (!TRAFFIC_POLICIES.includes(external)) causes.push(notSupportedField('spec.externalTrafficPolicy', external, TRAFFIC_POLICIES));
  const healthCheck = asNumber(spec.healthCheckNodePort);
  if (!(type === 'LoadBalancer' && external === 'Local')) {
    if (healthCheck !== 0)
      causes.push(
        invalidField('spec.healthCheckNodePort', healthCheck, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"),
      );
  } else if (healthCheck === 0) causes.push(requiredField('spec.healthCheckNodePort'));
  else causes.push(...portNumberProblems(healthCheck).map((msg) => invalidField('spec.healthCheckNodePort', healthCheck, msg)));
  const internal = spec.internalTrafficPolicy;
  if (internal === undefined || internal === null) {
    if (type === 'NodePort' || type === 'LoadBalancer' || type === 'ClusterIP') causes.push(requiredField('spec.internalTrafficPolicy'));
  } else if (!TRAFFIC_POLICIES.includes(asString(internal))) causes.push(notSupportedField('spec.internalTrafficPolicy', asString(internal), TRAFFIC_POLICIES));
  if (typeof spec.trafficDistribution === 'string' && !TRAFFIC_DISTRIBUTIONS.includes(spec.trafficDistribution)) {
    causes.push(notSupportedField('spec.trafficDistribution', spec.trafficDistribution, TRAFFIC_DISTRIBUTIONS));
  }
  return causes;
}

export function validateService(svc: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(svc.spec);
  const oldSpec = old === undefined ? undefined : asObject(old.spec);
  const type = asString(spec.type);
  const ports = objects(spec.ports);
  const causes: StatusCause[] = [];
  if (ports.length === 0 && !isHeadless(spec) && type !== 'ExternalName') causes.push(requiredField('spec.ports'));
  if ((type === 'LoadBalancer' || type === 'NodePort') && isHeadless(spec)) {
    causes.push(invalidField('spec.clusterIPs[0]', 'None', `may not be set to 'None' for ${type} services`));
  }
  if (type === 'ExternalName') {
    if (asArray(spec.clusterIPs).length > 0) causes.push(forbiddenField('spec.clusterIPs', 'may not be set for ExternalName services'));
    if (asArray(spec.ipFamilies).length > 0) causes.push(forbiddenField('spec.ipFamilies', 'may not be set for ExternalName services'));
    if (spec.ipFamilyPolicy !== undefined && spec.ipFamilyPolicy !== null)
      causes.push(forbiddenField('spec.ipFamilyPolicy', 'may not be set for ExternalName services'));
    const cname = asString(spec.externalName).replace(/\.$/, '');
    if (cname === '') causes.push(requiredField('spec.externalName'));
    else causes.push(...isDNS1123Subdomain(cname).map((msg) => invalidField('spec.externalName', cname, msg)));
  }
  const names = new Set<string>();
  ports.forEach((p, i) => causes.push(...portCauses(p, ports.length > 1, names, `spec.ports[${i}]`)));
  if (spec.selector !== undefined && spec.selector !== null) causes.push(...validateLabels(spec.selector, 'spec.selector'));
  causes.push(...affinityCauses(spec));
  const previousIPs = asArray(oldSpec?.externalIPs).map(asString);
  asArray(spec.externalIPs).forEach((ip, i) => causes.push(...externalIPCauses(asString(ip), `spec.externalIPs[${i}]`, previousIPs)));
  if (type === '') causes.push(requiredField('spec.type'));
  else if (!TYPES.includes(type)) causes.push(notSupportedField('spec.type', type, TYPES));
  const nodePorts = new Set<string>();
  const servicePorts = new Set<string>();
  ports.forEach((p, i) => {
    const nodePort = asNumber(p.nodePort);
    if (nodePort !== 0) {
      const key = `${asString(p.protocol)}/${nodePort}`;
      if (nodePorts.has(key)) causes.push(duplicateField(`spec.ports[${i}].nodePort`, nodePort));
      nodePorts.add(key);
    }
    const key = `${asString(p.protocol)}/${asNumber(p.port)}`;
    if (servicePorts.has(key)) {
      causes.push(
        duplicateField(
          `spec.ports[${i}]`,
          goJson({ Name: '', Protocol: asString(p.protocol), AppProtocol: null, Port: asNumber(p.port), TargetPort: 0, NodePort: 0 }),
        ),
      );
    }
    servicePorts.add(key);
  });
  const ranges = asArray(spec.loadBalancerSourceRanges).map(asString);
  if (ranges.length > 0) {
    if (type !== 'LoadBalancer') causes.push(forbiddenField('spec.LoadBalancerSourceRanges', "may only be used when `type` is 'LoadBalancer'"));
    const previous = asArray(oldSpec?.loadBalancerSourceRanges).map((v) => asString(v).trim());
    ranges.forEach((value, i) => {
      const v = value.trim();
      if (!validCIDR(v) && !previous.includes(v))
        causes.push(invalidField(`spec.LoadBalancerSourceRanges[${i}]`, v, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'));
    });
  }
  if (spec.allocateLoadBalancerNodePorts !== undefined && spec.allocateLoadBalancerNodePorts !== null && type !== 'LoadBalancer') {
    causes.push(forbiddenField('spec.allocateLoadBalancerNodePorts', "may only be used when `type` is 'LoadBalancer'"));
  }
  if (type === 'LoadBalancer' && (spec.allocateLoadBalancerNodePorts === undefined || spec.allocateLoadBalancerNodePorts === null)) {
    causes.push(requiredField('allocateLoadBalancerNodePorts'));
  }
  const lbClass = spec.loadBalancerClass;
  if (typeof lbClass === 'string') {
    if (oldSpec !== undefined && asString(oldSpec.type) === 'LoadBalancer' && type === 'LoadBalancer' && oldSpec.loadBalancerClass !== lbClass) {
      causes.push(invalidField('spec.loadBalancerClass', lbClass, 'may not change once set'));
    }
    if (type === 'LoadBalancer') causes.push(...isLabelKey(lbClass).map((msg) => invalidField('spec.loadBalancerClass', lbClass, msg)));
    else causes.push(forbiddenField('spec.loadBalancerClass', "may only be used when `type` is 'LoadBalancer'"));
  }
  return [...causes, ...trafficPolicyCauses(spec, type)];
}
