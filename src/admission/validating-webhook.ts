import type { ResourceInfo } from '../api/resource-info.js';
import type { AdmissionAttributes, AdmissionPlugin } from './admission.js';
import { denial, isExemptFromWebhooks, WebhookCallFailure, type Invocation, type WebhookDispatch } from './webhook-dispatch.js';
import type { WebhookConfigurations } from './webhook-configurations.js';

/** Audit annotation key prefix for a validating webhook that failed open. */
const FAILED_OPEN_PREFIX = 'failed-open.validating.webhook.admission.k8s.io/';

/**
 * kube's ValidatingAdmissionWebhook plugin: every matching webhook of the ValidatingWebhookConfigurations
 * is called at once with the final object; the request fails with the first (in webhook order) denial,
 * or with a call failure of a webhook whose failurePolicy is Fail (500, `failed calling webhook ...`).
 * Failures of `Ignore` webhooks are recorded as `failed-open` audit annotations.
 */
export class ValidatingAdmissionWebhook implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionWebhook';

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

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (isExemptFromWebhooks(attrs.info)) return;
    const hooks = await this.configurations.webhooks();
    if (hooks.length === 0) return;
    const invocations: Invocation[] = [];
    for (const hook of hooks) {
      const invocation = await this.dispatch.invocationFor(hook, attrs);
      if (invocation !== undefined) invocations.push(invocation);
    }
    if (invocations.length === 0) return;
    const outcomes = await Promise.all(
      invocations.map(async (invocation, index): Promise<Error | undefined> => {
        const hook = invocation.hook;
        try {
          const result = await this.dispatch.call(invocation, attrs, false);
          return result.allowed ? undefined : denial(hook.name, result.result);
        } catch (err) {
          if (err instanceof WebhookCallFailure) {
            if (hook.failurePolicy === 'Ignore') {
              attrs.request?.annotate(`${FAILED_OPEN_PREFIX}round_0_index_${index}`, hook.name);
              return undefined;
            }
            return err.toApiError();
          }
          return err instanceof Error ? err : new Error(String(err));
        }
      }),
    );
    const first = outcomes.find((o) => o !== undefined);
    if (first !== undefined) throw first;
  }
}
