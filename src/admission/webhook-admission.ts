import type { Authorizer } from '../auth/authorizer.js';
import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import type { Storage } from '../storage/storage.js';
import { StorageServiceResolver, WebhookClient } from '../webhook/webhook-client.js';
import { MutatingAdmissionWebhook } from './mutating-webhook.js';
import { ValidatingAdmissionWebhook } from './validating-webhook.js';
import { WebhookDispatch } from './webhook-dispatch.js';
import { MUTATING_WEBHOOKS_TYPE, VALIDATING_WEBHOOKS_TYPE, WebhookConfigurations } from './webhook-configurations.js';

/** The two webhook admission plugins of one server, over one client and one watch per configuration kind. */
export interface WebhookAdmission {
  mutating: MutatingAdmissionWebhook;
  validating: ValidatingAdmissionWebhook;
  /** Lists both configuration kinds and starts watching them (calls wait for this on their own). */
  start(): Promise<void>;
  /** Ends the watches and closes the client's kept-alive connections. */
  close(): void;
}

/** Builds the plugins (`authorizer` answers matchConditions' `authorizer` checks); their watches end on `close()`. */
export function webhookAdmission(storage: Storage, catalog: ResourceCatalog, authorizer: Authorizer, onError: (err: unknown) => void): WebhookAdmission {
  const stop = new AbortController();
  const signal = stop.signal;
  const client = new WebhookClient(new StorageServiceResolver(storage));
  const dispatch = new WebhookDispatch(storage, catalog, client, authorizer);
  const mutatingConfigs = new WebhookConfigurations(storage, MUTATING_WEBHOOKS_TYPE, signal, onError);
  const validatingConfigs = new WebhookConfigurations(storage, VALIDATING_WEBHOOKS_TYPE, signal, onError);
  return {
    mutating: new MutatingAdmissionWebhook(mutatingConfigs, dispatch),
    validating: new ValidatingAdmissionWebhook(validatingConfigs, dispatch),
    start: async () => {
      await Promise.all([mutatingConfigs.start(), validatingConfigs.start()]);
    },
    close: () => {
      stop.abort();
      client.close();
    },
  };
}
