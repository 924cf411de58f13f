import { X509Certificate } from 'node:crypto';
import { aggregateText, causeText, duplicateField, forbiddenField, goJson, goQuote, invalidField, requiredField } from '../../validation/field-errors.js';
import { isDNS1123Subdomain, regexError } from '../../validation/string-formats.js';
import type { AuthenticationConfiguration, JwtAuthenticatorSpec, PrefixedClaimOrExpression } from './authentication-configuration.js';
import { compileAuthExpression, type CompiledClaimExpression } from './claims-cel.js';

/**
 * kube-apiserver 1.36's validation of an AuthenticationConfiguration (k8s.io/apiserver
 * pkg/apis/apiserver/validation), with its field paths and messages, and the compiled CEL of each
 * JWT authenticator. The texts are field errors as Go prints them (`jwt[0].issuer.url: Invalid value:
 * "http://x": URL scheme must be https`).
 */

/** The compiled CEL of one JWT authenticator (claim mappings by claim name are read from its spec). */
export interface CompiledJwtRules {
  username?: CompiledClaimExpression;
  groups?: CompiledClaimExpression;
  uid?: CompiledClaimExpression;
  extra: { key: string; compiled: CompiledClaimExpression }[];
  claimValidation: { compiled: CompiledClaimExpression; message: string }[];
  userValidation: { compiled: CompiledClaimExpression; message: string }[];
}

const MAX_JWT_AUTHENTICATORS = 64;
const HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";
const HTTP_PATH = new RegExp(`^${HTTP_PATH_FMT}$`);

