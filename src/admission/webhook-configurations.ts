import type { Obj } from '../api/object-util.js';
import { WatchedCollection } from '../storage/watched-collection.js';
import type { Storage } from '../storage/storage.js';
import type { WebhookClientConfig } from '../webhook/webhook-client.js';
import { asString, objectOrUndefined, stringElements, stringOrUndefined } from '../api/values.js';

/** Storage types of the two configuration kinds. */
export const MUTATING_WEBHOOKS_TYPE = 'mutatingwebhookconfigurations.admissionregistration.k8s.io';
export const VALIDATING_WEBHOOKS_TYPE = 'validatingwebhookconfigurations.admissionregistration.k8s.io';

/** One `rules` entry of a webhook (admissionregistration.k8s.io/v1 RuleWithOperations). */
export interface WebhookRule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope: string;
}

/** One webhook of a configuration, with kube's defaults applied to what storage holds. */
export interface ConfiguredWebhook {
  /** `CONFIGURATION/NAME/INDEX`: identifies the webhook across reinvocations. */
  uid: string;
  configuration: string;
  name: string;
  clientConfig: WebhookClientConfig;
  rules: WebhookRule[];
  failurePolicy: string;
  matchPolicy: string;
  namespaceSelector: Obj;
  objectSelector: Obj;
  /** Absent only in objects stored before validation required it (kube then fails dry runs). */
  sideEffects: string | undefined;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  /** Mutating webhooks only: `Never` or `IfNeeded`. */
  reinvocationPolicy: string;
  matchConditions: { name: string; expression: string }[];
}

/** The webhooks of a stored configuration, in their order. */
export function webhooksOf(config: Obj): ConfiguredWebhook[] {
  const name = asString(objectOrUndefined(config.metadata)?.name);
  const hooks = Array.isArray(config.webhooks) ? config.webhooks : [];
  return hooks.flatMap((raw, index) => {
    const h = objectOrUndefined(raw);
    if (h === undefined) return [];
    const cc = objectOrUndefined(h.clientConfig) ?? {};
    const service = objectOrUndefined(cc.service);
    const clientConfig: WebhookClientConfig = {};
    if (typeof cc.url === 'string') clientConfig.url = cc.url;
    if (typeof cc.caBundle === 'string' && cc.caBundle !== '') clientConfig.caBundle = cc.caBundle;
    if (service !== undefined) {
      clientConfig.service = {
        namespace: asString(service.namespace),
        name: asString(service.name),
        path: typeof service.path === 'string' ? service.path : undefined,
        port: typeof service.port === 'number' ? service.port : 443,
      };
    }
    const hookName = asString(h.name);
    return [
      {
        uid: `${name}/${hookName}/${index}`,
        configuration: name,
        name: hookName,
        clientConfig,
        rules: (Array.isArray(h.rules) ? h.rules : []).flatMap((r) => {
          const rule = objectOrUndefined(r);
          if (rule === undefined) return [];
          return [
            {
              operations: stringElements(rule.operations),
              apiGroups: stringElements(rule.apiGroups),
              apiVersions: stringElements(rule.apiVersions),
              resources: stringElements(rule.resources),
              scope: stringOrUndefined(rule.scope) ?? '*',
            },
          ];
        }),
        failurePolicy: stringOrUndefined(h.failurePolicy) ?? 'Fail',
        matchPolicy: stringOrUndefined(h.matchPolicy) ?? 'Equivalent',
        namespaceSelector: objectOrUndefined(h.namespaceSelector) ?? {},
        objectSelector: objectOrUndefined(h.objectSelector) ?? {},
        sideEffects: typeof h.sideEffects === 'string' ? h.sideEffects : undefined,
        timeoutSeconds: typeof h.timeoutSeconds === 'number' ? h.timeoutSeconds : 10,
        admissionReviewVersions: stringElements(h.admissionReviewVersions),
        reinvocationPolicy: stringOrUndefined(h.reinvocationPolicy) ?? 'Never',
        matchConditions: (Array.isArray(h.matchConditions) ? h.matchConditions : []).flatMap((c) => {
          const mc = objectOrUndefined(c);
          return mc === undefined ? [] : [{ name: asString(mc.name), expression: asString(mc.expression) }];
        }),
      },
    ];
  });
}

/**
 * The webhooks of one configuration kind, as kube's configuration manager serves them: configurations
 * sorted by name, each one's webhooks in order. A watched collection keeps them current on every
 * process sharing the store (a change is seen as soon as the change stream delivers it); the sorted
 * list is rebuilt on the first read after a change.
 */
export class WebhookConfigurations {
  private readonly collection: WatchedCollection;
  private cached: ConfiguredWebhook[] | undefined = [];
  private started: Promise<void> | undefined;
  /** Whether the first list is known (`start` resolved). */
  private listed = false;

  constructor(storage: Storage, type: string, signal: AbortSignal, onError: (err: unknown) => void) {
    this.collection = new WatchedCollection(storage, type, () => (this.cached = undefined), signal, onError);
  }

  /** Lists and starts watching; resolves once the listed configurations are known. Idempotent. */
  start(): Promise<void> {
    this.started ??= this.collection.start().then(() => {
      this.listed = true;
    });
    return this.started;
  }

  /** True once the first list is known and there is no webhook of this kind (a write need not ask). */
  idle(): boolean {
    return this.listed && this.current().length === 0;
  }

  /** Every webhook, in kube's call order (waits for the first list). */
  async webhooks(): Promise<ConfiguredWebhook[]> {
    await this.start();
    return this.current();
  }

  /** The webhooks as the watched configurations are now, sorted on the first read after a change. */
  private current(): ConfiguredWebhook[] {
    if (this.cached === undefined) {
      const configs = [...this.collection.inNamespace('')].sort((a, b) => {
        const an = asString(objectOrUndefined(a.metadata)?.name);
        const bn = asString(objectOrUndefined(b.metadata)?.name);
        return an < bn ? -1 : an > bn ? 1 : 0;
      });
      this.cached = configs.flatMap(webhooksOf);
    }
    return this.cached;
  }
}
