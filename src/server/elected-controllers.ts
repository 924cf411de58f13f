/**
 * The controllers kube-controller-manager runs that Capstan runs inside the API server: the
 * namespace controller, the default ServiceAccounts (kube's serviceaccount-controller), the root CA
 * publisher, the service account token controller, the ValidatingAdmissionPolicy status controller
 * and the ClusterRole aggregation controller. They join the controller manager's leader election, so
 * that across every worker and every instance on one storage each runs exactly once, as
 * kube-controller-manager's do. What kube-apiserver itself does in every instance (its identity
 * Lease, the priority-and-fairness configuration, the RBAC bootstrap policy, serving CRDs) is not
 * here: app.ts runs it in every instance.
 */
import type { ServerConfig } from '../config/server-config.js';
import type { ManagedController } from '../controllers/controller-manager.js';
import { isControllerEnabled, ROOT_CA_PUBLISHER, SERVICE_ACCOUNT_TOKEN } from '../controllers/controller-names.js';
import { ClusterRoleAggregationController } from '../controllers/clusterrole-aggregation-controller.js';
import { ServiceAccountTokenController } from '../controllers/service-account-token-controller.js';
import { PolicyStatusController } from '../admission/policy/policy-status-controller.js';
import type { ServiceAccountTokens } from '../auth/service-account-tokens.js';
import { logger } from '../logging/logger.js';
import { DefaultServiceAccounts } from '../namespace/default-service-accounts.js';
import { NamespaceController } from '../namespace/namespace-controller.js';
import { RootCAPublisher } from '../namespace/root-ca-publisher.js';
import type { ServerContext } from '../rest/server-context.js';
import type { ServingSetup } from '../tls/serving-setup.js';

/** A controller with a start (caches filled, first pass done) and a stop, as Capstan's in-server controllers are. */
interface StartStop {
  start(): Promise<void>;
  stop(): void;
}

/**
 * A fresh `create()` for every term as leader: started when the term begins, stopped when it ends.
 * `whenStarted` resolves once the current term's start is over (failed or not).
 */
function termController(name: string, create: () => StartStop): ManagedController {
  let started: Promise<void> = Promise.resolve();
  return {
    name,
    run: async (signal) => {
      const controller = create();
      const starting = controller.start();
      started = starting.catch(() => undefined);
      try {
        await starting;
        if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      } finally {
        controller.stop();
      }
    },
    whenStarted: () => started,
  };
}

/** What the in-server controllers need beyond the server context. */
export interface ElectedControllerDependencies {
  config: ServerConfig;
  /** Serving certificates (the root CA publisher runs only with HTTPS). */
  serving: ServingSetup | undefined;
  /** Signs the legacy tokens the service account token controller puts in Secrets. */
  tokens: ServiceAccountTokens;
}

/** The in-server controllers this configuration enables, to run under the controller manager's election. */
export function electedServerControllers(context: ServerContext, deps: ElectedControllerDependencies): ManagedController[] {
  const { storage, catalog } = context;
  const warn =
    (message: string) =>
    (error: unknown): void =>
      logger.warn(message, { error });
  const controllers: ManagedController[] = [
    termController('namespace-controller', () => new NamespaceController(context)),
    termController('serviceaccount-controller', () => new DefaultServiceAccounts(storage, warn('cannot create a default ServiceAccount'))),
    termController('validatingadmissionpolicy-status-controller', () => new PolicyStatusController(storage, catalog, warn('admission policy status'))),
    termController('clusterrole-aggregation-controller', () => new ClusterRoleAggregationController(storage)),
  ];
  const serving = deps.serving;
  if (serving !== undefined && isControllerEnabled(ROOT_CA_PUBLISHER, deps.config.controllers)) {
    controllers.push(termController(ROOT_CA_PUBLISHER.name, () => new RootCAPublisher(storage, serving.servingCA, warn('cannot publish kube-root-ca.crt'))));
  }
  if (isControllerEnabled(SERVICE_ACCOUNT_TOKEN, deps.config.controllers)) {
    controllers.push(
      termController(
        SERVICE_ACCOUNT_TOKEN.name,
        () => new ServiceAccountTokenController(storage, deps.tokens, serving?.servingCA, warn('cannot fill a service account token Secret')),
      ),
    );
  }
  return controllers;
}
