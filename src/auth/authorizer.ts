import type { FieldRequirement } from '../selectors/field-selector.js';
import type { User } from '../api/user.js';

/** What a request asks to do, as kube's authorizer.Attributes describe it. */
export interface AuthorizationAttributes {
  user: User;
  /** get, list, watch, create, update, patch, delete, deletecollection; for paths: the lowercase method. */
  verb: string;
  resourceRequest: boolean;
  /** Resource requests. */
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** Non-resource requests: the URL path. */
  path: string;
  /**
   * The terms of a list, watch or deletecollection's field selector, when it parsed (kube's
   * AuthorizeWithSelectors; the Node mode lets a node list its own pods by `spec.nodeName`).
   */
  fieldSelector?: readonly FieldRequirement[];
}

/**
 * An authorizer's answer, kube's three decisions: allow (`allowed`), deny (`denied`: refused, and no
 * later authorizer of the chain is asked) or no opinion (neither: the next authorizer decides; a
 * request nobody allows is refused).
 */
export interface Decision {
  allowed: boolean;
  /** An explicit deny (kube's DecisionDeny); absent or false with `allowed` false is no opinion. */
  denied?: boolean;
  /** Why, appended to the 403 message when set (kube's authorizer reason). */
  reason: string;
  /** An authorizer could not decide (a webhook failed): a request nobody allows is then a 500. */
  evaluationError?: string;
}

/** A resource rule of a subject, as SelfSubjectRulesReview reports it. */
export interface ResourceRuleInfo {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

/** A non-resource rule of a subject, as SelfSubjectRulesReview reports it. */
export interface NonResourceRuleInfo {
  verbs: string[];
  nonResourceURLs?: string[];
}

/** What a user may do in a namespace (kube's authorizer.RuleResolver answer). */
export interface SubjectRules {
  resourceRules: ResourceRuleInfo[];
  nonResourceRules: NonResourceRuleInfo[];
  incomplete: boolean;
  /** Errors met while resolving the rules (the list may then be partial). */
  evaluationError: string;
}

/** The authorization stage: may this user do this? */
export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): Promise<Decision>;
  /** The rules that apply to `user` in `namespace`; an authorizer without it contributes none. */
  rulesFor?(user: User, namespace: string): Promise<SubjectRules>;
}

const NO_RULES: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' };

/** kube's AlwaysAllow mode. */
export class AlwaysAllow implements Authorizer {
  async authorize(_attrs: AuthorizationAttributes): Promise<Decision> {
    return { allowed: true, reason: '' };
  }

  async rulesFor(): Promise<SubjectRules> {
    return {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
      evaluationError: '',
    };
  }
}

/** kube's AlwaysDeny mode: no opinion on anything, with kube's reason (so nothing is allowed). */
export class AlwaysDeny implements Authorizer {
  async authorize(_attrs: AuthorizationAttributes): Promise<Decision> {
    return { allowed: false, reason: 'Everything is forbidden.' };
  }

  async rulesFor(): Promise<SubjectRules> {
    return NO_RULES;
  }
}

/** kube's privileged-groups authorizer: members of `system:masters` may do anything; no opinion on others. */
export class PrivilegedGroups implements Authorizer {
  constructor(private readonly groups: readonly string[] = ['system:masters']) {}

  async authorize(attrs: AuthorizationAttributes): Promise<Decision> {
    return { allowed: attrs.user.groups.some((g) => this.groups.includes(g)), reason: '' };
  }
}

/**
 * kube's union of authorizers: each is asked in order; the first allow or deny is the answer, with
 * its reason. When every one has no opinion the request is refused with their reasons joined by
 * newlines. Rules are the concatenation of every member's rules.
 */
export class AuthorizerChain implements Authorizer {
  constructor(private readonly members: readonly Authorizer[]) {}

