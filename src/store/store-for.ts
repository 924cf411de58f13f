import type { User } from '../auth/user.js';
import { GenericStore } from './generic-store.js';
import type { ResourceTarget } from './resource-target.js';
import { isReviewType, ReviewStore } from './review-store.js';

/** The store serving a resource: its verbs are what the handlers may call (see rest-verbs.ts). */
export function storeFor(target: ResourceTarget, user: User): GenericStore | ReviewStore {
  return isReviewType(target) ? new ReviewStore(target, user) : new GenericStore(target);
}
