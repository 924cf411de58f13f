import type { IncomingMessage } from 'node:http';
import type { User } from '../api/user.js';

/**
 * The authentication stage: who sent a request. Undefined means the request carries no credentials
 * this server accepts, answered 401 Unauthorized as kube-apiserver answers it.
 */
export interface Authenticator {
  authenticate(req: IncomingMessage): Promise<User | undefined>;
}

/**
 * What one authenticator of the chain concluded, as kube's (response, ok, err): a user; an error
 * (the request carried this authenticator's kind of credential, and it is not valid); or undefined
 * (nothing this authenticator recognises: the next one is asked).
 */
export type AuthenticationResult = { user: User; audiences?: string[] } | { error: string } | undefined;

/** One member of the authentication chain, looking at the whole request. */
export interface RequestAuthenticator {
  authenticate(req: IncomingMessage): Promise<AuthenticationResult>;
}

/** One bearer token authenticator (static tokens, service account tokens). */
export interface TokenAuthenticator {
  /** `audiences`: those the token must be for (TokenReview's spec.audiences; default the API server's). */
  authenticateToken(token: string, audiences?: string[]): Promise<AuthenticationResult>;
}
