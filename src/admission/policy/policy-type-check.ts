import type { Obj } from '../../api/object-util.js';
import type { ResourceRegistry } from '../../registry/resource-registry.js';

/** One `status.typeChecking.expressionWarnings` entry. */
export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/**
 * kube's policy type checker: the warnings for `spec.validations[i].expression` and
 * `.messageExpression` checked against the kinds the policy matches. Without schema-typed CEL
 * declarations there is nothing to report.
 */
export function typeCheckPolicy(_registry: ResourceRegistry, _policy: Obj): ExpressionWarning[] {
  return [];
}
