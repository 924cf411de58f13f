import type { IncomingMessage } from 'node:http';
import { TLSSocket } from 'node:tls';
import type { Authenticator, AuthenticationResult, RequestAuthenticator, TokenAuthenticator } from './authenticator.js';
import { CachedTokenAuthenticator, type TokenCacheOptions } from './token-cache.js';
import { requestConnection } from './request-connection.js';
import { logger } from '../logging/logger.js';
import { ADMIN_USER, ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, type User } from '../api/user.js';

/** The members of the chain, each optional, in kube-apiserver's order. */
export interface ChainMembers {
  /** `--requestheader-*` front-proxy authentication. */
  requestHeader?: RequestAuthenticator;
  /** `--client-ca-file` client certificates. */
  clientCertificates?: RequestAuthenticator;
  /** Bearer token authenticators in kube's order: static token file, service account tokens, JWT issuers, webhook. */
  tokens: TokenAuthenticator[];
  /** `--anonymous-auth`: a request no member recognises is system:anonymous. */
  anonymous: boolean;
  /** The configuration file's anonymous conditions: only these request paths may be anonymous (absent: any). */
  anonymousPaths?: ReadonlySet<string>;
  /** kube's cache of the token authenticators' answers (absent: none). */
  tokenCache?: Omit<TokenCacheOptions, 'cacheErrors'>;
  /** The API server's audiences (`--api-audiences`). */
  apiAudiences: string[];
}

/** The bearer token of `Authorization: Bearer TOKEN` (scheme case-insensitive), if any. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const parts = header.split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer' || parts[1] === '') return undefined;
  return parts[1];
}

/** kube's AuthenticatedGroupAdder: every authenticated user is also in system:authenticated. */
function withAuthenticatedGroup(user: User): User {
  if (user.groups.includes(AUTHENTICATED_GROUP) || user.groups.includes(UNAUTHENTICATED_GROUP)) return user;
  return { ...user, groups: [...user.groups, AUTHENTICATED_GROUP] };
}

/**
 * kube-apiserver's authentication: front-proxy headers, client certificates, then bearer tokens;
 * the first member that recognises the request decides. When none does, a member's error (a bad
 * certificate, an unknown or invalid token) fails the request (401), and a request with no
 * credentials at all is system:anonymous when allowed. A request on the plain-HTTP loopback port
 * (not TLS) is the local administrator, as on kube-apiserver's old insecure port.
 */
export class AuthenticationChain implements Authenticator {
  private readonly tokens: TokenAuthenticator;

  constructor(private readonly members: ChainMembers) {
    const union: TokenAuthenticator = { authenticateToken: (token, audiences) => this.unionOfTokens(token, audiences) };
    // As kube: the union's answers are cached, errors included (refusals only when a failure TTL is set).
    this.tokens = members.tokenCache === undefined ? union : new CachedTokenAuthenticator(union, { ...members.tokenCache, cacheErrors: true });
  }

  /** The audiences a token is for unless a TokenReview asks for others. */
  apiAudiences(): string[] {
    return this.members.apiAudiences;
  }

  async authenticate(req: IncomingMessage): Promise<User | undefined> {
    if (!(req.socket instanceof TLSSocket)) return ADMIN_USER;
    const errors: string[] = [];
    for (const member of [this.members.requestHeader, this.members.clientCertificates]) {
      if (member === undefined) continue;
      const result = await member.authenticate(req);
      if (result === undefined) continue;
      if ('user' in result) return withAuthenticatedGroup(result.user);
      errors.push(result.error);
    }
    const token = bearerToken(req);
    if (token !== undefined) {
      const result = await this.authenticateRequestToken(req, token);
      if (result !== undefined && 'user' in result) {
        delete req.headers.authorization;
        return result.user;
      }
      errors.push(result?.error ?? 'invalid bearer token');
    }
    if (errors.length > 0) {
      logger.error('Unable to authenticate the request', { err: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` });
      return undefined;
    }
    if (!this.members.anonymous) return undefined;
    const paths = this.members.anonymousPaths;
    if (paths !== undefined && !paths.has(requestPath(req.url))) return undefined;
    return ANONYMOUS_USER;
  }

  /**
   * A bearer token alone (also TokenReview's question): the first token authenticator that knows it.
   * `audiences`: the audiences it must be for (default: the API server's).
   */
  authenticateToken(token: string, audiences?: string[]): Promise<AuthenticationResult> {
    // As kube: a request's token is for the API audiences, the same cache entry as a review asking for them.
    const api = this.members.apiAudiences;
    return this.tokens.authenticateToken(token, audiences ?? (api.length > 0 ? [...api] : undefined));
  }

  /** A request's bearer token, for the API audiences, its key remembered with its connection. */
  private authenticateRequestToken(req: IncomingMessage, token: string): Promise<AuthenticationResult> {
    if (!(this.tokens instanceof CachedTokenAuthenticator)) return this.authenticateToken(token);
    const api = this.members.apiAudiences;
    return this.tokens.authenticateTokenOn(requestConnection(req), token, api.length > 0 ? [...api] : undefined);
  }

  /** kube's token union: the first authenticator that accepts the token, else every error aggregated. */
  private async unionOfTokens(token: string, audiences?: string[]): Promise<AuthenticationResult> {
    const errors: string[] = [];
    for (const member of this.members.tokens) {
      const result = await member.authenticateToken(token, audiences);
      if (result === undefined) continue;
      if ('user' in result) return { ...result, user: withAuthenticatedGroup(result.user) };
      errors.push(result.error);
    }
    if (errors.length === 0) return undefined;
    return { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` };
  }
}

/** The request's path, percent-decoded as Go's URL.Path (kube's anonymous conditions compare it). */
function requestPath(url: string | undefined): string {
  const raw = (url ?? '/').split('?')[0];
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
