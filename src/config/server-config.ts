import type { FeatureGates } from '../api/feature-gates.js';
import type { Limits } from '../api/limits.js';
import type { RuntimeConfig } from './runtime-config.js';
import type { IpRange } from './ip-range.js';
import type { PortRange } from './port-range.js';
import type { ExternalAuthenticationConfig } from './external-authentication-config.js';

/** Everything the command line configures (serving and authentication: see serving-flags.ts). */
export interface ServerConfig
  extends
    ServingConfig,
    AuthenticationConfig,
    ExternalAuthenticationConfig,
    AuditConfig,
    ClusterSigningConfig,
    AggregatorConfig,
    KubeletClientConfig,
    FlowControlConfig {
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
  /** With workers: the least time between two moves of a client off a saturated worker (0: never). */
  workerRebalanceIntervalMs: number;
  /** With workers on Redis: how long a write waits for the other workers' watches to have its change (0: not at all). */
  workerWriteSyncTimeoutMs: number;
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

/** The section of docs/flags.md a flag is listed in (titles and order: src/cli/flags-doc.ts). */
export type FlagGroup =
  | 'serving'
  | 'authentication'
  | 'authorization'
  | 'admission'
  | 'api'
  | 'limits'
  | 'flowcontrol'
  | 'storage'
  | 'processes'
  | 'controllers'
  | 'audit'
  | 'aggregation'
  | 'logging'
  | 'compatibility';

/** A value a flag knows by name (a controller, a feature gate, an admission plugin) and what it means. */
export interface FlagValue {
  value: string;
  help: string;
}

/** One command-line flag: `--help` and docs/flags.md are rendered from these. */
export interface FlagSpec {
  name: string;
  group: FlagGroup;
  /** One paragraph: what the flag does, its values, what an unset default means. */
  help: string;
  /** The value applied when the flag is not given ('' = unset). */
  default: string;
  /** The named values the flag knows, each with its meaning (read when rendered: built from other modules' tables). */
  values?: () => readonly FlagValue[];
  apply: (c: ServerConfig, v: string) => void;
}

/** Where and how Capstan serves: HTTPS on the secure port, plain HTTP on loopback when asked for. */
export interface ServingConfig {
  /** HTTPS port (`--secure-port`; 0: a free one); undefined only for in-process test servers. */
  securePort: number | undefined;
  /** Plain-HTTP port on loopback (`--insecure-port`, alias `--port`); undefined: not served. */
  port: number | undefined;
  /** Loopback address of the plain-HTTP port (`--insecure-bind-address`). */
  insecureBindAddress: string;
  tlsCertFile: string;
  tlsPrivateKeyFile: string;
  /** Where the CA, serving and admin certificates and the service account key are generated and kept. */
  certDir: string;
  /** The secure port offers only HTTP/1.1 (`--disable-http2-serving`); otherwise HTTP/2 as well. */
  disableHttp2Serving: boolean;
  /** HTTP/2 streams a client may open at once on one connection (`--http2-max-streams-per-connection`; 0: 100). */
  http2MaxStreamsPerConnection: number;
  /** The fraction of HTTP/2 requests whose connection gets a GOAWAY as they arrive (`--goaway-chance`; 0: none). */
  goawayChance: number;
}

/** How requests are authenticated (kube-apiserver's authentication flags). */
export interface AuthenticationConfig {
  clientCAFile: string;
  tokenAuthFile: string;
  anonymousAuth: boolean;
  /** Public keys (or private keys, whose public half is used) that verify service account tokens. */
  serviceAccountKeyFiles: string[];
  serviceAccountSigningKeyFile: string;
  /** Issuers accepted; the first is put in issued tokens. */
  serviceAccountIssuers: string[];
  serviceAccountJwksUri: string;
  /** Whether a service account token's account (and bound object) must exist. */
  serviceAccountLookup: boolean;
  /** Audiences a token must be for ([]: the issuers). */
  apiAudiences: string[];
  /** Longest lifetime a TokenRequest gets, in seconds (`--service-account-max-token-expiration`; 0: no limit). */
  serviceAccountMaxTokenExpirationSeconds: number;
  /** Whether pod-bound tokens of kube's default lifetime are valid for a year (`--service-account-extend-token-expiration`). */
  serviceAccountExtendTokenExpiration: boolean;
  requestheaderClientCAFile: string;
  requestheaderAllowedNames: string[];
  requestheaderUsernameHeaders: string[];
  requestheaderUidHeaders: string[];
  requestheaderGroupHeaders: string[];
  requestheaderExtraHeadersPrefix: string[];
}

/** The audit log's settings (kube-apiserver's `--audit-*` flags for the log backend). */
export interface AuditConfig {
  /** `--audit-log-path`: the file events are appended to, `-` for stdout, '' for none. */
  auditLogPath: string;
  /** `--audit-policy-file`: the audit.k8s.io/v1 Policy deciding what is recorded ('' = nothing is). */
  auditPolicyFile: string;
  /** `--audit-log-format`: `json` (one Event object per line) or `legacy` (kube's one-line text). */
  auditLogFormat: 'json' | 'legacy';
  /** `--audit-log-maxage`: days a rotated file is kept (0: no limit). */
  auditLogMaxAge: number;
  /** `--audit-log-maxbackup`: rotated files kept (0: no limit). */
  auditLogMaxBackup: number;
  /** `--audit-log-maxsize`: megabytes before the file is rotated (0: never rotated). */
  auditLogMaxSize: number;
  /** `--audit-log-compress`: gzip rotated files. */
  auditLogCompress: boolean;
  /** `--audit-log-mode`: accepted as kube names them; every mode writes each event before the request goes on. */
  auditLogMode: 'blocking' | 'batch' | 'blocking-strict';
}

/** The CSR signing controller's settings (kube-controller-manager's `--cluster-signing-*` flags). */
export interface ClusterSigningConfig {
  /** PEM CA certificate signing approved CSRs; '' with `clusterSigningKeyFile` '': the --cert-dir CA. */
  clusterSigningCertFile: string;
  clusterSigningKeyFile: string;
  /** Longest lifetime of a signed certificate, in ms (`--cluster-signing-duration`). */
  clusterSigningDurationMs: number;
}

/** How the aggregation layer reaches extension API servers (kube-apiserver's aggregator flags). */
export interface AggregatorConfig {
  /**
   * Client certificate (and key) the aggregator presents to extension API servers, which verify it
   * against the `requestheader-client-ca-file` of the `extension-apiserver-authentication` ConfigMap.
   * Both '' (with HTTPS): Capstan generates a front-proxy CA and this certificate in `--cert-dir`.
   */
  proxyClientCertFile: string;
  proxyClientKeyFile: string;
  /** Route to a Service's endpoints (EndpointSlices) instead of its cluster IP. */
  enableAggregatorRouting: boolean;
  /** Answer 502 instead of passing on a redirect an extension API server sends. */
  aggregatorRejectForwardingRedirect: boolean;
}

/** How the server reaches a node's kubelet for pod logs, exec, attach and port-forward (kube-apiserver's `--kubelet-*` flags). */
export interface KubeletClientConfig {
  /** Client certificate (and key) presented to kubelets; both '' for none. */
  kubeletClientCertificate: string;
  kubeletClientKey: string;
  /** PEM CA bundle that kubelets' serving certificates are verified against; '' to verify none, as kube does. */
  kubeletCertificateAuthority: string;
  /** Node address types in the order they are tried. */
  kubeletPreferredAddressTypes: string[];
  /** Port used when a node's status names no kubelet port. */
  kubeletPort: number;
}

/** How the server protects itself from overload (kube-apiserver's in-flight and APF flags). */
export interface FlowControlConfig {
  /** `--max-requests-inflight`: read-only requests at once (0: no limit), or with APF half of the concurrency limit's sum. */
  maxRequestsInflight: number;
  /** `--max-mutating-requests-inflight`: mutating requests at once (0: no limit), or with APF the other term of the sum. */
  maxMutatingRequestsInflight: number;
  /** `--enable-priority-and-fairness`: classify and queue by FlowSchemas and priority levels instead of the two limits. */
  enablePriorityAndFairness: boolean;
  /**
   * `--request-timeout` (ms): a request that is not long-running and has not completed by then is
   * answered 504; an APF queue holds a request at most a quarter of it.
   */
  requestTimeoutMs: number;
}
