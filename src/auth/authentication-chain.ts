import type { IncomingMessage } from 'node:http';
import { TLSSocket } from 'node:tls';
import type { Authenticator, AuthenticationResult, RequestAuthenticator, TokenAuthenticator } from './authenticator.js';
import { ADMIN_USER, ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, type User } from '../api/user.js';

/** The members of the chain, each optional, in kube-apiserver's order. */
export interface ChainMembers {
  /** `--requestheader-*` front-proxy authentication. */
  requestHeader?: RequestAuthenticator;
  /** `--client-ca-file` client certificates. */
  clientCertificates?: RequestAuthenticator;
  /** Bearer token authenticators in order: static token file, then service account tokens. */
  tokens: TokenAuthenticator[];
  /** `--anonymous-auth`: a request no member recognises is system:anonymous. */
  anonymous: boolean;
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
  constructor(private readonly members: ChainMembers) {}

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
      const result = await this.authenticateToken(token);
      if (result !== undefined && 'user' in result) {
        delete req.headers.authorization;
        return result.user;
      }
      errors.push(result?.error ?? 'invalid bearer token');
    }
    if (errors.length > 0 || !this.members.anonymous) return undefined;
    return ANONYMOUS_USER;
  }

  /**
   * A bearer token alone (also TokenReview's question): the first token authenticator that knows it.
   * `audiences`: the audiences it must be for (default: the API server's).
   */
  async authenticateToken(token: string, audiences?: string[]): Promise<AuthenticationResult> {
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
