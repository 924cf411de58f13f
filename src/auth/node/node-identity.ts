import type { User } from '../../api/user.js';

/** The user name prefix and group kube gives node (kubelet) credentials. */
export const NODE_USER_PREFIX = 'system:node:';
export const NODES_GROUP = 'system:nodes';

/**
 * kube's default node identifier: a user is a node when its name starts with `system:node:` and it
 * is in `system:nodes`; the node's name is the rest of the user name (possibly empty, which kube's
 * node authorizer and NodeRestriction both refuse). Undefined for every other user.
 */
export function nodeNameOf(user: User): string | undefined {
  if (!user.name.startsWith(NODE_USER_PREFIX)) return undefined;
  if (!user.groups.includes(NODES_GROUP)) return undefined;
  return user.name.slice(NODE_USER_PREFIX.length);
}
