import type { ResourceInfo } from '../api/resource-info.js';
import { internalError } from '../api/errors.js';
import type { Obj } from '../api/object-util.js';
import { pruneCustomResourceBody } from '../strategy/custom-resources.js';
import { applyJsonPatch } from '../patch/json-patch.js';
import { patchErrorDetail } from '../patch/patch-errors.js';
import { applyDefaults } from '../strategy/strategies.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { denial, isExemptFromWebhooks, WebhookCallFailure, type CallResult, type WebhookDispatch } from './webhook-dispatch.js';
import type { WebhookConfigurations } from './webhook-configurations.js';
import { fromWebhookView, isScaleWrite } from './webhook-matching.js';

const PLUGIN = 'MutatingAdmissionWebhook';
const MUTATION_PREFIX = 'mutation.webhook.admission.k8s.io/';
const PATCH_PREFIX = 'patch.webhook.admission.k8s.io/';
const FAILED_OPEN_PREFIX = 'failed-open.mutation.webhook.admission.k8s.io/';

/** kube's webhookReinvokeContext: which IfNeeded webhooks the second pass calls again. */
class WebhookReinvocation {
  lastOutput: string | undefined;
  private previouslyInvoked = new Set<string>();
  readonly reinvoke = new Set<string>();

  requireReinvokingPreviouslyInvoked(): void {
    for (const uid of this.previouslyInvoked) this.reinvoke.add(uid);
    this.previouslyInvoked = new Set();
  }

  addPreviouslyInvoked(uid: string): void {
    this.previouslyInvoked.add(uid);
  }
}

/**
 * kube's MutatingAdmissionWebhook plugin: the matching webhooks of the MutatingWebhookConfigurations
 * are called one after another, each with the object as the previous ones left it (converted to the
 * version the webhook matched). A JSONPatch answer is applied, the result defaulted and converted
 * back to the request's version (a custom resource pruned by its schema, as kube's schema-coercing
 * converter does); the object's own validation and the validating plugins see it later.
 * A webhook that changes the object makes the chain run its mutating pass again, where webhooks with
 * `reinvocationPolicy: IfNeeded` called before the change are called once more.
 */
export class MutatingAdmissionWebhook implements AdmissionPlugin {
  readonly name = PLUGIN;

  constructor(
    private readonly configurations: WebhookConfigurations,
    private readonly dispatch: WebhookDispatch,
  ) {}

  /** Nothing to call while no webhook of this kind is configured. */
  idle(): boolean {
    return this.configurations.idle();
  }

  /** Every write but those of the webhook configurations and policies themselves. */
  handles(_operation: AdmissionAttributes['operation'], info: ResourceInfo): boolean {
    return !isExemptFromWebhooks(info);
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (isExemptFromWebhooks(attrs.info)) return;
    const hooks = await this.configurations.webhooks();
    if (hooks.length === 0) return;
    const reinvocation = attrs.reinvocation;
    const state = reinvocation?.value(PLUGIN, () => new WebhookReinvocation()) ?? new WebhookReinvocation();
    const isReinvoke = reinvocation?.isReinvoke === true;
    if (isReinvoke && state.lastOutput !== JSON.stringify(attrs.object)) state.requireReinvokingPreviouslyInvoked();
    try {
      for (const [index, hook] of hooks.entries()) {
        const invocation = await this.dispatch.invocationFor(hook, attrs);
        if (invocation === undefined) continue;
        if (isReinvoke && !state.reinvoke.has(hook.uid)) continue;
        const round = isReinvoke ? 1 : 0;
        let changed = false;
        let failure: Error | undefined;
        try {
          changed = await this.callOne(invocation.hook, invocation.resource, attrs, round, index, () => this.dispatch.call(invocation, attrs, true));
        } catch (err) {
          failure = err instanceof Error ? err : new Error(String(err));
        }
        if (changed) {
          state.requireReinvokingPreviouslyInvoked();
          if (reinvocation !== undefined) reinvocation.shouldReinvoke = true;
        }
        if (hook.reinvocationPolicy === 'IfNeeded') state.addPreviouslyInvoked(hook.uid);
        if (failure === undefined) continue;
        if (failure instanceof WebhookCallFailure) {
          if (hook.failurePolicy === 'Ignore') {
            attrs.request?.annotate(`${FAILED_OPEN_PREFIX}round_${round}_index_${index}`, hook.name);
            continue;
          }
          throw failure.toApiError();
        }
        throw failure;
      }
    } finally {
      state.lastOutput = JSON.stringify(attrs.object);
    }
  }

  /** One call; applies its patch to `attrs.object`. Returns whether the object changed. */
  private async callOne(
    hook: { name: string; configuration: string },
    resource: AdmissionAttributes['info'],
    attrs: AdmissionAttributes,
    round: number,
    index: number,
    call: () => Promise<CallResult>,
  ): Promise<boolean> {
    let changed = false;
    try {
      const result = await call();
      if (!result.allowed) throw denial(hook.name, result.result);
      if (result.patch === undefined || result.patch.length === 0) return false;
      if (attrs.object === undefined || result.object === undefined) {
        throw internalError(new Error(`admission webhook "${hook.name}" attempted to modify the object, which is not supported for this operation`));
      }
      let patched: Obj;
      try {
        patched = applyJsonPatch(result.object, result.patch) as Obj;
      } catch (err) {
        throw internalError(new Error(patchErrorDetail(err) ?? (err instanceof Error ? err.message : String(err))));
      }
      changed = JSON.stringify(patched) !== JSON.stringify(result.object);
      attrs.request?.annotate(
        `${PATCH_PREFIX}round_${round}_index_${index}`,
        JSON.stringify({ configuration: hook.configuration, webhook: hook.name, patch: result.patch, patchType: 'JSONPatch' }),
      );
      const facts = this.dispatch.customResources;
      if (!isScaleWrite(attrs)) applyDefaults(resource, patched, facts);
      const back = await fromWebhookView(facts, patched, attrs, resource, attrs.object);
      // kube converts a custom resource back through its schema-coercing converter, which prunes
      // the fields the version's schema does not declare.
      if (attrs.info.custom === true && !isScaleWrite(attrs) && typeof back.apiVersion === 'string')
        pruneCustomResourceBody(facts, back.apiVersion, attrs.info.kind, back);
      for (const key of Object.keys(attrs.object)) delete attrs.object[key];
      Object.assign(attrs.object, back);
      return changed;
    } finally {
      attrs.request?.annotate(
        `${MUTATION_PREFIX}round_${round}_index_${index}`,
        JSON.stringify({ configuration: hook.configuration, webhook: hook.name, mutated: changed }),
      );
    }
  }
}
