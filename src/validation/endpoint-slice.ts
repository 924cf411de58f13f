/**
 * kube-apiserver 1.36's EndpointSlice validation beyond metadata (checked against
 * test/golden/validation/): a supported address type (immutable on update); ports with DNS-label,
 * unique names, a supported protocol and a qualified-name appProtocol; endpoints (at most 1000) with
 * 1..100 addresses of the slice's type (IPv4 in legacy form, IPv6 strict and canonical, both routable;
 * FQDNs), DNS-subdomain node names, DNS-label hostnames, and zone and node hints (at most 8 each,
 * unique, valid). An update that leaves the endpoints unchanged is not refused for them.
 * An absent port name reads as "" and an absent protocol as TCP, the defaults objects arrive with.
 * deprecatedTopology is not validated: kube drops it on v1 writes (Capstan does not drop it yet).
 */
import type { StatusCause } from '../api/errors.js';
import { duplicateField, invalidField, notSupportedField, requiredField } from './field-errors.js';
import { FIELD_IMMUTABLE } from './object-meta.js';
import { asIPv4, endpointIPProblems, legacyIPProblems, parseIP, strictIPProblems } from './ip-formats.js';
import { semanticEqual } from './semantic-equal.js';
import { isDNS1123Label, isDNS1123Subdomain, isLabelKey, isLabelValue } from './string-formats.js';
import { asArray, asString, type Obj, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_HINTS = 8;

function tooMany(field: string, actual: number, max: number): StatusCause {
  return { reason: 'FieldValueTooMany', field, message: `Too many: ${actual}: must have at most ${max} items` };
}

function portsCauses(ports: Obj[]): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen: string[] = [];
  ports.forEach((port, i) => {
    const at = `ports[${i}]`;
    const name = asString(port.name);
    if (name !== '') causes.push(...isDNS1123Label(name).map((m) => invalidField(`${at}.name`, name, m)));
    if (seen.includes(name)) causes.push(duplicateField(`${at}.name`, name));
    else seen.push(name);
    const protocol = port.protocol === undefined || port.protocol === null ? 'TCP' : asString(port.protocol);
    if (!PORT_PROTOCOLS.includes(protocol)) causes.push(notSupportedField(`${at}.protocol`, protocol, PORT_PROTOCOLS));
    if (typeof port.appProtocol === 'string') {
      const appProtocol = port.appProtocol;
      causes.push(...isLabelKey(appProtocol).map((m) => invalidField(`${at}.appProtocol`, appProtocol, m)));
    }
  });
  return causes;
}

/** IsFullyQualifiedDomainName: a DNS subdomain of at least two labels (a trailing dot is ignored). */
function fqdnCauses(value: string, at: string): StatusCause[] {
  if (value === '') return [requiredField(at)];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const subdomain = isDNS1123Subdomain(name);
  if (subdomain.length > 0) return [invalidField(at, name, subdomain.join(','))];
  const labels = name.split('.');
  if (labels.length < 2) return [invalidField(at, name, 'should be a domain with at least two segments separated by dots')];
  for (const label of labels) {
    const errs = isDNS1123Label(label);
    if (errs.length > 0) return [invalidField(at, label, errs.join(','))];
  }
  return [];
}

function addressCauses(address: string, addressType: string, listPath: string, at: string): StatusCause[] {
  switch (addressType) {
    case 'IPv4': {
      const problems = legacyIPProblems(address);
      if (problems.length > 0) return problems.map((m) => invalidField(at, address, m));
      const ip = parseIP(address) ?? [];
      const causes = asIPv4(ip) === undefined ? [invalidField(listPath, address, 'must be an IPv4 address')] : [];
      return [...causes, ...endpointIPProblems(address).map((m) => invalidField(at, address, m))];
    }
    case 'IPv6': {
      const problems = strictIPProblems(address);
      if (problems.length > 0) return problems.map((m) => invalidField(at, address, m));
      const ip = parseIP(address) ?? [];
      const causes = asIPv4(ip) !== undefined ? [invalidField(listPath, address, 'must be an IPv6 address')] : [];
      return [...causes, ...endpointIPProblems(address).map((m) => invalidField(at, address, m))];
    }
    case 'FQDN':
      return fqdnCauses(address, at);
    default:
      return [];
  }
}

function hintsCauses(hints: Obj, at: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [key, check] of [
    ['forZones', isLabelValue],
    ['forNodes', isDNS1123Subdomain],
  ] as const) {
    const entries = objects(hints[key]);
    if (entries.length > MAX_HINTS) return [...causes, tooMany(`${at}.${key}`, entries.length, MAX_HINTS)];
    const seen: string[] = [];
    entries.forEach((entry, i) => {
      const path = `${at}.${key}[${i}].name`;
      const name = asString(entry.name);
      if (seen.includes(name)) causes.push(duplicateField(path, name));
      else seen.push(name);
      causes.push(...check(name).map((m) => invalidField(path, name, m)));
    });
  }
  return causes;
}

function endpointsCauses(endpoints: Obj[], addressType: string): StatusCause[] {
  if (endpoints.length > MAX_ENDPOINTS) return [tooMany('endpoints', endpoints.length, MAX_ENDPOINTS)];
  const causes: StatusCause[] = [];
  endpoints.forEach((endpoint, i) => {
    const at = `endpoints[${i}]`;
    const addresses = asArray(endpoint.addresses).map(asString);
    if (addresses.length === 0) causes.push(requiredField(`${at}.addresses`, 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) causes.push(tooMany(`${at}.addresses`, addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, j) => causes.push(...addressCauses(a, addressType, `${at}.addresses`, `${at}.addresses[${j}]`)));
    if (typeof endpoint.nodeName === 'string') {
      const nodeName = endpoint.nodeName;
      causes.push(...isDNS1123Subdomain(nodeName).map((m) => invalidField(`${at}.nodeName`, nodeName, m)));
    }
    if (typeof endpoint.hostname === 'string') {
      const hostname = endpoint.hostname;
      causes.push(...isDNS1123Label(hostname).map((m) => invalidField(`${at}.hostname`, hostname, m)));
    }
    const hints = objectOrUndefined(endpoint.hints);
    if (hints !== undefined) causes.push(...hintsCauses(hints, `${at}.hints`));
  });
  return causes;
}

/** An EndpointSlice's own checks (create, or update given the stored slice). */
export function validateEndpointSlice(slice: Obj, old?: Obj): StatusCause[] {
  const addressType = asString(slice.addressType);
  const causes: StatusCause[] = [];
  if (addressType === '') causes.push(requiredField('addressType'));
  else if (!ADDRESS_TYPES.includes(addressType)) causes.push(notSupportedField('addressType', addressType, ADDRESS_TYPES));
  causes.push(...portsCauses(objects(slice.ports)));
  const endpointCauses = endpointsCauses(objects(slice.endpoints), addressType);
  if (!(old !== undefined && semanticEqual(old.endpoints, slice.endpoints))) causes.push(...endpointCauses);
  if (old !== undefined && addressType !== asString(old.addressType)) causes.push(invalidField('addressType', addressType, FIELD_IMMUTABLE));
  return causes;
}
