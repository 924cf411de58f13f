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
