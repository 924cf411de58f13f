import { ApiError, badRequest, forbidden, internalError, notFound } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import type { CustomResourceFacts } from '../catalog/custom-resource-facts.js';
import type { ResourceInfo } from '../api/resource-info.js';
import type { Storage } from '../storage/storage.js';
import { selectorMatches, selectsEverything } from '../validation/label-selector.js';
import { WebhookCallError, type WebhookClient } from '../webhook/webhook-client.js';
import type { AdmissionAttributes } from './admission.js';
import { LOOPBACK_USER } from '../api/request-scope.js';
import {
  admissionReview,
  InvalidResponseError,
  reviewVersionFor,
  UndecodablePatchError,
  UnsupportedPatchTypeError,
  verifyAdmissionResponse,
  type AdmissionResponse,
} from './admission-review.js';
import { matchConditionCompiler, type CompiledMatchConditions, type MatchVerdict } from '../cel/match-conditions.js';
import { MAX_AUTHORIZATION_ROUNDS, PolicyAuthorizer } from './policy/policy-authorizer.js';
import type { ConfiguredWebhook } from './webhook-configurations.js';
import { admissionNamespace, isNamespaceResource, matchedResource, webhookView } from './webhook-matching.js';

/**
 * The steps the mutating and validating webhook plugins share, after kube's generic webhook plugin:
 * whether a webhook is called for a write (ShouldCallHook: namespace and object selectors, rules and
 * match policy, match conditions), and one call (dry-run side effects, the AdmissionReview, the
 * client call and the checks of the answer), with kube's errors.
 */