function child(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/** Field errors of the whole file (issuers and discovery URLs unique, at most 64 authenticators, anonymous). */
export function validateAuthenticationConfiguration(config: AuthenticationConfiguration, disallowedIssuers: readonly string[]): string[] {
  if (config.jwt.length > MAX_JWT_AUTHENTICATORS) {
    return [causeText(invalidFieldTooMany('jwt', config.jwt.length))];
  }
  const errors: string[] = [];
  const issuers = new Set<string>();
  const discoveryURLs = new Set<string>();
  config.jwt.forEach((a, i) => {
    const path = `jwt[${i}]`;
    errors.push(...validateJwtAuthenticator(a, path, disallowedIssuers).errors);
    if (issuers.has(a.issuer.url)) errors.push(causeText(duplicateField(`${path}.issuer.url`, a.issuer.url)));
    issuers.add(a.issuer.url);
    const discovery = a.issuer.discoveryURL ?? '';
    if (discovery !== '') {
      if (discoveryURLs.has(discovery)) errors.push(causeText(duplicateField(`${path}.issuer.discoveryURL`, discovery)));
      discoveryURLs.add(discovery);
    }
  });
  const anonymous = config.anonymous;
  if (anonymous !== undefined && !anonymous.enabled && anonymous.conditions.length > 0) {
    // kube prints the internal type, whose fields have no JSON names.
    const value = goJson(anonymous.conditions.map((c) => ({ Path: c.path })));
    errors.push(causeText(invalidField('anonymous.conditions', value, 'enabled should be set to true when conditions are defined')));
  }
  return errors;
}

function invalidFieldTooMany(field: string, count: number): { field: string; message: string; reason: string } {
  return { field, reason: 'FieldValueTooMany', message: `Too many: ${count}: must have at most ${MAX_JWT_AUTHENTICATORS} items` };
}

/** The message kube starts with a refused configuration: `invalid authentication configuration: ...`. */
export function invalidConfigurationMessage(errors: readonly string[]): string {
  return `invalid authentication configuration: ${aggregateText(errors)}`;
}

/**
 * Validates and compiles one JWT authenticator. `path` prefixes field paths (`jwt[0]`; '' as kube's
 * authenticator constructor validates, without one). Issuers listed in `disallowedIssuers` (the
 * service account issuers) are refused.
 */
export function validateJwtAuthenticator(
  spec: JwtAuthenticatorSpec,
  path: string,
  disallowedIssuers: readonly string[],
): { errors: string[]; rules: CompiledJwtRules } {
  const errors: string[] = [];
  const rules: CompiledJwtRules = { extra: [], claimValidation: [], userValidation: [] };
  const issuerPath = child(path, 'issuer');
  const issuer = spec.issuer;
  if (issuer.url === '') errors.push(causeText(requiredField(child(issuerPath, 'url'))));
  else errors.push(...urlErrors(issuer.url, disallowedIssuers, child(issuerPath, 'url')));
  const discovery = issuer.discoveryURL ?? '';
  if (discovery !== '') {
    const field = child(issuerPath, 'discoveryURL');
    if (issuer.url !== '' && issuer.url.replace(/\/+$/, '') === discovery.replace(/\/+$/, '')) {
      errors.push(causeText(invalidField(field, discovery, 'discoveryURL must be different from URL')));
    }
    errors.push(...urlErrors(discovery, [], field));
  }
  errors.push(...audienceErrors(issuer.audiences, issuer.audienceMatchPolicy, child(issuerPath, 'audiences'), child(issuerPath, 'audienceMatchPolicy')));
  if (issuer.certificateAuthority !== '' && !hasCertificates(issuer.certificateAuthority)) {
    errors.push(causeText(invalidField(child(issuerPath, 'certificateAuthority'), '<omitted>', 'data does not contain any valid RSA or ECDSA certificates')));
  }
  if (issuer.egressSelectorType !== '' && issuer.egressSelectorType !== 'controlplane' && issuer.egressSelectorType !== 'cluster') {
    errors.push(
      causeText(invalidField(child(issuerPath, 'egressSelectorType'), issuer.egressSelectorType, 'egress selector must be either controlplane or cluster')),
    );
  }
  let usesEmail = false;
  let usesEmailVerified = false;
  // claimValidationRules
  const rulesPath = child(path, 'claimValidationRules');
  const seenClaims = new Set<string>();
  const seenExpressions = new Set<string>();
  spec.claimValidationRules.forEach((rule, i) => {
    const p = `${rulesPath}[${i}]`;
    if (rule.claim !== '' && rule.expression !== '') errors.push(causeText(invalidField(p, rule.claim, "claim and expression can't both be set")));
    else if (rule.claim === '' && rule.expression === '') errors.push(causeText(requiredField(p, 'claim or expression is required')));
    else if (rule.claim !== '') {
      if (rule.message !== '') errors.push(causeText(invalidField(`${p}.message`, rule.message, 'may not be specified when claim is set')));
      if (seenClaims.has(rule.claim)) errors.push(causeText(duplicateField(`${p}.claim`, rule.claim)));
      seenClaims.add(rule.claim);
    } else {
      if (rule.requiredValue !== '')
        errors.push(causeText(invalidField(`${p}.requiredValue`, rule.requiredValue, 'may not be specified when expression is set')));
      if (seenExpressions.has(rule.expression)) {
        errors.push(causeText(duplicateField(`${p}.expression`, rule.expression)));
        return;
      }
      seenExpressions.add(rule.expression);
      const c = compileAuthExpression(rule.expression, 'claims', true);
      if (!c.ok) errors.push(causeText(invalidField(`${p}.expression`, rule.expression, c.detail)));
      else {
        rules.claimValidation.push({ compiled: c.compiled, message: rule.message });
        usesEmailVerified ||= c.compiled.usesEmailVerified;
      }
    }
  });
  // claimMappings
  const mappingsPath = child(path, 'claimMappings');
  const m = spec.claimMappings;
  const username = prefixedClaimOrExpression(m.username, child(mappingsPath, 'username'), true, errors);
  if (username !== undefined) {
    rules.username = username;
    usesEmail ||= username.usesEmail;
    usesEmailVerified ||= username.usesEmailVerified;
  }
  rules.groups = prefixedClaimOrExpression(m.groups, child(mappingsPath, 'groups'), false, errors);
  if (m.uid.claim !== '' && m.uid.expression !== '')
    errors.push(causeText(invalidField(child(mappingsPath, 'uid'), '', "claim and expression can't both be set")));
  else if (m.uid.expression !== '') {
    const c = compileAuthExpression(m.uid.expression, 'claims', false);
    if (!c.ok) errors.push(causeText(invalidField(`${mappingsPath}.uid.expression`, m.uid.expression, c.detail)));
    else rules.uid = c.compiled;
  }
  const seenKeys = new Set<string>();
  m.extra.forEach((mapping, i) => {
    const p = `${mappingsPath}.extra[${i}]`;
    errors.push(...domainPrefixedPathErrors(`${p}.key`, mapping.key));
    if (mapping.key !== mapping.key.toLowerCase()) errors.push(causeText(invalidField(`${p}.key`, mapping.key, 'must be lowercase')));
    if (isKubernetesDomainPrefix(mapping.key)) {
      errors.push(causeText(invalidField(`${p}.key`, mapping.key, 'k8s.io, kubernetes.io and their subdomains are reserved for Kubernetes use')));
    }
    if (seenKeys.has(mapping.key)) {
      errors.push(causeText(duplicateField(`${p}.key`, mapping.key)));
      return;
    }
    seenKeys.add(mapping.key);
    if (mapping.valueExpression === '') {
      errors.push(causeText(requiredField(`${p}.valueExpression`)));
      return;
    }
    const c = compileAuthExpression(mapping.valueExpression, 'claims', false);
    if (!c.ok) errors.push(causeText(invalidField(`${p}.valueExpression`, mapping.valueExpression, c.detail)));
    else {
      rules.extra.push({ key: mapping.key, compiled: c.compiled });
      usesEmailVerified ||= c.compiled.usesEmailVerified;
    }
  });
  if (usesEmail && !usesEmailVerified) {
    errors.push(
      causeText(
        invalidField(
          `${mappingsPath}.username.expression`,
          m.username.expression,
          'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
        ),
      ),
    );
  }
  // userValidationRules
  const userPath = child(path, 'userValidationRules');
  const seenUserExpressions = new Set<string>();
  spec.userValidationRules.forEach((rule, i) => {
    const p = `${userPath}[${i}].expression`;
    if (rule.expression === '') {
      errors.push(causeText(requiredField(p)));
      return;
    }
    if (seenUserExpressions.has(rule.expression)) {
      errors.push(causeText(duplicateField(p, rule.expression)));
      return;
    }
    seenUserExpressions.add(rule.expression);
    const c = compileAuthExpression(rule.expression, 'user', true);
    if (!c.ok) errors.push(causeText(invalidField(p, rule.expression, c.detail)));
    else rules.userValidation.push({ compiled: c.compiled, message: rule.message });
  });
  return { errors, rules };
}

function prefixedClaimOrExpression(mapping: PrefixedClaimOrExpression, path: string, required: boolean, errors: string[]): CompiledClaimExpression | undefined {
  if (mapping.expression !== '' && mapping.claim !== '') {
    errors.push(causeText(invalidField(path, '', "claim and expression can't both be set")));
    return undefined;
  }
  if (mapping.expression === '' && mapping.claim === '') {
    if (required) errors.push(causeText(requiredField(path, 'claim or expression is required')));
    return undefined;
  }
  if (mapping.expression !== '') {
    if (mapping.prefix !== undefined) errors.push(causeText(invalidField(`${path}.prefix`, mapping.prefix, 'may not be specified when expression is set')));
    const c = compileAuthExpression(mapping.expression, 'claims', false);
    if (!c.ok) {
      errors.push(causeText(invalidField(`${path}.expression`, mapping.expression, c.detail)));
      return undefined;
    }
    return c.compiled;
  }
  if (mapping.prefix === undefined) {
    errors.push(causeText(requiredField(`${path}.prefix`, 'prefix is required when claim is set. It can be set to an empty string to disable prefixing')));
  }
  return undefined;
}

function audienceErrors(audiences: readonly string[], policy: string, path: string, policyPath: string): string[] {
  if (audiences.length === 0) return [causeText(requiredField(path, `at least one ${path} is required`))];
  const errors: string[] = [];
  const seen = new Set<string>();
  audiences.forEach((a, i) => {
    if (a === '') errors.push(causeText(requiredField(`${path}[${i}]`)));
    if (seen.has(a)) errors.push(causeText(duplicateField(`${path}[${i}]`, a)));
    seen.add(a);
  });
  if (audiences.length > 1 && policy !== 'MatchAny')
    errors.push(causeText(invalidField(policyPath, policy, 'audienceMatchPolicy must be MatchAny for multiple audiences')));
  if (audiences.length === 1 && policy !== '' && policy !== 'MatchAny') {
    errors.push(causeText(invalidField(policyPath, policy, 'audienceMatchPolicy must be empty or MatchAny for single audience')));
  }
  return errors;
}

/** kube's validateURL: https, no user, query or fragment, not a disallowed (service account) issuer. */
function urlErrors(url: string, disallowed: readonly string[], path: string): string[] {
  const errors: string[] = [];
  if (disallowed.includes(url)) {
    errors.push(causeText(invalidField(path, url, `URL must not overlap with disallowed issuers: [${[...new Set(disallowed)].sort().join(' ')}]`)));
  }
  const parsed = goUrlParts(url);
  if (typeof parsed === 'string') {
    errors.push(causeText(invalidField(path, url, parsed)));
    return errors;
  }
  if (parsed.scheme !== 'https') errors.push(causeText(invalidField(path, url, 'URL scheme must be https')));
  if (parsed.hasUser) errors.push(causeText(invalidField(path, url, 'URL must not contain a username or password')));
  if (parsed.query) errors.push(causeText(invalidField(path, url, 'URL must not contain a query')));
  if (parsed.fragment) errors.push(causeText(invalidField(path, url, 'URL must not contain a fragment')));
  return errors;
}

/** The parts of a URL Go's url.Parse finds (scheme lowercased), or its error text. */
function goUrlParts(url: string): { scheme: string; hasUser: boolean; query: boolean; fragment: boolean } | string {
  if ([...url].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f)) return `parse ${goQuote(url)}: net/url: invalid control character in URL`;
  const hash = url.indexOf('#');
  const fragment = hash >= 0 && hash < url.length - 1;
  const rest = hash >= 0 ? url.slice(0, hash) : url;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(rest)?.[1]?.toLowerCase() ?? '';
  const afterScheme = scheme === '' ? rest : rest.slice(scheme.length + 1);
  const q = afterScheme.indexOf('?');
  const query = q >= 0 && q < afterScheme.length - 1;
  const authority = afterScheme.startsWith('//') ? afterScheme.slice(2).split(/[/?]/)[0] : '';
  return { scheme, hasUser: authority.includes('@'), query, fragment };
}

