import type { Obj } from '../api/object-util.js';
import type { AuthenticationChain } from './authentication-chain.js';

/**
 * A TokenReview's status, as kube answers it: `{authenticated, user{username, uid, groups, extra},
 * audiences}` for a token a token authenticator accepts for the requested audiences (default the
 * API server's); `{user: {}, error}` otherwise (`invalid bearer token` for an unknown token).
 */
export async function reviewToken(chain: AuthenticationChain | undefined, token: string, requested: unknown): Promise<Obj> {
  if (chain === undefined) return { user: {}, error: 'token authentication is not enabled' };
  const audiences = Array.isArray(requested) && requested.length > 0 ? requested.filter((a): a is string => typeof a === 'string') : undefined;
  const result = await chain.authenticateToken(token, audiences);
  if (result === undefined || !('user' in result)) return { user: {}, error: result?.error ?? 'invalid bearer token' };
  const u = result.user;
  const user: Obj = { username: u.name };
  if (u.uid !== '') user.uid = u.uid;
  if (u.groups.length > 0) user.groups = u.groups;
  if (Object.keys(u.extra).length > 0) user.extra = u.extra;
  return { authenticated: true, user, audiences: result.audiences ?? audiences ?? chain.apiAudiences() };
}
