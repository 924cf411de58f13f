import type { AuthenticationResult, TokenAuthenticator } from '../authenticator.js';
import type { JwtAuthenticatorSpec } from './authentication-configuration.js';
import type { CompiledJwtRules } from './authentication-config-validation.js';
import { userFromClaims, type Claims } from './claim-mappings.js';
import { standardClaims, untrustedIssuer } from './id-token-claims.js';
import { goQuoteList, goTime, goValueTypeError } from './go-format.js';
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
    const mapped = userFromClaims(this.options.spec, this.options.rules, verified);
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
