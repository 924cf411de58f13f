import type { KubeletClient } from '../kubelet/kubelet-client.js';
import type { RuleResolver } from '../auth/rbac/rbac-policy.js';
import type { Authorizer } from '../auth/authorizer.js';
import type { AuthenticationSetup } from '../auth/authentication-setup.js';
import type { RequestInfo } from '../api/request-info.js';
import type { ResourceCatalog } from '../catalog/resource-catalog.js';
import { apiVersionOf, storageTypeOf, type ResourceInfo } from '../api/resource-info.js';
import type { Storage } from '../storage/storage.js';
import type { AdmissionHooks } from '../api/admission-attributes.js';
import { LOOPBACK_SCOPE, type RequestScope } from '../api/request-scope.js';
import type { FeatureGates } from '../api/feature-gates.js';
import type { Limits } from '../api/limits.js';
import type { ServiceNetwork } from '../services/service-allocation.js';

/** Server-wide collaborators every handler, store and controller may use. */
export interface ServerContext {
  catalog: ResourceCatalog;
  /** The authorization stage (also answers access reviews). */
  authorizer: Authorizer;
  /** RBAC rule resolution over the stored Roles and bindings (escalation checks of RBAC writes). */
  rbacRules?: RuleResolver;
  /** Authentication chain and service account tokens (TokenRequest, TokenReview); absent in unit fixtures. */
  authentication?: AuthenticationSetup;
  storage: Storage;
  /** The admission chain, as the functions handlers and controllers pass into the store verbs. */
  admission: AdmissionHooks;
  featureGates: FeatureGates;
  /** Bounds on request bodies, stored objects and patches. */
  limits: Limits;
  /** Change history window in ms (continue tokens and watch history). */
  historyMs: number;
  /** Minimum request timeout in seconds; watches without timeoutSeconds end after a random 1-2x of it. */
  minRequestTimeoutSeconds: number;
  /** Signal that fires when the server starts shutting down (ends watches). */
  shutdownSignal: AbortSignal;
  /** Clock in ms (continue-token issue and expiry); replaceable in tests. */
  now: () => number;
  /** Period of BOOKMARK events on otherwise quiet watches that allow them. */
  bookmarkIntervalMs: number;
  /** A watcher whose unsent backlog exceeds this many bytes is closed. */
  maxWatchBacklogBytes: number;
  /** Service cluster IP and node port ranges, and the allocators over them. */
  serviceNetwork: ServiceNetwork;
  /** How nodes' kubelets are reached (pod logs, exec, attach, port-forward). */
  kubelet: KubeletClient;
}

/**
 * What a store verb acts on and for whom: a served type, the request info naming one object or
 * collection of it, the request's scope, and the admission the caller passes in (no HTTP attached).
 */
export interface ResourceTarget {
  server: ServerContext;
  info: ResourceInfo;
  ri: RequestInfo;
  /** Storage type: group + resource. */
  type: string;
  /** `apiVersion` of objects served at this path. */
  apiVersion: string;
  /** Who asks, and where warnings and audit annotations go. */
  scope: RequestScope;
  /** The admission the write runs (the server's chain, from the handler or controller that calls). */
  admission: AdmissionHooks;
}

/** A target for server-internal work (controllers, bootstrap) on `info`: the loopback scope and the server's admission. */
export function makeTarget(server: ServerContext, info: ResourceInfo, namespace: string, name: string): ResourceTarget {
  return {
    server,
    info,
    type: storageTypeOf(info),
    apiVersion: apiVersionOf(info.group, info.version),
    ri: { group: info.group, version: info.version, namespace, resource: info.resource, name, subresource: '', subpath: [], verb: 'delete' },
    scope: LOOPBACK_SCOPE,
    admission: server.admission,
  };
}
