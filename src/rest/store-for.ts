import { EscalationCheckingStore, RBAC_RESOURCES } from './escalation-checking-store.js';
import { GenericStore } from './generic-store.js';
import type { ResourceTarget } from './server-context.js';
import { isReviewType, ReviewStore } from './review-store.js';
import { ScaleStore } from './scale-store.js';

/** The store serving a resource: its verbs are what the handlers may call (see rest-verbs.ts). */
export function storeFor(target: ResourceTarget): GenericStore | ReviewStore | ScaleStore {
  if (isReviewType(target)) return new ReviewStore(target);
  if (target.ri.subresource === 'scale') return new ScaleStore(target, new GenericStore(target));
  const rbacRules = target.server.rbacRules;
  if (rbacRules !== undefined && target.info.group === 'rbac.authorization.k8s.io' && RBAC_RESOURCES.includes(target.info.resource)) {
    return new EscalationCheckingStore(target, rbacRules);
  }
  return new GenericStore(target);
}
