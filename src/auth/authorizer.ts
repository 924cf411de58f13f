import type { User } from './user.js';

/** What a request asks to do, as kube's authorizer.Attributes describe it. */
export interface AuthorizationAttributes {
  user: User;
  /** get, list, watch, create, update, patch, delete, deletecollection; for paths: the lowercase method. */
  verb: string;
  resourceRequest: boolean;
  /** Resource requests. */
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** Non-resource requests: the URL path. */
  path: string;
}

export interface Decision {
  allowed: boolean;
  /** Why, appended to the 403 message when set (kube's authorizer reason). */
  reason: string;
}

/** The authorization stage: may this user do this? */
export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): Promise<Decision>;
}

/** kube's AlwaysAllow mode. */
export class AlwaysAllow implements Authorizer {
  async authorize(_attrs: AuthorizationAttributes): Promise<Decision> {
    return { allowed: true, reason: '' };
  }
}

/** kube's AlwaysDeny mode: every request is refused with kube's reason. */
export class AlwaysDeny implements Authorizer {
  async authorize(_attrs: AuthorizationAttributes): Promise<Decision> {
    return { allowed: false, reason: 'Everything is forbidden.' };
  }
}

export type AuthorizationMode = 'AlwaysAllow' | 'AlwaysDeny';

/**
 * kube-apiserver's authorizer chain: members of `system:masters` may do anything whatever the mode,
 * everyone else is decided by the configured mode (`--authorization-mode`).
 */
export function authorizerFor(mode: AuthorizationMode): Authorizer {
  const configured = mode === 'AlwaysDeny' ? new AlwaysDeny() : new AlwaysAllow();
  return {
    async authorize(attrs: AuthorizationAttributes): Promise<Decision> {
      if (attrs.user.groups.includes('system:masters')) return { allowed: true, reason: '' };
      return configured.authorize(attrs);
    },
  };
}

/** kube's forbidden message for a refused request (before the reason). */
export function forbiddenMessage(a: AuthorizationAttributes): string {
  const user = JSON.stringify(a.user.name);
  if (!a.resourceRequest) return `User ${user} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const scope = a.namespace !== '' ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `User ${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`;
}
