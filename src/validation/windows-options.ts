/**
 * kube 1.36's validateWindowsSecurityContextOptions: a GMSA credential spec name that is a DNS
 * subdomain, a non-empty GMSA credential spec of at most 64 KiB, and a `runAsUserName` of the form
 * `[DOMAIN\]USER` (a NetBIOS or DNS domain under 256 characters; a user of at most 104 bytes, not only
 * dots and spaces, without control or reserved characters).
 */
import type { StatusCause } from '../api/errors.js';
import { invalidField } from './field-errors.js';
import { isDNS1123Subdomain } from './string-formats.js';
import { objectOrUndefined } from '../api/values.js';

const MAX_CREDENTIAL_SPEC_KIB = 64;
const MAX_DOMAIN_LENGTH = 256;
const MAX_USER_LENGTH = 104;
const CONTROL = /[\x00-\x1f\x7f]/;
const NETBIOS_DOMAIN = /^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$/u;
const DNS_LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?';
const DNS_DOMAIN = new RegExp(`^${DNS_LABEL}(?:\\.${DNS_LABEL})*$`);
const RESERVED_USER_CHARS = /["/\\:;|=,+*?<>@[\]]/;
const ONLY_DOTS_AND_SPACES = /^[. ]+$/;

function userNameProblems(name: string): string[] {
  if (name === '') return ['runAsUserName cannot be an empty string'];
  if (CONTROL.test(name)) return ['runAsUserName cannot contain control characters'];
  const parts = name.split('\\');
  if (parts.length > 2) return ['runAsUserName cannot contain more than one backslash'];
  const [domain, user] = parts.length === 1 ? ['', parts[0] ?? ''] : [parts[0] ?? '', parts[1] ?? ''];
  const problems: string[] = [];
  if (domain.length >= MAX_DOMAIN_LENGTH) problems.push(`runAsUserName's Domain length must be under ${MAX_DOMAIN_LENGTH} characters`);
  if (parts.length === 2 && !NETBIOS_DOMAIN.test(domain) && !DNS_DOMAIN.test(domain)) {
    problems.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format");
  }
  const userBytes = Buffer.byteLength(user, 'utf8');
  if (userBytes === 0) problems.push("runAsUserName's User cannot be empty");
  else if (userBytes > MAX_USER_LENGTH) problems.push(`runAsUserName's User length must not be longer than ${MAX_USER_LENGTH} characters`);
  if (ONLY_DOTS_AND_SPACES.test(user)) problems.push("runAsUserName's User cannot contain only periods or spaces");
  if (RESERVED_USER_CHARS.test(user)) problems.push(`runAsUserName's User cannot contain the following characters: "/\\:;|=,+*?<>@[]`);
  return problems;
}

/** The `windowsOptions` of a pod or container security context at `field`. */
export function validateWindowsOptions(value: unknown, field: string): StatusCause[] {
  const options = objectOrUndefined(value);
  if (options === undefined) return [];
  const causes: StatusCause[] = [];
  const specName = options.gmsaCredentialSpecName;
  if (typeof specName === 'string') {
    causes.push(...isDNS1123Subdomain(specName).map((msg) => invalidField(`${field}.gmsaCredentialSpecName`, specName, msg)));
  }
  const spec = options.gmsaCredentialSpec;
  if (typeof spec === 'string') {
    const bytes = Buffer.byteLength(spec, 'utf8');
    if (bytes === 0) causes.push(invalidField(`${field}.gmsaCredentialSpec`, spec, 'gmsaCredentialSpec cannot be an empty string'));
    else if (bytes > MAX_CREDENTIAL_SPEC_KIB * 1024) {
      causes.push(invalidField(`${field}.gmsaCredentialSpec`, spec, `gmsaCredentialSpec size must be under ${MAX_CREDENTIAL_SPEC_KIB} KiB`));
    }
  }
  const userName = options.runAsUserName;
  if (typeof userName === 'string') causes.push(...userNameProblems(userName).map((msg) => invalidField(`${field}.runAsUserName`, userName, msg)));
  return causes;
}