/** The kinds no webhook ever sees (kube's IsExemptAdmissionConfigurationResource). */
const EXEMPT_KINDS = new Set([
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

/** Whether writes of `info` bypass webhooks (admission configuration objects). */
export function isExemptFromWebhooks(info: ResourceInfo): boolean {
  return info.group === 'admissionregistration.k8s.io' && EXEMPT_KINDS.has(info.kind);
}

/** A webhook that could not be called or answered unusably (kube's ErrCallingWebhook). */
export class WebhookCallFailure extends Error {
  constructor(
    readonly webhookName: string,
    readonly reason: string,
  ) {
    super(`failed calling webhook "${webhookName}": ${reason}`);
  }

  /** How the request fails when the webhook's failurePolicy is Fail. */
  toApiError(): ApiError {
    return internalError(this);
  }
}

/** kube's ToStatusErr: a webhook's denial as the request's error. */
export function denial(webhookName: string, result: Obj | undefined): ApiError {
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  const r = result ?? {};
  const code = typeof r.code === 'number' && r.code >= 400 ? r.code : 400;
  const reason = typeof r.reason === 'string' ? r.reason : '';
  const message =
    typeof r.message === 'string' && r.message !== ''
      ? `${deniedBy}: ${r.message}`
      : reason !== ''
        ? `${deniedBy}: ${reason}`
        : `${deniedBy} without explanation`;
  const details = typeof r.details === 'object' && r.details !== null ? (r.details as ApiError['details']) : undefined;
  return new ApiError(code, reason, message, details);
}

/** A webhook to call for a write, and the resource (version) it is called for. */
export interface Invocation {
  hook: ConfiguredWebhook;
  resource: ResourceInfo;
}

/** A call's verified answer, with the object it was made about (in the invocation's version). */
export interface CallResult extends AdmissionResponse {
  object: Obj | undefined;
}

export class WebhookDispatch {
  private readonly compiled = new WeakMap<ConfiguredWebhook, CompiledMatchConditions>();

  constructor(
    private readonly storage: Storage,
    private readonly catalog: ResourceCatalog,
    private readonly client: WebhookClient,
    private readonly authorizer: Authorizer,
  ) {}

  /** The custom resource facts (schemas, conversion webhooks) of the catalogue the webhooks match against. */
  get customResources(): CustomResourceFacts {
    return this.catalog.customResources;
  }

  /** kube's ShouldCallHook: the invocation of `hook` for the write, or undefined when it is not called. */
  async invocationFor(hook: ConfiguredWebhook, attrs: AdmissionAttributes): Promise<Invocation | undefined> {
    const nsMatch = await this.matchNamespace(hook, attrs).then(
      (m) => ({ matches: m, error: undefined }),
      (err: unknown) => ({ matches: false, error: err instanceof Error ? err : new Error(String(err)) }),
    );
    if (!nsMatch.matches && nsMatch.error === undefined) return undefined;
    if (!this.matchObject(hook, attrs)) return undefined;
    const resource = matchedResource(hook.rules, hook.matchPolicy, attrs, this.catalog);
    if (resource === undefined) return undefined;
    if (nsMatch.error !== undefined) throw nsMatch.error;
    if (hook.matchConditions.length > 0) {
      let compiled = this.compiled.get(hook);
      if (compiled === undefined) {
        compiled = matchConditionCompiler().compile(hook.matchConditions);
        this.compiled.set(hook, compiled);
      }
      const { object, oldObject, request } = await this.subject(resource, attrs);
      const verdict = await this.evaluateConditions(compiled, { object, oldObject, request }, hook.failurePolicy, attrs);
      if ('error' in verdict) throw forbidden({ group: attrs.info.group, resource: attrs.info.resource }, attrs.name, verdict.error);
      if (!verdict.matches) return undefined;
    }
    return { hook, resource };
  }

  /** Evaluates a hook's conditions, again once the authorizer decisions they asked for are known. */
  private async evaluateConditions(
    compiled: CompiledMatchConditions,
    input: { object: Obj | undefined; oldObject: Obj | undefined; request: Obj },
    failurePolicy: string,
    attrs: AdmissionAttributes,
  ): Promise<MatchVerdict> {
    const authz = new PolicyAuthorizer(this.authorizer, attrs.request?.user ?? LOOPBACK_USER);
    const full = { ...input, authorizer: authz.variables(attrs) };
    let verdict = compiled.evaluate(full, failurePolicy);
    for (let round = 1; authz.pending && round < MAX_AUTHORIZATION_ROUNDS; round++) {
      await authz.resolve();
      verdict = compiled.evaluate(full, failurePolicy);
    }
    return verdict;
  }

  /** The namespace's labels a namespaceSelector sees (a Namespace's own on its create and update). */
  private async matchNamespace(hook: ConfiguredWebhook, attrs: AdmissionAttributes): Promise<boolean> {
    const namespace = admissionNamespace(attrs);
    const isNamespace = isNamespaceResource(attrs.info);
    if (namespace === '' && !isNamespace) return true;
    if (selectsEverything(hook.namespaceSelector)) return true;
    let labels: unknown;
    if (isNamespace && attrs.subresource === '' && (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE')) {
      labels = (attrs.object?.metadata as Obj | undefined)?.labels;
    } else {
      const stored = await this.storage.get('namespaces', namespace);
      if (stored === undefined) throw notFound({ group: '', resource: 'namespaces' }, namespace);
      labels = ((JSON.parse(stored.json) as Obj).metadata as Obj | undefined)?.labels;
    }
    return selectorMatches(hook.namespaceSelector, labels);
  }

  /** objectSelector: the new or the old object's labels match. */
  private matchObject(hook: ConfiguredWebhook, attrs: AdmissionAttributes): boolean {
    if (selectsEverything(hook.objectSelector)) return true;
    const labelsOf = (o: Obj | undefined): unknown => (o?.metadata as Obj | undefined)?.labels;
    return (
      (attrs.object !== undefined && selectorMatches(hook.objectSelector, labelsOf(attrs.object))) ||
      (attrs.oldObject !== undefined && selectorMatches(hook.objectSelector, labelsOf(attrs.oldObject)))
    );
  }

  /** The objects in the invocation's version, and the AdmissionRequest about them (uid left to the call). */
  private async subject(
    resource: ResourceInfo,
    attrs: AdmissionAttributes,
    version = 'v1',
  ): Promise<{ object: Obj | undefined; oldObject: Obj | undefined; request: Obj; uid: string; review: Obj }> {
    const object = attrs.object === undefined ? undefined : await webhookView(this.catalog.customResources, attrs.object, attrs, resource);
    const oldObject = attrs.oldObject === undefined ? undefined : await webhookView(this.catalog.customResources, attrs.oldObject, attrs, resource);
    const { uid, review } = admissionReview(version, {
      operation: attrs.operation,
      resource,
      requestResource: attrs.info,
      subresource: attrs.subresource,
      name: attrs.name,
      namespace: admissionNamespace(attrs),
      user: attrs.request?.user ?? LOOPBACK_USER,
      object,
      oldObject,
      dryRun: attrs.dryRun,
      options: attrs.request?.options,
    });
    return { object, oldObject, request: review.request as Obj, uid, review };
  }

  /**
   * Calls the webhook. Throws WebhookCallFailure for what failurePolicy decides (unreachable, timed
   * out, invalid answer), and an ApiError for what it does not (a dry run the webhook cannot take).
   * Warnings and audit annotations of the answer are recorded; a denial is returned, not thrown.
   */
  async call(invocation: Invocation, attrs: AdmissionAttributes, mutating: boolean): Promise<CallResult> {
    const hook = invocation.hook;
    if (attrs.dryRun) {
      if (hook.sideEffects === undefined) throw new WebhookCallFailure(hook.name, 'Webhook SideEffects is nil');
      if (hook.sideEffects !== 'None' && hook.sideEffects !== 'NoneOnDryRun') throw badRequest(`admission webhook "${hook.name}" does not support dry run`);
    }
    const version = reviewVersionFor(hook.admissionReviewVersions);
    if (version === undefined) {
      throw new WebhookCallFailure(hook.name, 'could not create admission objects: webhook does not accept known AdmissionReview versions');
    }
    const { object, uid, review } = await this.subject(invocation.resource, attrs, version);
    let answer: unknown;
    try {
      answer = await this.client.post(hook.clientConfig, review, { timeoutMs: hook.timeoutSeconds * 1000 });
    } catch (err) {
      if (err instanceof WebhookCallError) throw new WebhookCallFailure(hook.name, `failed to call webhook: ${err.message}`);
      throw err;
    }
    let response: AdmissionResponse;
    try {
      response = verifyAdmissionResponse(version, uid, mutating, answer);
    } catch (err) {
      if (err instanceof InvalidResponseError) throw new WebhookCallFailure(hook.name, `received invalid webhook response: ${err.message}`);
      if (err instanceof UndecodablePatchError) throw new WebhookCallFailure(hook.name, `received undecodable patch in webhook response: ${err.message}`);
      if (err instanceof UnsupportedPatchTypeError) throw new WebhookCallFailure(hook.name, `unsupported patch type "${err.message}"`);
      throw err;
    }
    for (const [k, v] of Object.entries(response.auditAnnotations)) attrs.request?.annotate(`${hook.name}/${k}`, v);
    for (const w of response.warnings) attrs.request?.warn(w);
    return { ...response, object };
  }
}
