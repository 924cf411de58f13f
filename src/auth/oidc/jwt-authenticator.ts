import type { User } from '../../api/user.js';
import type { AuthenticationResult, TokenAuthenticator } from '../authenticator.js';
import type { JwtAuthenticatorSpec } from './authentication-configuration.js';
import type { CompiledJwtRules } from './authentication-config-validation.js';
import { claimToCel, evaluateAuthExpression, stringListOf, userToCel, type CompiledClaimExpression } from './claims-cel.js';
import { goQuoteList, goTime, goValueTypeError, jsonKindOf } from './go-format.js';
import { IssuerHttpClient, jsonBody } from './issuer-http.js';
import { parseCompactJws } from './jws.js';
import { RemoteKeySet } from './remote-key-set.js';
import { goQuote } from '../../validation/field-errors.js';

/**
 * One JWT issuer of `--authentication-config` (or the `--oidc-*` flags), as kube's OIDC token
 * authenticator: tokens whose unverified `iss` is this issuer's URL are verified (signature by the
 * issuer's JWKS, audience, expiry, not-before), then turned into a user by the claim mappings, and
 * checked by the required claims, claim validation rules and user validation rules. Any failure is
 * an error in kube's words (`oidc: verify token: oidc: token is expired (Token Expiry: ...)`); a
 * token of another issuer is not this authenticator's (undefined). The issuer's discovery document is
 * fetched at start and every 10 s until it succeeds; until then tokens fail with
 * `oidc: authenticator not initialized`.
 */

const DISCOVERY_RETRY_MS = 10_000;
const NBF_LEEWAY_MS = 60_000;
const CREDENTIAL_ID_KEY = 'authentication.kubernetes.io/credential-id';

/** Log lines of an authenticator, for the server's logger. */
export type AuthLog = (level: 'info' | 'error', message: string, fields?: Record<string, unknown>) => void;

export interface JwtAuthenticatorOptions {
  spec: JwtAuthenticatorSpec;
  rules: CompiledJwtRules;
  /** The `alg` values accepted (the flags' --oidc-signing-algs, or every algorithm with the file). */
  signingAlgs: readonly string[];
  /** Ends discovery retries and key fetches (the authenticator was replaced or the server stops). */
  signal: AbortSignal;
  log: AuthLog;
  now?: () => number;
}

type Claims = Record<string, unknown>;

export class JwtAuthenticator implements TokenAuthenticator {
  private keySet: RemoteKeySet | undefined;
  private healthProblem: string;
  private readonly http: IssuerHttpClient;
  private readonly issuer: string;
  private readonly audiences: string[];
  private readonly now: () => number;
  /** Settles once the first discovery attempt has ended (successfully or not). */
  readonly firstAttempt: Promise<void>;

