/**
 * kube-apiserver 1.36's NetworkPolicy validation beyond metadata (checked against
 * test/golden/validation/): the pod selector, each rule's ports (protocol, port number or name,
 * endPort) and peers (exactly one kind of peer when an ipBlock is used, selectors, ipBlock CIDRs and
 * excepts strictly inside the CIDR), and at most two policy types, Ingress or Egress. On update, CIDRs
 * the old policy already had are accepted even when invalid, as kube does.
 * Not checked yet: the relaxed selector label values kube allows when the old pod selector was invalid.
 */
import type { StatusCause } from '../api/errors.js';
import { forbiddenField, goJson, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { cidrContains, legacyCIDRProblems, parseCIDR } from './ip-formats.js';
import { validateLabelSelector } from './label-selector.js';
import { asArray, asObject, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';
import { portNameProblems, portNumberProblems } from './value-formats.js';

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const POLICY_TYPES = ['Ingress', 'Egress'];

function portCauses(port: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (port.protocol !== undefined && port.protocol !== null && !PROTOCOLS.includes(asString(port.protocol))) {
    causes.push(notSupportedField(`${at}.protocol`, asString(port.protocol), PROTOCOLS));
  }
  const endPort = typeof port.endPort === 'number' ? port.endPort : undefined;
  if (typeof port.port === 'number') {
    const p = port.port;
    causes.push(...portNumberProblems(p).map((m) => invalidField(`${at}.port`, p, m)));
    if (endPort !== undefined) {
      if (endPort < p) causes.push(invalidField(`${at}.endPort`, p, 'must be greater than or equal to `port`'));
      causes.push(...portNumberProblems(endPort).map((m) => invalidField(`${at}.endPort`, endPort, m)));
    }
  } else if (typeof port.port === 'string') {
    const name = port.port;
    if (endPort !== undefined) causes.push(invalidField(`${at}.endPort`, endPort, 'may not be specified when `port` is non-numeric'));
    causes.push(...portNameProblems(name).map((m) => invalidField(`${at}.port`, name, m)));
  } else if (endPort !== undefined) {
    causes.push(invalidField(`${at}.endPort`, endPort, 'may not be specified when `port` is not specified'));
  }
  return causes;
}

function ipBlockCauses(block: Obj, at: string, allowedCIDRs: Set<string>): StatusCause[] {
  const cidr = asString(block.cidr);
  if (cidr === '') return [requiredField(`${at}.cidr`)];
  const problems = (value: string): string[] => (allowedCIDRs.has(value) ? [] : legacyCIDRProblems(value));
  const causes = problems(cidr).map((m) => invalidField(`${at}.cidr`, cidr, m));
  const network = parseCIDR(cidr);
  if (network === undefined) return causes;
  asArray(block.except).forEach((v, i) => {
    const except = asString(v);
    const exceptAt = `${at}.except[${i}]`;
    causes.push(...problems(except).map((m) => invalidField(exceptAt, except, m)));
    const parsed = parseCIDR(except);
    if (parsed === undefined) return;
    if (!cidrContains(network, parsed.network) || network.bits >= parsed.bits) {
      causes.push(invalidField(exceptAt, except, 'must be a strict subset of `cidr`'));
    }
  });
  return causes;
}

function peerCauses(peer: Obj, at: string, allowedCIDRs: Set<string>): StatusCause[] {
  const causes: StatusCause[] = [];
  let peers = 0;
  for (const key of ['podSelector', 'namespaceSelector']) {
    if (objectOrUndefined(peer[key]) === undefined) continue;
    peers++;
    causes.push(...validateLabelSelector(peer[key], `${at}.${key}`));
  }
  const block = objectOrUndefined(peer.ipBlock);
  if (block !== undefined) {
    peers++;
    causes.push(...ipBlockCauses(block, `${at}.ipBlock`, allowedCIDRs));
  }
  if (peers === 0) causes.push(requiredField(at, 'must specify a peer'));
  else if (peers > 1 && block !== undefined) causes.push(forbiddenField(at, 'may not specify both ipBlock and another peer'));
  return causes;
}

/** Every ipBlock CIDR and except of a policy (kube lets an update keep these even when invalid). */
function policyCIDRs(spec: Obj): Set<string> {
  const out = new Set<string>();
  const rules = [...objects(spec.ingress).flatMap((r) => objects(r.from)), ...objects(spec.egress).flatMap((r) => objects(r.to))];
  for (const peer of rules) {
    const block = objectOrUndefined(peer.ipBlock);
    if (block === undefined) continue;
    out.add(asString(block.cidr));
    for (const e of asArray(block.except)) out.add(asString(e));
  }
  return out;
}

/** The causes of a NetworkPolicy's spec (create and update). */
export function validateNetworkPolicy(np: Obj, old?: Obj): StatusCause[] {
  const spec = asObject(np.spec);
  const allowedCIDRs = old === undefined ? new Set<string>() : policyCIDRs(asObject(old.spec));
  const causes = validateLabelSelector(asObject(spec.podSelector), 'spec.podSelector');
  for (const [direction, peersKey] of [
    ['ingress', 'from'],
    ['egress', 'to'],
  ] as const) {
    objects(spec[direction]).forEach((rule, i) => {
      const at = `spec.${direction}[${i}]`;
      objects(rule.ports).forEach((port, pi) => causes.push(...portCauses(port, `${at}.ports[${pi}]`)));
      objects(rule[peersKey]).forEach((peer, pi) => causes.push(...peerCauses(peer, `${at}.${peersKey}[${pi}]`, allowedCIDRs)));
    });
  }
  const policyTypes = asArray(spec.policyTypes);
  if (policyTypes.length > POLICY_TYPES.length) {
    causes.push(invalidField('spec.policyTypes', goJson(policyTypes), 'may not specify more than two policyTypes'));
    return causes;
  }
  policyTypes.forEach((t, i) => {
    if (!POLICY_TYPES.includes(asString(t))) causes.push(notSupportedField(`spec.policyTypes[${i}]`, asString(t), POLICY_TYPES));
  });
  return causes;
}
