import { EscalationCheckingStore, RBAC_RESOURCES } from '../auth/rbac/escalation-checking-store.js';
import type { User } from '../api/user.js';
import { GenericStore } from './generic-store.js';
import type { ResourceTarget } from './resource-target.js';
import { isReviewType, ReviewStore } from './review-store.js';

/** The store serving a resource: its verbs are what the handlers may call (see rest-verbs.ts). */
export function storeFor(target: ResourceTarget, user: User): GenericStore | ReviewStore {
  if (isReviewType(target)) return new ReviewStore(target, user);
  const rbacRules = target.server.rbacRules;
  if (rbacRules !== undefined && target.info.group === 'rbac.authorization.k8s.io' && RBAC_RESOURCES.includes(target.info.resource)) {
    return new EscalationCheckingStore(target, user, rbacRules);
  }
  return new GenericStore(target);
}
