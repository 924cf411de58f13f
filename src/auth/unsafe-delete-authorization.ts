import { forbidden } from '../api/errors.js';
import type { RequestInfo } from '../api/request-info.js';
import type { Authorizer, Decision } from './authorizer.js';
import type { User } from '../api/user.js';

/** The verb kube authorizes, besides `delete`, before an unsafe deletion of a corrupt object. */
export const UNSAFE_DELETE_VERB = 'unsafe-delete-ignore-read-errors';

/**
 * kube's second authorization of a DELETE with `ignoreStoreReadErrorWithClusterBreakingPotential`
 * (the `delete` verb was authorized by the auth filter): `user` must also be allowed
 * `unsafe-delete-ignore-read-errors` on the same resource and object. Resolves when allowed; throws
 * 403 on the resource, `not permitted to do "unsafe-delete-ignore-read-errors", reason: <reason>`,
 * when refused, and 403 naming the failure when the authorizer fails.
 */
export async function authorizeUnsafeDelete(authorizer: Authorizer, user: User, ri: RequestInfo): Promise<void> {
  const qr = { group: ri.group, resource: ri.resource };
  let decision: Decision;
  try {
    decision = await authorizer.authorize({
      user,
      verb: UNSAFE_DELETE_VERB,
      resourceRequest: true,
      apiGroup: ri.group,
      apiVersion: ri.version,
      namespace: ri.namespace,
      resource: ri.resource,
      subresource: '',
      name: ri.name,
      path: '',
    });
  } catch (err) {
    throw forbidden(qr, ri.name, `error while checking permission for "${UNSAFE_DELETE_VERB}", ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!decision.allowed) throw forbidden(qr, ri.name, `not permitted to do "${UNSAFE_DELETE_VERB}", reason: ${decision.reason}`);
}
