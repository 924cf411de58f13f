import type { Obj } from '../api/object-util.js';
import type { AuthenticationChain } from './authentication-chain.js';

/**
 * kube's TokenReview error: its request authenticators' errors aggregated, the default
 * `invalid bearer token` first, so a token an authenticator refused reads
 * `[invalid bearer token, <why>]` (nested aggregates flattened) and an unknown one `invalid bearer token`.
 */
function reviewError(error: string | undefined): string {
  if (error === undefined) return 'invalid bearer token';
  const inner = error.startsWith('[') && error.endsWith(']') ? error.slice(1, -1) : error;
  return `[invalid bearer token, ${inner}]`;
}

/**
 * A TokenReview's status, as kube answers it: `{authenticated, user{username, uid, groups, extra},
 * audiences}` for a token a token authenticator accepts for the requested audiences (default the
 * API server's); `{user: {}, error}` otherwise (see reviewError).
 */
export async function reviewToken(chain: AuthenticationChain | undefined, token: string, requested: unknown): Promise<Obj> {
  if (chain === undefined) return { user: {}, error: 'token authentication is not enabled' };
  const audiences = Array.isArray(requested) && requested.length > 0 ? requested.filter((a): a is string => typeof a === 'string') : undefined;
  const result = await chain.authenticateToken(token, audiences);
  if (result === undefined || !('user' in result)) return { user: {}, error: reviewError(result?.error) };
  const u = result.user;
  const user: Obj = { username: u.name };
  if (u.uid !== '') user.uid = u.uid;
  if (u.groups.length > 0) user.groups = u.groups;
  if (Object.keys(u.extra).length > 0) user.extra = u.extra;
  return { authenticated: true, user, audiences: result.audiences ?? audiences ?? chain.apiAudiences() };
}
