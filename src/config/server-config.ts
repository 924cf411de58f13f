import type { FeatureGates } from '../api/feature-gates.js';
import type { Limits } from '../api/limits.js';
import type { RuntimeConfig } from './runtime-config.js';
import type { IpRange } from './ip-range.js';
import type { PortRange } from './port-range.js';
import type { AuthenticationConfig, ServingConfig } from './serving-flags.js';
import type { AuditConfig } from './audit-flags.js';
import type { ClusterSigningConfig } from './signing-flags.js';
import type { AggregatorConfig } from './aggregator-flags.js';

/** Everything the command line configures (serving and authentication: see serving-flags.ts). */
export interface ServerConfig extends ServingConfig, AuthenticationConfig, AuditConfig, ClusterSigningConfig, AggregatorConfig {
  /** Address of the secure port. */
  bindAddress: string;
  storage: 'memory' | 'redis';
  featureGates: FeatureGates;
  /** Which built-in API versions and resources are served (`--runtime-config`). */
  runtimeConfig: RuntimeConfig;
  livezGracePeriodMs: number;
  shutdownDelayMs: number;
  watchCacheHistoryMs: number;
  watchCache: boolean;
  minRequestTimeoutSeconds: number;
  writeKubeconfig: string | undefined;
  workers: number;
  /** With workers: how long a worker may take to claim a handed connection before it is stalled. */
  workerClaimTimeoutMs: number;
  redisUrl: string;
  redisCluster: string[];
  redisSentinels: string[];
  redisSentinelName: string;
  redisWaitReplicas: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** `auto`: text when stderr is a terminal, JSON otherwise (resolved by `main`). */
  logFormat: 'auto' | 'json' | 'text';
  /** Request and object limits (see src/api/limits.ts). */
  limits: Limits;
  /** The address announced in the `kubernetes` Endpoints ('' = derived from the bind address). */
  advertiseAddress: string;
  /** Addresses Services get their cluster IPs from. */
  serviceClusterIPRange: IpRange;
  /** Ports NodePort and LoadBalancer Services get their node ports from. */
  serviceNodePortRange: PortRange;
  /** How requests of users outside `system:masters` are authorized (`--authorization-mode`: modes in order, comma-separated). */
  authorizationMode: string;
  /** `--authorization-webhook-*`: the Webhook mode's kubeconfig ('' = none), review version and answer TTLs. */
  authorizationWebhook: { configFile: string; version: 'v1' | 'v1beta1'; authorizedTtlMs: number; unauthorizedTtlMs: number };
  /** Controllers run in the server under leader election (`--controllers`, kube-controller-manager's syntax). */
  controllers: string[];
  /** Admission plugins enabled beyond kube's defaults (`--enable-admission-plugins`). */
  enableAdmissionPlugins: string[];
  /** Default admission plugins turned off (`--disable-admission-plugins`). */
  disableAdmissionPlugins: string[];
}

export interface FlagSpec {
  name: string;
  help: string;
  default: string;
  apply: (c: ServerConfig, v: string) => void;
}
