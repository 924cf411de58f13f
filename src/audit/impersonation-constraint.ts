import type { User } from '../auth/user.js';

/**
 * The constraint kube 1.36 records in an impersonated request's audit event
 * (`authenticationMetadata.impersonationConstraint`): the constrained-impersonation verb that allowed
 * it (`impersonate:serviceaccount`, `impersonate:arbitrary-node`, `impersonate:user-info`), or '' when
 * the legacy `impersonate` verb did. kube tries the constrained verb first; Capstan authorizes only the
 * legacy verb, so the constrained one is recorded only for requesters every verb is allowed to
 * (system:masters), for whom kube's first try succeeds.
 */
export function impersonationConstraint(requester: User, impersonated: User): string {
  if (!requester.groups.includes('system:masters')) return '';
  if (impersonated.name.startsWith('system:serviceaccount:')) return 'impersonate:serviceaccount';
  if (impersonated.name.startsWith('system:node:')) return 'impersonate:arbitrary-node';
  return 'impersonate:user-info';
}