function hasCertificates(pem: string): boolean {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return false;
  try {
    for (const block of blocks) new X509Certificate(block);
    return true;
  } catch {
    return false;
  }
}

/** kube's IsDomainPrefixedPath. */
function domainPrefixedPathErrors(field: string, value: string): string[] {
  if (value === '') return [causeText(requiredField(field))];
  const slash = value.indexOf('/');
  if (slash <= 0 || slash === value.length - 1) return [causeText(invalidField(field, value, 'must be a domain-prefixed path (such as "acme.io/foo")'))];
  const host = value.slice(0, slash);
  const path = value.slice(slash + 1);
  const errors = isDNS1123Subdomain(host).map((msg) => causeText(invalidField(field, host, msg)));
  if (!HTTP_PATH.test(path)) errors.push(causeText(invalidField(field, path, regexError('Invalid path', HTTP_PATH_FMT))));
  return errors;
}

function isKubernetesDomainPrefix(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const domain = key.slice(0, slash);
  return domain === 'kubernetes.io' || domain.endsWith('.kubernetes.io') || domain === 'k8s.io' || domain.endsWith('.k8s.io');
}

/** kube's refusal of `--anonymous-auth` beside the file's anonymous section, and of a changed section on reload. */
export const ANONYMOUS_FLAG_CONFLICT = causeText(
  forbiddenField('anonymous', '--anonymous-auth flag cannot be set when anonymous field is configured in authentication configuration file'),
);
export const ANONYMOUS_CHANGED = causeText(forbiddenField('anonymous', 'changed from initial configuration file'));
