import { createHmac, createSecretKey, randomBytes } from 'node:crypto';
import type { AuthenticationResult, TokenAuthenticator } from './authenticator.js';

/**
 * kube's cached token authenticator (k8s.io/apiserver pkg/authentication/token/cache): the answers
 * of `inner` kept per token and audiences for a time, keyed by an HMAC of both under a key drawn at
 * start (tokens are never kept in the clear). Successes are kept `successTtlMs`, refusals (no user)
 * `failureTtlMs`; errors are refusals too when `cacheErrors`, otherwise never kept. Concurrent
 * lookups of one key share one call of `inner`. At most `maxEntries` answers are kept.
 */
export interface TokenCacheOptions {
  successTtlMs: number;
  failureTtlMs: number;
  cacheErrors: boolean;
  maxEntries?: number;
  now?: () => number;
}

const DEFAULT_MAX_ENTRIES = 10_000;

export class CachedTokenAuthenticator implements TokenAuthenticator {
  private readonly secret = createSecretKey(randomBytes(32));
  private readonly entries = new Map<string, { result: AuthenticationResult; expires: number }>();
  private readonly inflight = new Map<string, Promise<AuthenticationResult>>();
  /** Per connection, the key of its last request's token (see {@link authenticateTokenOn}). */
  private readonly lastKeys = new WeakMap<object, { text: string; key: string }>();
  private readonly now: () => number;

  constructor(
    private readonly inner: TokenAuthenticator,
    private readonly options: TokenCacheOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  authenticateToken(token: string, audiences?: string[]): Promise<AuthenticationResult> {
    return this.answer(this.keyOf(keyText(token, audiences)), token, audiences);
  }

  /**
   * {@link authenticateToken} for a request's token: the connection it came on remembers the key of
   * its last token, so that a client sending the same token on every request of a connection pays
   * the HMAC once (about 10 µs of each request otherwise). The token is kept with the connection, as
   * long as it lives, as its requests' headers are.
   */
  authenticateTokenOn(connection: object, token: string, audiences?: string[]): Promise<AuthenticationResult> {
    const text = keyText(token, audiences);
    const last = this.lastKeys.get(connection);
    if (last !== undefined && last.text === text) return this.answer(last.key, token, audiences);
    const key = this.keyOf(text);
    this.lastKeys.set(connection, { text, key });
    return this.answer(key, token, audiences);
  }

  private async answer(key: string, token: string, audiences: string[] | undefined): Promise<AuthenticationResult> {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      if (hit.expires > this.now()) return copy(hit.result);
      this.entries.delete(key);
    }
    let pending = this.inflight.get(key);
    if (pending === undefined) {
      pending = this.lookup(key, token, audiences).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return copy(await pending);
  }

  private async lookup(key: string, token: string, audiences: string[] | undefined): Promise<AuthenticationResult> {
    const result = await this.inner.authenticateToken(token, audiences);
    const ok = result !== undefined && 'user' in result;
    const isError = result !== undefined && 'error' in result;
    if (isError && !this.options.cacheErrors) return result;
    const ttl = ok ? this.options.successTtlMs : this.options.failureTtlMs;
    if (ttl > 0) this.store(key, result, ttl);
    return result;
  }

  private store(key: string, result: AuthenticationResult, ttl: number): void {
    const max = this.options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    if (this.entries.size >= max) {
      const now = this.now();
      for (const [k, e] of this.entries) if (e.expires <= now) this.entries.delete(k);
      // Still full: the oldest entries go first (Map keeps insertion order).
      for (const k of this.entries.keys()) {
        if (this.entries.size < max) break;
        this.entries.delete(k);
      }
    }
    this.entries.set(key, { result, expires: this.now() + ttl });
  }

  /** kube's keyFunc: an HMAC of {@link keyText} under the key drawn at start. */
  private keyOf(text: string): string {
    return createHmac('sha256', this.secret).update(text).digest('base64');
  }
}

/**
 * What kube's keyFunc hashes: the length-prefixed token and audiences ('undefined' audiences are the
 * API server's), as one string (string lengths prefix each part, so no two inputs meet).
 */
function keyText(token: string, audiences: string[] | undefined): string {
  let text = `${token.length}:${token}|`;
  if (audiences === undefined) text += '-';
  else for (const a of audiences) text += `${a.length}:${a}|`;
  return text;
}

/** A copy the caller may change (users are shared between cached answers otherwise). */
function copy(result: AuthenticationResult): AuthenticationResult {
  if (result === undefined || !('user' in result)) return result;
  const u = result.user;
  return { ...result, user: { ...u, groups: [...u.groups], extra: { ...u.extra } } };
}
