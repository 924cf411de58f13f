import type { IncomingHttpHeaders } from 'node:http';
import { jsonBody, type IssuerHttpClient } from './issuer-http.js';
import { keysOfJwks, verifyJws, type CompactJws, type VerificationKey } from './jws.js';

/**
 * An issuer's JSON Web Key Set, fetched from its jwks_uri when first needed and fetched again when a
 * token's signature matches no cached key, as go-oidc's remote key set does (kube's OIDC
 * authenticator): the keys are kept until the answer's Cache-Control max-age (or Expires) runs out,
 * and while more than 30 seconds of that remain an unknown key is refused without asking the issuer
 * again; that is the rate limit on refreshes. Concurrent refreshes share one request.
 */

/** go-oidc's keysExpiryDelta. */
const EXPIRY_DELTA_MS = 30_000;

export class RemoteKeySet {
  private keys: VerificationKey[] = [];
  private expiry = 0;
  private inflight: Promise<VerificationKey[]> | undefined;

  constructor(
    private readonly jwksUrl: string,
    private readonly http: IssuerHttpClient,
    private readonly signal: AbortSignal,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Verifies `jws` signed with `alg`: with a cached key of its `kid` (any key when it has none),
   * else with the keys fetched again when the cache allows. Returns undefined when verified,
   * else go-oidc's error (`failed to verify id token signature`, `fetching keys oidc: get keys failed ...`).
   */
  async verify(jws: CompactJws, alg: string): Promise<string | undefined> {
    const kid = typeof jws.header.kid === 'string' ? jws.header.kid : '';
    if (this.matches(this.keys, jws, alg, kid)) return undefined;
    if (!(this.now() + EXPIRY_DELTA_MS > this.expiry)) return 'failed to verify id token signature';
    let keys: VerificationKey[];
    try {
      keys = await this.refresh();
    } catch (err) {
      return `fetching keys ${err instanceof Error ? err.message : String(err)}`;
    }
    return this.matches(keys, jws, alg, kid) ? undefined : 'failed to verify id token signature';
  }

  private matches(keys: VerificationKey[], jws: CompactJws, alg: string, kid: string): boolean {
    return keys.some((k) => (kid === '' || k.kid === kid) && verifyJws(jws, alg, k.key));
  }

  private refresh(): Promise<VerificationKey[]> {
    this.inflight ??= this.fetchKeys().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async fetchKeys(): Promise<VerificationKey[]> {
    let answer;
    try {
      answer = await this.http.get(this.jwksUrl, {}, this.signal);
    } catch (err) {
      throw new Error(`oidc: get keys failed ${err instanceof Error ? err.message : String(err)}`);
    }
    if (answer.status !== 200) throw new Error(`oidc: get keys failed: ${answer.statusLine} ${answer.body}`);
    let keys: VerificationKey[];
    try {
      keys = keysOfJwks(jsonBody(answer));
    } catch (err) {
      throw new Error(`oidc: failed to decode keys: ${err instanceof Error ? err.message : String(err)} ${answer.body}`);
    }
    const fetchedAt = this.now();
    this.keys = keys;
    this.expiry = Math.max(fetchedAt, fetchedAt + cacheLifetimeMs(answer.headers, fetchedAt));
    return keys;
  }
}

/** How long an answer may be cached: Cache-Control s-maxage or max-age, else Expires (0: not at all). */
export function cacheLifetimeMs(headers: IncomingHttpHeaders, now: number): number {
  const control = String(headers['cache-control'] ?? '').toLowerCase();
  const directive = (name: string): number | undefined => {
    const m = new RegExp(`(?:^|[,\\s])${name}\\s*=\\s*"?(\\d+)"?`).exec(control);
    return m === null ? undefined : Number(m[1]);
  };
  const seconds = directive('s-maxage') ?? directive('max-age');
  if (seconds !== undefined) return seconds * 1000;
  const expires = Date.parse(String(headers.expires ?? ''));
  return Number.isNaN(expires) ? 0 : Math.max(0, expires - now);
}
