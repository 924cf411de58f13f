import { createPrivateKey, createPublicKey, randomUUID, type KeyObject } from 'node:crypto';
import { algorithmOf, keyIdOf, parseJwt, signJwt, verifyJwt } from './jwt.js';
import { numberOrUndefined } from '../api/values.js';

/** kube's default issuer when none is configured (the reference runs with this one). */
export const DEFAULT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

/** A reference from a token to a Pod, Secret or Node (name and uid), kube's `kubernetes.io` claims. */
export interface ObjectRef {
  name: string;
  uid: string;
}

/** The `kubernetes.io` private claims of a service account token. */
export interface KubernetesClaims {
  namespace: string;
  serviceaccount: ObjectRef;
  pod?: ObjectRef;
  secret?: ObjectRef;
  node?: ObjectRef;
  warnafter?: number;
}

/** What a verified token says (before its objects are looked up). */
export interface VerifiedToken {
  subject: string;
  audiences: string[];
  id: string;
  kubernetes: KubernetesClaims;
  /** A legacy (Secret-based) token: the name of the Secret holding it, in `kubernetes.namespace`. */
  legacySecret?: string;
}

/** The issuer of legacy Secret-based service account tokens (kube's LegacyIssuer), always accepted. */
export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
const LEGACY_CLAIM = 'kubernetes.io/serviceaccount/';

/** Why a token was not accepted: `undefined` from verify means "not a token of this issuer". */
export class TokenError extends Error {}

interface VerifyKey {
  key: KeyObject;
  kid: string;
}

/** Clock skew tolerated on exp, nbf and iat (go-jose's DefaultLeeway). */
const LEEWAY_SECONDS = 60;

/**
 * Issues and verifies service account JWTs as kube-apiserver does: header `{alg, kid}`, claims
 * `aud, exp, iat, iss, jti, kubernetes.io{namespace, serviceaccount, pod|secret|node, warnafter},
 * nbf, sub`; RS256 or ES256 by the signing key. Also the OIDC discovery documents over the
 * verification keys.
 */
export class ServiceAccountTokens {
  private readonly signingKey: KeyObject;
  private readonly signingKid: string;
  private readonly verifyKeys: VerifyKey[];

  constructor(
    signingKeyPem: string,
    verifyKeyPems: KeyObject[],
    /** Accepted issuers; the first is written into new tokens. */
    readonly issuers: string[],
    /** The API server's audiences (`--api-audiences`, default: the issuers). */
    readonly apiAudiences: string[],
  ) {
    this.signingKey = createPrivateKey(signingKeyPem);
    algorithmOf(this.signingKey);
    const signingPublic = createPublicKey(this.signingKey);
    this.signingKid = keyIdOf(signingPublic);
    const keys = verifyKeyPems.length > 0 ? verifyKeyPems : [signingPublic];
    this.verifyKeys = keys.map((key) => ({ key, kid: keyIdOf(key) }));
  }

  get issuer(): string {
    return this.issuers[0];
  }

  /** A signed token for the claims, valid `expirationSeconds` from `nowSeconds`. */
  issue(subject: string, audiences: string[], kubernetes: KubernetesClaims, nowSeconds: number, expirationSeconds: number): string {
    const claims = {
      aud: audiences,
      exp: nowSeconds + expirationSeconds,
      iat: nowSeconds,
      iss: this.issuer,
      jti: randomUUID(),
      'kubernetes.io': kubernetes,
      nbf: nowSeconds,
      sub: subject,
    };
    return signJwt(claims, this.signingKey, this.signingKid);
  }

  /**
   * A legacy token for a Secret of type kubernetes.io/service-account-token, as kube-controller-manager's
   * tokens controller signs it: no expiry and no audience, `iss: kubernetes/serviceaccount`, the
   * namespace, secret and account in `kubernetes.io/serviceaccount/*` claims.
   */
  issueLegacy(namespace: string, account: ObjectRef, secretName: string): string {
    const claims = {
      iss: LEGACY_ISSUER,
      [`${LEGACY_CLAIM}namespace`]: namespace,
      [`${LEGACY_CLAIM}secret.name`]: secretName,
      [`${LEGACY_CLAIM}service-account.name`]: account.name,
      [`${LEGACY_CLAIM}service-account.uid`]: account.uid,
      sub: `system:serviceaccount:${namespace}:${account.name}`,
    };
    return signJwt(claims, this.signingKey, this.signingKid);
  }

