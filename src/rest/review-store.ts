import { badRequest, invalid, type StatusCause } from '../api/errors.js';
import { canonicalize, isObject, metadataOf, type Obj } from '../api/object-util.js';
import type { AuthorizationAttributes } from '../auth/authorizer.js';
import { parseFieldSelector, type FieldRequirement } from '../selectors/field-selector.js';
import type { User } from '../api/user.js';
import { reviewToken } from '../auth/token-review.js';
import { nowTimestamp } from '../api/object-util.js';
import { validateLocalSubjectAccessReview, validateSelfSubjectAccessReview, validateSubjectAccessReview } from '../validation/access-review.js';
import type { ResourceTarget } from './server-context.js';
import type { Creater, WriteRequestOptions } from './rest-verbs.js';
import { asString } from '../api/values.js';

/**
 * Whether a type is a review: a create-only resource that answers a question rather than storing an
 * object (access reviews, self subject review, token review). Bindings are create-only but stored.
 */
export function isReviewType(target: ResourceTarget): boolean {
  return target.info.verbs.length === 1 && target.info.verbs[0] === 'create' && target.info.resource !== 'bindings';
}

/** The user a SelfSubjectReview reports, in kube's UserInfo form. */
function userInfoOf(user: User): Obj {
  const info: Obj = { username: user.name };
  if (user.uid !== '') info.uid = user.uid;
  info.groups = user.groups;
  if (Object.keys(user.extra).length > 0) info.extra = user.extra;
  return info;
}

/** The user a SubjectAccessReview asks about. */
function subjectOf(spec: Obj): User {
  const extra: Record<string, string[]> = {};
  if (isObject(spec.extra)) {
    for (const [k, v] of Object.entries(spec.extra)) if (Array.isArray(v)) extra[k] = v.filter((x): x is string => typeof x === 'string');
  }
  const groups = Array.isArray(spec.groups) ? spec.groups.filter((g): g is string => typeof g === 'string') : [];
  return { name: asString(spec.user), uid: asString(spec.uid), groups, extra };
}

/**
 * The field selector terms of a review's resourceAttributes, as kube reads them: `rawSelector`
 * parsed, or `requirements` with one value each (In as `=`, NotIn as `!=`; other terms dropped).
 */
function reviewFieldSelector(selector: unknown): { fieldSelector?: FieldRequirement[] } {
  if (!isObject(selector)) return {};
  let terms: FieldRequirement[] | undefined;
  if (asString(selector.rawSelector) !== '') {
    try {
      terms = parseFieldSelector(asString(selector.rawSelector));
    } catch {
      terms = undefined;
    }
  }
  if (Array.isArray(selector.requirements) && selector.requirements.length > 0) {
    terms = [];
    for (const r of selector.requirements) {
      if (!isObject(r) || !Array.isArray(r.values) || r.values.length !== 1 || typeof r.values[0] !== 'string') continue;
      if (r.operator === 'In') terms.push({ field: asString(r.key), operator: '=', value: r.values[0] });
      else if (r.operator === 'NotIn') terms.push({ field: asString(r.key), operator: '!=', value: r.values[0] });
    }
  }
  return terms === undefined ? {} : { fieldSelector: terms };
}

/** The authorization attributes a review's spec describes, for `user`. */
function attributesOf(spec: Obj, user: User): AuthorizationAttributes {
  const base = { user, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '', path: '' };
  if (isObject(spec.resourceAttributes)) {
    const a = spec.resourceAttributes;
    return {
      ...base,
      verb: asString(a.verb),
      resourceRequest: true,
      apiGroup: asString(a.group),
      apiVersion: asString(a.version),
      namespace: asString(a.namespace),
      resource: asString(a.resource),
      subresource: asString(a.subresource),
      name: asString(a.name),
      ...reviewFieldSelector(a.fieldSelector),
    };
  }
  const n = isObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : {};
  return { ...base, verb: asString(n.verb), resourceRequest: false, path: asString(n.path) };
}

/**
 * The store of review types: `create` answers the review in its status and stores nothing, so a review
 * store offers no other verb. Access reviews are answered by the server's authorization stage.
 */
