import type { StatusCause } from '../api/errors.js';
import { invalidField } from './field-errors.js';

/**
 * kube-apiserver 1.36's Lease validation beyond metadata (checked against test/golden/validation/):
 * a positive lease duration and a non-negative transition count, on create and update alike.
 * (`strategy` and `preferredHolder` are dropped by the strategy: CoordinatedLeaderElection is off.)
 */
export function validateLease(lease: Record<string, unknown>): StatusCause[] {
  const spec = typeof lease.spec === 'object' && lease.spec !== null ? (lease.spec as Record<string, unknown>) : {};
  const causes: StatusCause[] = [];
  if (typeof spec.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds <= 0) {
    causes.push(invalidField('spec.leaseDurationSeconds', spec.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (typeof spec.leaseTransitions === 'number' && spec.leaseTransitions < 0) {
    causes.push(invalidField('spec.leaseTransitions', spec.leaseTransitions, 'must be greater than or equal to 0'));
  }
  return causes;
}