  /**
   * Checks signature, issuer, times and audiences (the token must name one of `audiences`, the API
   * server's by default). Undefined: not a JWT of one of our issuers (another authenticator may know
   * it); throws TokenError with kube's words when it is ours but not valid.
   */
  verify(token: string, audiences: string[] = this.apiAudiences, nowSeconds = Math.floor(Date.now() / 1000)): VerifiedToken | undefined {
    const jwt = parseJwt(token);
    if (jwt === undefined) return undefined;
    const iss = jwt.claims.iss;
    if (typeof iss !== 'string' || (!this.issuers.includes(iss) && iss !== LEGACY_ISSUER)) return undefined;
    const kid = typeof jwt.header.kid === 'string' ? jwt.header.kid : '';
    const candidates = this.verifyKeys.filter((k) => kid === '' || k.kid === kid);
    if (!(candidates.length > 0 ? candidates : this.verifyKeys).some((k) => verifyJwt(jwt, k.key))) {
      throw new TokenError('go-jose/go-jose: error in cryptographic primitive');
    }
    const c = jwt.claims;
    const exp = numberOrUndefined(c.exp);
    const nbf = numberOrUndefined(c.nbf);
    const iat = numberOrUndefined(c.iat);
    if (exp !== undefined && nowSeconds - LEEWAY_SECONDS > exp) throw new TokenError('service account token has expired');
    if (nbf !== undefined && nowSeconds + LEEWAY_SECONDS < nbf) throw new TokenError('service account token is not valid yet');
    if (iat !== undefined && nowSeconds + LEEWAY_SECONDS < iat) throw new TokenError('service account token is issued in the future');
    let tokenAudiences = Array.isArray(c.aud) ? c.aud.filter((a): a is string => typeof a === 'string') : typeof c.aud === 'string' ? [c.aud] : [];
    // A token without audiences (legacy tokens) is for the API server's (kube's implicit audiences).
    if (tokenAudiences.length === 0) tokenAudiences = this.apiAudiences;
    if (!tokenAudiences.some((a) => audiences.includes(a))) {
      throw new TokenError(`token audiences ${goStrings(tokenAudiences)} is invalid for the target audiences ${goStrings(audiences)}`);
    }
    if (iss === LEGACY_ISSUER && !this.issuers.includes(iss)) return legacyClaims(c, tokenAudiences);
    const k = typeof c['kubernetes.io'] === 'object' && c['kubernetes.io'] !== null ? (c['kubernetes.io'] as Record<string, unknown>) : undefined;
    const ref = (v: unknown): ObjectRef | undefined => {
      if (typeof v !== 'object' || v === null) return undefined;
      const r = v as Record<string, unknown>;
      return { name: typeof r.name === 'string' ? r.name : '', uid: typeof r.uid === 'string' ? r.uid : '' };
    };
    const sa = ref(k?.serviceaccount);
    if (k === undefined || typeof k.namespace !== 'string' || sa === undefined) throw new TokenError('service account token claims could not be validated');
    return {
      subject: typeof c.sub === 'string' ? c.sub : '',
      audiences: tokenAudiences,
      id: typeof c.jti === 'string' ? c.jti : '',
      kubernetes: { namespace: k.namespace, serviceaccount: sa, pod: ref(k.pod), secret: ref(k.secret), node: ref(k.node) },
    };
  }

  /** `/.well-known/openid-configuration`, field for field as kube-apiserver serves it. */
  openidConfiguration(jwksUri: string): object {
    return {
      issuer: this.issuer,
      jwks_uri: jwksUri,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [...new Set(this.verifyKeys.map((k) => algorithmOf(k.key)))].sort(),
    };
  }

  /** `/openid/v1/jwks`: every verification key as a JWK. */
  jwks(): object {
    return {
      keys: this.verifyKeys.map(({ key, kid }) => {
        const jwk = key.export({ format: 'jwk' });
        const alg = algorithmOf(key);
        return alg === 'RS256'
          ? { use: 'sig', kty: 'RSA', kid, alg, n: jwk.n, e: jwk.e }
          : { use: 'sig', kty: 'EC', kid, crv: jwk.crv, alg, x: jwk.x, y: jwk.y };
      }),
    };
  }
}

/** kube's legacy validator's claim checks, with its messages. */
function legacyClaims(c: Record<string, unknown>, audiences: string[]): VerifiedToken {
  const claim = (name: string): string => (typeof c[`${LEGACY_CLAIM}${name}`] === 'string' ? (c[`${LEGACY_CLAIM}${name}`] as string) : '');
  const subject = typeof c.sub === 'string' ? c.sub : '';
  if (subject === '') throw new TokenError('sub claim is missing');
  const namespace = claim('namespace');
  if (namespace === '') throw new TokenError('namespace claim is missing');
  const secretName = claim('secret.name');
  if (secretName === '') throw new TokenError('secretName claim is missing');
  const name = claim('service-account.name');
  if (name === '') throw new TokenError('serviceAccountName claim is missing');
  const uid = claim('service-account.uid');
  if (uid === '') throw new TokenError('serviceAccountUID claim is missing');
  if (subject !== `system:serviceaccount:${namespace}:${name}`) throw new TokenError('sub claim is invalid');
  return { subject, audiences, id: '', kubernetes: { namespace, serviceaccount: { name, uid } }, legacySecret: secretName };
}

/** A string list as Go's %q prints a []string: ["a" "b"]. */
function goStrings(values: string[]): string {
  return `[${values.map((v) => JSON.stringify(v)).join(' ')}]`;
}
