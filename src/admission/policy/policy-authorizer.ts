import type { AuthorizationAttributes, Authorizer } from '../../auth/authorizer.js';
import type { User } from '../../api/user.js';
import type { AuthorizerBackend, AuthzAttributes, AuthzDecision } from '../../cel/index.js';
import { cel } from '../../cel/load.js';
import type { AdmissionAttributes } from '../admission.js';

/** Rounds of evaluation one invocation may take to learn the decisions its expressions ask for. */
export const MAX_AUTHORIZATION_ROUNDS = 5;

/**
 * The CEL `authorizer` of one request, as kube's caching authorizer: CEL asks synchronously, so a
 * decision not known yet answers "no opinion" and is recorded; `resolve` asks Capstan's authorizer
 * for every recorded check, and the caller evaluates again. Expressions are pure, so the second
 * evaluation sees every decision it needs (a check that depends on another's answer takes one more round).
 */
export class PolicyAuthorizer {
  private readonly decided = new Map<string, AuthzDecision>();
  private readonly missing = new Map<string, AuthzAttributes>();

  constructor(
    private readonly authorizer: Authorizer,
    private readonly user: User | undefined,
  ) {}

  readonly backend: AuthorizerBackend = (attrs) => {
    const key = JSON.stringify(attrs);
    const known = this.decided.get(key);
    if (known !== undefined) return known;
    this.missing.set(key, attrs);
    return { decision: 'no_opinion', reason: '' };
  };

  /** Whether the last evaluation asked for decisions not known yet. */
  get pending(): boolean {
    return this.missing.size > 0;
  }

  /** Asks the authorizer for every check the last evaluation recorded. */
  async resolve(): Promise<void> {
    const asked = [...this.missing];
    this.missing.clear();
    for (const [key, attrs] of asked) {
      try {
        const d = await this.authorizer.authorize(this.attributesOf(attrs));
        this.decided.set(key, { decision: d.allowed ? 'allow' : 'no_opinion', reason: d.reason });
      } catch (err) {
        this.decided.set(key, { decision: 'no_opinion', reason: '', error: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  /** The `authorizer` and `authorizer.requestResource` variables for request `a`. */
  variables(a: AdmissionAttributes): Record<string, unknown> {
    const { authorizerValue, requestResourceValue } = cel();
    return {
      authorizer: authorizerValue(this.backend),
      'authorizer.requestResource': requestResourceValue(this.backend, {
        group: a.info.group,
        resource: a.info.resource,
        subresource: a.subresource,
        namespace: a.namespace,
        name: a.name,
      }),
    };
  }

  private attributesOf(attrs: AuthzAttributes): AuthorizationAttributes {
    const sa = attrs.serviceAccount;
    const user: User =
      sa !== undefined
        ? {
            name: `system:serviceaccount:${sa.namespace}:${sa.name}`,
            uid: '',
            groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'],
            extra: {},
          }
        : (this.user ?? { name: '', uid: '', groups: [], extra: {} });
    const r = attrs.resource;
    return {
      user,
      verb: attrs.verb,
      resourceRequest: r !== undefined,
      apiGroup: r?.group ?? '',
      apiVersion: '*',
      namespace: r?.namespace ?? '',
      resource: r?.resource ?? '',
      subresource: r?.subresource ?? '',
      name: r?.name ?? '',
      path: attrs.path ?? '',
    };
  }
}