export class ReviewStore implements Creater {
  constructor(private readonly target: ResourceTarget) {}

  private get user(): User {
    return this.target.scope.user;
  }

  async create(input: Obj, _options: WriteRequestOptions): Promise<string> {
    const { info, ri, apiVersion } = this.target;
    const meta = metadataOf(input);
    // kube clears the namespace of cluster-scoped objects before validating them.
    if (!info.namespaced) delete meta.namespace;
    const spec = isObject(input.spec) ? input.spec : {};
    let status: Obj;
    let outMeta: Obj = {};
    switch (info.resource) {
      case 'selfsubjectaccessreviews':
        this.check(validateSelfSubjectAccessReview(spec, meta));
        status = await this.decide(attributesOf(spec, this.user));
        break;
      case 'subjectaccessreviews':
        this.check(validateSubjectAccessReview(spec, meta));
        status = await this.decide(attributesOf(spec, subjectOf(spec)));
        break;
      case 'localsubjectaccessreviews':
        this.check(validateLocalSubjectAccessReview(spec, meta, ri.namespace));
        outMeta = { namespace: ri.namespace };
        status = await this.decide(attributesOf(spec, subjectOf(spec)));
        break;
      case 'selfsubjectrulesreviews':
        if (asString(spec.namespace) === '') throw badRequest('no namespace on request');
        status = await this.rules(asString(spec.namespace));
        break;
      case 'selfsubjectreviews':
        outMeta = { creationTimestamp: nowTimestamp() };
        status = { userInfo: userInfoOf(this.user) };
        break;
      case 'tokenreviews':
        if (asString(spec.token) === '') throw badRequest('token is required for TokenReview in authentication');
        status = await reviewToken(this.target.server.authentication?.chain, asString(spec.token), spec.audiences);
        break;
      default:
        status = {};
    }
    const out: Obj = { metadata: outMeta };
    if (info.resource !== 'selfsubjectreviews') out.spec = spec;
    out.status = status;
    const answer = canonicalize(out, info.kind, apiVersion);
    const answerMeta = metadataOf(answer);
    if (answerMeta.resourceVersion === '') delete answerMeta.resourceVersion;
    return JSON.stringify(answer);
  }

  /** 422 with kube's wording: its internal review objects carry no kind, so the message names none. */
  private check(causes: StatusCause[]): void {
    if (causes.length > 0) throw invalid('', this.target.info.group, '', causes);
  }

  private async decide(attrs: AuthorizationAttributes): Promise<Obj> {
    const decision = await this.target.server.authorizer.authorize(attrs);
    const status: Obj = { allowed: decision.allowed };
    if (decision.denied === true) status.denied = true;
    if (decision.reason !== '') status.reason = decision.reason;
    if (decision.evaluationError !== undefined && decision.evaluationError !== '') status.evaluationError = decision.evaluationError;
    return status;
  }

  /** kube's SelfSubjectRulesReview status: the rules every authorizer of the chain reports for the requester. */
  private async rules(namespace: string): Promise<Obj> {
    const authorizer = this.target.server.authorizer;
    const rules = authorizer.rulesFor === undefined ? undefined : await authorizer.rulesFor(this.user, namespace);
    const status: Obj = {
      resourceRules: (rules?.resourceRules ?? []).map((r) => {
        const out: Obj = { verbs: r.verbs };
        if (r.apiGroups !== undefined && r.apiGroups.length > 0) out.apiGroups = r.apiGroups;
        if (r.resources !== undefined && r.resources.length > 0) out.resources = r.resources;
        if (r.resourceNames !== undefined && r.resourceNames.length > 0) out.resourceNames = r.resourceNames;
        return out;
      }),
      nonResourceRules: (rules?.nonResourceRules ?? []).map((r) => {
        const out: Obj = { verbs: r.verbs };
        if (r.nonResourceURLs !== undefined && r.nonResourceURLs.length > 0) out.nonResourceURLs = r.nonResourceURLs;
        return out;
      }),
      incomplete: rules?.incomplete ?? false,
    };
    if (rules !== undefined && rules.evaluationError !== '') status.evaluationError = rules.evaluationError;
    return status;
  }
}
