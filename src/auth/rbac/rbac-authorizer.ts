import type { AuthorizationAttributes, Authorizer, Decision, SubjectRules } from '../authorizer.js';
import type { User } from '../../api/user.js';
import { ruleAllows } from './policy-rule.js';
import type { PolicySource } from './rbac-policy.js';
import { RuleResolver } from './rbac-policy.js';

/** Go's aggregate error text: one error as is, several in brackets. */
export function aggregateErrors(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
}

/**
 * kube's RBAC authorizer: allows a request when a rule of a binding naming the user allows it
 * (reason `RBAC: allowed by <binding>`); otherwise has no opinion, with the resolution errors met
 * (a binding to a missing role) as reason, `RBAC: <errors>`. It never denies outright.
 */
export class RbacAuthorizer implements Authorizer {
  readonly resolver: RuleResolver;

  constructor(policy: PolicySource) {
    this.resolver = new RuleResolver(policy);
  }

  async authorize(attrs: AuthorizationAttributes): Promise<Decision> {
    return this.decide(attrs);
  }

  /** The decision, synchronously (the policy is in memory). */
  decide(attrs: AuthorizationAttributes): Decision {
    let allowedBy = '';
    const errors: string[] = [];
    this.resolver.visitRulesFor(attrs.user, attrs.namespace, (source, rule, error) => {
      if (rule !== undefined && source !== undefined && ruleAllows(attrs, rule)) {
        allowedBy = source();
        return false;
      }
      if (error !== undefined) errors.push(error);
      return true;
    });
    if (allowedBy !== '') return { allowed: true, reason: `RBAC: allowed by ${allowedBy}` };
    return { allowed: false, reason: errors.length > 0 ? `RBAC: ${aggregateErrors(errors)}` : '' };
  }

  async rulesFor(user: User, namespace: string): Promise<SubjectRules> {
    const { rules, errors } = this.resolver.rulesFor(user, namespace);
    const out: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' };
    for (const r of rules) {
      if ((r.resources ?? []).length > 0) {
        out.resourceRules.push({ verbs: r.verbs, apiGroups: r.apiGroups, resources: r.resources, resourceNames: r.resourceNames });
      }
      if ((r.nonResourceURLs ?? []).length > 0) out.nonResourceRules.push({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs });
    }
    if (errors.length > 0) out.evaluationError = aggregateErrors(errors);
    return out;
  }
}