  constructor(private readonly options: JwtAuthenticatorOptions) {
    const issuer = options.spec.issuer;
    this.issuer = issuer.url;
    this.audiences = issuer.audiences;
    this.now = options.now ?? Date.now;
    const wellKnown = `${issuer.url.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const discovery = issuer.discoveryURL ?? '';
    this.http = new IssuerHttpClient(issuer.certificateAuthority, discovery === '' ? undefined : { from: wellKnown, to: discovery });
    this.healthProblem = `oidc: authenticator for issuer ${goQuote(this.issuer)} is not initialized`;
    if (issuer.certificateAuthority === '') options.log('info', "OIDC: No x509 certificates provided, will use host's root CA set");
    options.signal.addEventListener('abort', () => this.http.close(), { once: true });
    this.firstAttempt = this.discover(wellKnown);
  }

  /** kube's HealthCheck: undefined once discovery succeeded, else why not. */
  healthError(): string | undefined {
    if (this.keySet !== undefined) return undefined;
    return `oidc: authenticator for issuer ${goQuote(this.issuer)} is not healthy: ${this.healthProblem}`;
  }

  /** Fetches the discovery document until it succeeds (every 10 s) or the authenticator is stopped. */
  private async discover(wellKnown: string): Promise<void> {
    const signal = this.options.signal;
    while (!signal.aborted) {
      try {
        const jwksUrl = await this.fetchDiscovery(wellKnown);
        this.keySet = new RemoteKeySet(jwksUrl, this.http, signal, this.now);
        return;
      } catch (err) {
        this.healthProblem = err instanceof Error ? err.message : String(err);
        if (signal.aborted) return;
        this.options.log('error', `oidc authenticator: initializing plugin: ${this.healthProblem}`);
      }
      await abortableDelay(DISCOVERY_RETRY_MS, signal);
    }
  }

  private async fetchDiscovery(wellKnown: string): Promise<string> {
    const answer = await this.http.get(wellKnown, {}, this.options.signal);
    if (answer.status !== 200) throw new Error(`${answer.statusLine}: ${answer.body}`);
    let doc: unknown;
    try {
      doc = jsonBody(answer);
    } catch (err) {
      throw new Error(`oidc: failed to decode provider discovery object: ${err instanceof Error ? err.message : String(err)}`);
    }
    const provider = typeof doc === 'object' && doc !== null ? (doc as Record<string, unknown>) : {};
    const issuer = typeof provider.issuer === 'string' ? provider.issuer : '';
    if (issuer !== this.issuer) {
      throw new Error(`oidc: issuer did not match the issuer returned by provider, expected ${goQuote(this.issuer)} got ${goQuote(issuer)}`);
    }
    const jwksUrl = typeof provider.jwks_uri === 'string' ? provider.jwks_uri : '';
    if (jwksUrl === '') throw new Error('provider did not return JWKS URL');
    return jwksUrl;
  }

  async authenticateToken(token: string): Promise<AuthenticationResult> {
    if (untrustedIssuer(token) !== this.issuer) return undefined;
    const keySet = this.keySet;
    if (keySet === undefined) return { error: 'oidc: authenticator not initialized' };
    const verified = await this.verify(token, keySet);
    if (typeof verified === 'string') return { error: `oidc: verify token: ${verified}` };
    const mapped = this.userOf(verified);
    return typeof mapped === 'string' ? { error: mapped } : { user: mapped };
  }

  /** go-oidc's IDTokenVerifier.Verify and kube's audience check; a string is the failure. */
  private async verify(token: string, keySet: RemoteKeySet): Promise<Claims | string> {
    const jws = parseCompactJws(token);
    if (typeof jws === 'string') return `oidc: malformed jwt: ${jws}`;
    const alg = typeof jws.header.alg === 'string' ? jws.header.alg : '';
    if (!this.options.signingAlgs.includes(alg)) {
      return `oidc: id token signed with unsupported algorithm, expected ${goQuoteList(this.options.signingAlgs)} got ${goQuote(alg)}`;
    }
    const signatureError = await keySet.verify(jws, alg);
    if (signatureError !== undefined) return `failed to verify signature: ${signatureError}`;
    let claims: Claims;
    try {
      const parsed: unknown = JSON.parse(jws.payload.toString('utf8'));
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        return `oidc: failed to unmarshal claims: ${goValueTypeError(parsed, 'oidc.idToken')}`;
      claims = parsed as Claims;
    } catch (err) {
      return `oidc: failed to unmarshal claims: ${err instanceof Error ? err.message : String(err)}`;
    }
    const standard = standardClaims(claims);
    if (typeof standard === 'string') return `oidc: failed to unmarshal claims: ${standard}`;
    const issuer = standard.issuer === 'accounts.google.com' && this.issuer === 'https://accounts.google.com' ? this.issuer : standard.issuer;
    if (issuer !== this.issuer) return `oidc: id token issued by a different provider, expected ${goQuote(this.issuer)} got ${goQuote(standard.issuer)}`;
    if (this.audiences.length === 1 && !standard.audience.includes(this.audiences[0])) {
      return `oidc: expected audience ${goQuote(this.audiences[0])} got ${goQuoteList(standard.audience)}`;
    }
    const now = this.now();
    if (standard.expiry < now) return `oidc: token is expired (Token Expiry: ${goTime(standard.expiry)})`;
    if (standard.notBefore !== undefined && now + NBF_LEEWAY_MS < standard.notBefore) {
      return `oidc: current time ${goTime(now)} before the nbf (not before) time: ${goTime(standard.notBefore)}`;
    }
    // kube's own audience check, after go-oidc's (which only checks a single audience).
    if (!this.audiences.some((a) => standard.audience.includes(a))) {
      return `oidc: expected audience in ${goQuoteList([...new Set(this.audiences)].sort())} got ${goQuoteList(standard.audience)}`;
    }
    return claims;
  }

  /** kube's claim mappings and validation rules: the user, or the error. */
  private userOf(claims: Claims): User | string {
    const { spec, rules } = this.options;
    const celClaims = hasCel(rules) ? claimToCel(claims) : undefined;
    const username = this.username(claims, celClaims);
    if (typeof username !== 'string') return username.error;
    const groups = this.groups(claims, celClaims);
    if (!Array.isArray(groups)) return groups.error;
    const uid = this.uid(claims, celClaims);
    if (typeof uid !== 'string') return uid.error;
    const extra: Record<string, string[]> = {};
    if (typeof claims.jti === 'string') extra[CREDENTIAL_ID_KEY] = [`JTI=${claims.jti}`];
    for (const mapping of rules.extra) {
      const out = evaluateAuthExpression(mapping.compiled, 'claims', celClaims);
      if (!out.ok) return out.error;
      const values = stringListOf(out.value);
      if (values instanceof Error) return `oidc: error evaluating extra claim expression: ${mapping.compiled.expression}: ${values.message}`;
      if (values !== undefined) extra[mapping.key] = values;
    }
    for (const rule of spec.claimValidationRules) {
      if (rule.claim === '') continue;
      if (!(rule.claim in claims)) return `oidc: required claim ${rule.claim} not present in ID token`;
      const value = claims[rule.claim] ?? '';
      if (typeof value !== 'string') return `oidc: parse claim ${rule.claim}: ${goValueTypeError(value, 'string')}`;
      if (value !== rule.requiredValue) return `oidc: required claim ${rule.claim} value does not match. Got = ${value}, want = ${rule.requiredValue}`;
    }
    const claimRules = checkRules(rules.claimValidation, 'claims', celClaims);
    if (claimRules !== undefined) return `oidc: error evaluating claim validation expression: ${claimRules}`;
    const user: User = { name: username, uid, groups, extra };
    if (rules.userValidation.length > 0) {
      const userRules = checkRules(rules.userValidation, 'user', userToCel(user));
      if (userRules !== undefined) return `oidc: error evaluating user info validation rule: ${userRules}`;
    }
    return user;
  }

  private username(claims: Claims, celClaims: unknown): string | { error: string } {
    const { rules, spec } = this.options;
    if (rules.username !== undefined) {
      const out = evaluateAuthExpression(rules.username, 'claims', celClaims);
      if (!out.ok) return { error: `oidc: error evaluating username claim expression: ${out.error}` };
      if (typeof out.value !== 'string') return { error: 'oidc: error evaluating username claim expression: username claim expression must return a string' };
      if (out.value === '') return { error: 'oidc: empty username via CEL expression is not allowed' };
      return out.value;
    }
    const mapping = spec.claimMappings.username;
    const claim = mapping.claim;
    const value = claimString(claims, claim);
    if (typeof value !== 'string') return { error: `oidc: parse username claims ${goQuote(claim)}: ${value.error}` };
    if (claim === 'email' && 'email_verified' in claims) {
      const verified = claims.email_verified ?? false;
      if (typeof verified !== 'boolean') return { error: `oidc: parse 'email_verified' claim: ${goValueTypeError(verified, 'bool')}` };
      if (!verified) return { error: 'oidc: email not verified' };
    }
    return `${mapping.prefix ?? ''}${value}`;
  }

  private groups(claims: Claims, celClaims: unknown): string[] | { error: string } {
    const { rules, spec } = this.options;
    const mapping = spec.claimMappings.groups;
    if (mapping.claim !== '' && mapping.claim in claims) {
      const value = claims[mapping.claim];
      let groups: string[];
      if (value === null || value === undefined) groups = [];
      else if (typeof value === 'string') groups = [value];
      else if (Array.isArray(value) && value.every((g) => typeof g === 'string' || g === null)) groups = value.map((g) => (typeof g === 'string' ? g : ''));
      // kube's stringOrArray reports the failure of its last attempt, a single string.
      else return { error: `oidc: parse groups claim ${goQuote(mapping.claim)}: ${goValueTypeError(value, 'string')}` };
      return groups.map((g) => `${mapping.prefix ?? ''}${g}`);
    }
    if (rules.groups === undefined) return [];
    const out = evaluateAuthExpression(rules.groups, 'claims', celClaims);
    if (!out.ok) return { error: `oidc: error evaluating group claim expression: ${out.error}` };
    const groups = stringListOf(out.value);
    if (groups instanceof Error) return { error: `oidc: error evaluating group claim expression: ${groups.message}` };
    return groups ?? [];
  }

  private uid(claims: Claims, celClaims: unknown): string | { error: string } {
    const { rules, spec } = this.options;
    const claim = spec.claimMappings.uid.claim;
    if (claim !== '') {
      const value = claimString(claims, claim);
      return typeof value === 'string' ? value : { error: `oidc: parse uid claim ${goQuote(claim)}: ${value.error}` };
    }
    if (rules.uid === undefined) return '';
    const out = evaluateAuthExpression(rules.uid, 'claims', celClaims);
    if (!out.ok) return { error: `oidc: error evaluating uid claim expression: ${out.error}` };
    if (typeof out.value !== 'string') return { error: 'oidc: error evaluating uid claim expression: uid claim expression must return a string' };
    return out.value;
  }
}

function hasCel(rules: CompiledJwtRules): boolean {
  return rules.username !== undefined || rules.groups !== undefined || rules.uid !== undefined || rules.extra.length > 0 || rules.claimValidation.length > 0;
}

/** A string claim as kube's unmarshalClaim reads it: absent, or not a string (null reads as ''), is an error. */
function claimString(claims: Claims, name: string): string | { error: string } {
  if (!(name in claims)) return { error: 'claim not present' };
  const value = claims[name] ?? '';
  return typeof value === 'string' ? value : { error: goValueTypeError(value, 'string') };
}

/** kube's checkValidationRulesEvaluation: the first rule that errs, returns a non-bool, or is false. */
function checkRules(rules: { compiled: CompiledClaimExpression; message: string }[], variable: 'claims' | 'user', value: unknown): string | undefined {
  // kube evaluates every rule before looking at any result: an evaluation error wins over an earlier false.
  const results: { rule: (typeof rules)[number]; value: unknown }[] = [];
  for (const rule of rules) {
    const out = evaluateAuthExpression(rule.compiled, variable, value);
    if (!out.ok) return out.error;
    results.push({ rule, value: out.value });
  }
  for (const { rule, value: result } of results) {
    if (typeof result !== 'boolean') return 'validation expression must return a boolean';
    if (!result) return `validation expression '${rule.compiled.expression}' failed: ${rule.message}`;
  }
  return undefined;
}

/** The standard claims go-oidc decodes, or encoding/json's error for a claim of the wrong type. */
function standardClaims(claims: Claims): { issuer: string; audience: string[]; expiry: number; notBefore?: number } | string {
  for (const name of ['iss', 'sub', 'nonce', 'at_hash']) {
    const v = claims[name];
    if (v !== undefined && v !== null && typeof v !== 'string')
      return `json: cannot unmarshal ${jsonKindOf(v)} into Go struct field idToken.${name} of type string`;
  }
  const aud = claims.aud;
  let audience: string[];
  if (aud === undefined || aud === null) audience = [];
  else if (typeof aud === 'string') audience = [aud];
  else if (Array.isArray(aud)) {
    const items: unknown[] = aud;
    const wrong = items.find((a) => typeof a !== 'string' && a !== null);
    if (wrong !== undefined) return goValueTypeError(wrong, 'string');
    audience = items.map((a) => (typeof a === 'string' ? a : ''));
  } else return goValueTypeError(aud, '[]string');
  const times: Record<string, number | undefined> = {};
  for (const name of ['exp', 'iat', 'nbf']) {
    const v = claims[name];
    if (v === undefined || v === null) continue;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(v) ? Number(v) : undefined;
    if (n === undefined) {
      if (typeof v === 'string') return `json: invalid number literal, trying to unmarshal ${goQuote(JSON.stringify(v))} into Number`;
      return goValueTypeError(v, 'json.Number');
    }
    times[name] = Math.trunc(n) * 1000;
  }
  const names = claims._claim_names;
  if (names !== undefined && names !== null) {
    if (typeof names !== 'object' || Array.isArray(names))
      return `json: cannot unmarshal ${jsonKindOf(names)} into Go struct field idToken._claim_names of type map[string]string`;
    const sources = typeof claims._claim_sources === 'object' && claims._claim_sources !== null ? (claims._claim_sources as Record<string, unknown>) : {};
    for (const source of Object.values(names as Record<string, unknown>)) {
      if (source === '' || source === null) return 'oidc: failed to obtain source from claim name';
      if (typeof source !== 'string') return `json: cannot unmarshal ${jsonKindOf(source)} into Go struct field idToken._claim_names of type string`;
      if (!(source in sources)) return 'oidc: source does not exist';
    }
  }
  return { issuer: typeof claims.iss === 'string' ? claims.iss : '', audience, expiry: times.exp ?? -Infinity, notBefore: times.nbf };
}

/** The `iss` claim of a compact JWT, unverified (kube's untrustedIssuer); '' when there is none. */
export function untrustedIssuer(token: string): string {
  if (token.trimStart().startsWith('{')) return '';
  const parts = token.split('.');
  if (parts.length !== 3 || !/^[A-Za-z0-9_-]*$/.test(parts[1])) return '';
  try {
    const payload: unknown = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    if (typeof payload !== 'object' || payload === null) return '';
    const iss = (payload as Claims).iss;
    if (typeof iss !== 'string') return '';
    return iss === 'accounts.google.com' ? 'https://accounts.google.com' : iss;
  } catch {
    return '';
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    timer.unref();
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
