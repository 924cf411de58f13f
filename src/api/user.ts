/** Who a request acts as, as kube's authenticators describe a user (user.Info). */
export interface User {
  name: string;
  uid: string;
  groups: string[];
  extra: Record<string, string[]>;
}

/**
 * The identity every request has until Capstan authenticates clients (the identity and access
 * issue): a cluster administrator, in `system:masters` as kube's admin kubeconfigs are.
 */
export const ADMIN_USER: User = Object.freeze({
  name: 'system:admin',
  uid: '',
  groups: ['system:masters', 'system:authenticated'],
  extra: {},
});

/** kube's well-known groups. */
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const ANONYMOUS_USER_NAME = 'system:anonymous';

/** A request without credentials when anonymous requests are allowed (`--anonymous-auth`). */
export const ANONYMOUS_USER: User = Object.freeze({ name: ANONYMOUS_USER_NAME, uid: '', groups: [UNAUTHENTICATED_GROUP], extra: {} });

/** kube's service account user name prefix (`system:serviceaccount:NS:NAME`). */
export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** kube's user name of a service account (`system:serviceaccount:NS:NAME`). */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`;
}

/** The user of a service account, with kube's groups (`system:serviceaccounts`, `...:NS`). */
export function serviceAccountUser(namespace: string, name: string, uid: string, extra: Record<string, string[]> = {}): User {
  return { name: serviceAccountUsername(namespace, name), uid, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`], extra };
}

/** The namespace and name of a service account user name, or undefined for other users. */
export function serviceAccountOf(userName: string): { namespace: string; name: string } | undefined {
  if (!userName.startsWith(SERVICE_ACCOUNT_PREFIX)) return undefined;
  const parts = userName.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
  if (parts.length !== 2 || parts[0] === '' || parts[1] === '') return undefined;
  return { namespace: parts[0], name: parts[1] };
}
