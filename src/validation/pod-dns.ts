/**
 * kube 1.36's validation of a pod spec's `dnsConfig` (with `dnsPolicy: None` requiring it) and
 * `hostAliases`: at most 3 IP nameservers, at most 32 search paths of at most 2048 characters in all,
 * each a subdomain that may hold underscores (a lone "." allowed), named options; host alias IPs and
 * subdomain hostnames.
 */
import { isIP } from 'node:net';
import type { StatusCause } from '../api/errors.js';
import { ipv4Problem } from '../config/ip-range.js';
import { goJson, invalidField, requiredField } from './field-errors.js';
import { isIPv4Mapped, parseIP } from './ip-formats.js';
import { isDNS1123Subdomain, isDNS1123SubdomainWithUnderscore } from './string-formats.js';
import { asArray, asString, objectOrUndefined } from '../api/values.js';
import { objects } from './value-access.js';

const MAX_NAMESERVERS = 3;
const MAX_SEARCH_PATHS = 32;
const MAX_SEARCH_CHARS = 2048;

/** IsValidIPForLegacyField for a new value: an IPv4 address without leading zeros, or an IPv6 one that is not IPv4-mapped. */
function ipCauses(ip: string, field: string): StatusCause[] {
  if (isIP(ip) === 6) {
    const parsed = parseIP(ip);
    return parsed !== undefined && isIPv4Mapped(parsed) ? [invalidField(field, ip, 'must not be an IPv4-mapped IPv6 address')] : [];
  }
  const problem = ipv4Problem(ip);
  return problem === undefined ? [] : [invalidField(field, ip, problem)];
}

export function validatePodDNSConfig(config: unknown, dnsPolicy: string, field: string): StatusCause[] {
  const dns = objectOrUndefined(config);
  if (dnsPolicy === 'None') {
    if (dns === undefined) return [requiredField(field, 'must provide `dnsConfig` when `dnsPolicy` is None')];
    if (asArray(dns.nameservers).length === 0)
      return [requiredField(`${field}.nameservers`, 'must provide at least one DNS nameserver when `dnsPolicy` is None')];
  }
  if (dns === undefined) return [];
  const causes: StatusCause[] = [];
  const nameservers = asArray(dns.nameservers).map(asString);
  if (nameservers.length > MAX_NAMESERVERS) {
    causes.push(invalidField(`${field}.nameservers`, goJson(nameservers), `must not have more than ${MAX_NAMESERVERS} nameservers`));
  }
  nameservers.forEach((ns, i) => causes.push(...ipCauses(ns, `${field}.nameservers[${i}]`)));
  const searches = asArray(dns.searches).map(asString);
  if (searches.length > MAX_SEARCH_PATHS) {
    causes.push(invalidField(`${field}.searches`, goJson(searches), `must not have more than ${MAX_SEARCH_PATHS} search paths`));
  }
  if (searches.join(' ').length > MAX_SEARCH_CHARS) {
    causes.push(
      invalidField(`${field}.searches`, goJson(searches), `must not have more than ${MAX_SEARCH_CHARS} characters (including spaces) in the search list`),
    );
  }
  searches.forEach((search, i) => {
    if (search === '.') return;
    const trimmed = search.replace(/\.$/, '');
    causes.push(...isDNS1123SubdomainWithUnderscore(trimmed).map((msg) => invalidField(`${field}.searches[${i}]`, trimmed, msg)));
  });
  objects(dns.options).forEach((option, i) => {
    if (asString(option.name) === '') causes.push(requiredField(`${field}.options[${i}]`, 'must not be empty'));
  });
  return causes;
}

export function validateHostAliases(aliases: unknown, field: string): StatusCause[] {
  return objects(aliases).flatMap((alias, i) => [
    ...ipCauses(asString(alias.ip), `${field}[${i}].ip`),
    ...asArray(alias.hostnames).flatMap((h, j) =>
      isDNS1123Subdomain(asString(h)).map((msg) => invalidField(`${field}[${i}].hostnames[${j}]`, asString(h), msg)),
    ),
  ]);
}