  async authorize(attrs: AuthorizationAttributes): Promise<Decision> {
    const reasons: string[] = [];
    const errors: string[] = [];
    for (const m of this.members) {
      const d = await m.authorize(attrs);
      if (d.allowed || d.denied === true) return d;
      if (d.reason !== '') reasons.push(d.reason);
      if (d.evaluationError !== undefined && d.evaluationError !== '') errors.push(d.evaluationError);
    }
    const decision: Decision = { allowed: false, reason: reasons.join('\n') };
    if (errors.length > 0) decision.evaluationError = errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`;
    return decision;
  }

  async rulesFor(user: User, namespace: string): Promise<SubjectRules> {
    const out: SubjectRules = { resourceRules: [], nonResourceRules: [], incomplete: false, evaluationError: '' };
    const errors: string[] = [];
    for (const m of this.members) {
      if (m.rulesFor === undefined) continue;
      const r = await m.rulesFor(user, namespace);
      out.resourceRules.push(...r.resourceRules);
      out.nonResourceRules.push(...r.nonResourceRules);
      out.incomplete ||= r.incomplete;
      if (r.evaluationError !== '') errors.push(r.evaluationError);
    }
    out.evaluationError = errors.length === 1 ? errors[0] : errors.length > 1 ? `[${errors.join(', ')}]` : '';
    return out;
  }
}

/** Authorization modes of `--authorization-mode`, as kube-apiserver names them. */
export type AuthorizationMode = 'AlwaysAllow' | 'AlwaysDeny' | 'RBAC' | 'Webhook' | 'Node';

const KUBE_MODES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'];
const SERVED_MODES: readonly string[] = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Webhook', 'Node'];

/**
 * The modes of an `--authorization-mode` value (comma-separated, in order). Throws kube's message for
 * an empty list, an unknown or repeated mode, and a clear refusal for kube's mode Capstan lacks
 * (ABAC).
 */
export function parseAuthorizationModes(text: string): AuthorizationMode[] {
  const modes = text
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (modes.length === 0) throw new Error('at least one authorization-mode must be passed');
  for (const m of modes) {
    if (!KUBE_MODES.includes(m)) throw new Error(`authorization-mode ${JSON.stringify(m)} is not a valid mode`);
    if (!SERVED_MODES.includes(m))
      throw new Error(`authorization-mode ${JSON.stringify(m)} is not supported by Capstan (supported: ${SERVED_MODES.join(', ')})`);
  }
  if (new Set(modes).size !== modes.length) throw new Error(`authorization-mode ${JSON.stringify(modes)} has mode specified more than once`);
  return modes as AuthorizationMode[];
}

/** The authorizers behind modes that need server state. */
export interface ModeAuthorizers {
  rbac?: Authorizer;
  webhook?: Authorizer;
  node?: Authorizer;
}

/**
 * kube-apiserver's authorizer chain: members of `system:masters` may do anything whatever the modes,
 * then each mode of `--authorization-mode` in order (see AuthorizerChain).
 */
export function authorizerFor(modes: string | readonly AuthorizationMode[], plugins: ModeAuthorizers = {}): Authorizer {
  const list = typeof modes === 'string' ? parseAuthorizationModes(modes) : modes;
  const members: Authorizer[] = [new PrivilegedGroups()];
  for (const mode of list) {
    if (mode === 'AlwaysAllow') members.push(new AlwaysAllow());
    else if (mode === 'AlwaysDeny') members.push(new AlwaysDeny());
    else if (mode === 'RBAC' && plugins.rbac !== undefined) members.push(plugins.rbac);
    else if (mode === 'Webhook' && plugins.webhook !== undefined) members.push(plugins.webhook);
    else if (mode === 'Node' && plugins.node !== undefined) members.push(plugins.node);
    else if (mode === 'Webhook') throw new Error("authorization-mode Webhook's authorization config file not passed");
    else throw new Error(`authorization-mode ${mode} needs the ${mode} authorizer of a running server`);
  }
  return new AuthorizerChain(members);
}

/** kube's forbidden message for a refused request (before the reason). */
export function forbiddenMessage(a: AuthorizationAttributes): string {
  const user = JSON.stringify(a.user.name);
  if (!a.resourceRequest) return `User ${user} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource === '' ? a.resource : `${a.resource}/${a.subresource}`;
  const scope = a.namespace !== '' ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `User ${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`;
}
