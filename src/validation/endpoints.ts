/**
 * kube-apiserver 1.36's Endpoints validation beyond metadata (checked against
 * test/golden/validation/): each subset has addresses or not-ready addresses; each address has a
 * valid, routable IP (not unspecified, loopback or link-local), a DNS-label hostname and a node name
 * that is a DNS subdomain; each port a DNS-label name (required when the subset has several ports),
 * a number in 1..65535, a supported protocol and a qualified-name appProtocol. An update that leaves
 * the subsets unchanged is not refused for them, as kube tolerates data older versions accepted.
 */
import type { StatusCause } from '../api/errors.js';
import { invalidField, notSupportedField, requiredField } from './field-errors.js';
import { endpointIPProblems, legacyIPProblems } from './ip-formats.js';
import { semanticEqual } from './semantic-equal.js';
import { isDNS1123Label, isDNS1123Subdomain, isLabelKey } from './string-formats.js';
import { asString, type Obj } from '../api/values.js';
import { objects } from './value-access.js';
import { portNumberProblems } from './value-formats.js';

export const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function addressCauses(address: Obj, at: string): StatusCause[] {
  const ip = asString(address.ip);
  const causes = legacyIPProblems(ip).map((m) => invalidField(`${at}.ip`, ip, m));
  const hostname = asString(address.hostname);
  if (hostname !== '') causes.push(...isDNS1123Label(hostname).map((m) => invalidField(`${at}.hostname`, hostname, m)));
  if (typeof address.nodeName === 'string') {
    const nodeName = address.nodeName;
    causes.push(...isDNS1123Subdomain(nodeName).map((m) => invalidField(`${at}.nodeName`, nodeName, m)));
  }
  causes.push(...endpointIPProblems(ip).map((m) => invalidField(`${at}.ip`, ip, m)));
  return causes;
}

function portCauses(port: Obj, requireName: boolean, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = asString(port.name);
  if (requireName && name === '') causes.push(requiredField(`${at}.name`));
  else if (name !== '') causes.push(...isDNS1123Label(name).map((m) => invalidField(`${at}.name`, name, m)));
  const number = typeof port.port === 'number' ? port.port : 0;
  causes.push(...portNumberProblems(number).map((m) => invalidField(`${at}.port`, number, m)));
  const protocol = asString(port.protocol);
  if (protocol === '') causes.push(requiredField(`${at}.protocol`));
  else if (!PORT_PROTOCOLS.includes(protocol)) causes.push(notSupportedField(`${at}.protocol`, protocol, PORT_PROTOCOLS));
  if (typeof port.appProtocol === 'string') {
    const appProtocol = port.appProtocol;
    causes.push(...isLabelKey(appProtocol).map((m) => invalidField(`${at}.appProtocol`, appProtocol, m)));
  }
  return causes;
}

function subsetsCauses(subsets: Obj[]): StatusCause[] {
  return subsets.flatMap((subset, i) => {
    const at = `subsets[${i}]`;
    const addresses = objects(subset.addresses);
    const notReady = objects(subset.notReadyAddresses);
    const ports = objects(subset.ports);
    const causes = addresses.length === 0 && notReady.length === 0 ? [requiredField(at, 'must specify `addresses` or `notReadyAddresses`')] : [];
    addresses.forEach((a, j) => causes.push(...addressCauses(a, `${at}.addresses[${j}]`)));
    notReady.forEach((a, j) => causes.push(...addressCauses(a, `${at}.notReadyAddresses[${j}]`)));
    ports.forEach((p, j) => causes.push(...portCauses(p, ports.length > 1, `${at}.ports[${j}]`)));
    return causes;
  });
}

/** An Endpoints object's own checks (create, or update given the stored object). */
export function validateEndpoints(endpoints: Obj, old?: Obj): StatusCause[] {
  const causes = subsetsCauses(objects(endpoints.subsets));
  if (causes.length > 0 && old !== undefined && semanticEqual(old.subsets, endpoints.subsets)) return [];
  return causes;
}
