import { parseAuthorizationModes } from '../auth/authorizer.js';
import { parseDuration } from '../config/duration.js';
import { parseFeatureGates } from '../api/feature-gates.js';
import { ResourceCatalog } from '../catalog/resource-catalog.js';
import { parseRuntimeConfig } from '../config/runtime-config.js';
import { ipv4Problem, parseIpRange } from '../config/ip-range.js';
import { parsePortRange } from '../config/port-range.js';
import { validateControllerList } from '../controllers/controller-names.js';
import { isImplementedAdmissionPlugin } from '../admission/admission-chain.js';
import { admissionFlagProblems } from '../admission/plugin-names.js';
import { SERVING_FLAGS } from '../config/serving-flags.js';
import { AUDIT_FLAGS } from '../config/audit-flags.js';
import { COMPAT_FLAGS } from '../config/compat-flags.js';
import { SIGNING_FLAGS } from '../config/signing-flags.js';
import { AGGREGATOR_FLAGS } from '../config/aggregator-flags.js';
import type { FlagSpec, ServerConfig } from '../config/server-config.js';

function int(name: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(v)) throw new Error(`invalid argument "${v}" for "--${name}" flag: must be an integer`);
  const n = Number(v);
  if (n < min || n > max) throw new Error(`invalid argument "${v}" for "--${name}" flag: must be between ${min} and ${max}`);
  return n;
}

function duration(name: string, v: string): number {
  try {
    return parseDuration(v);
  } catch (err) {
    throw new Error(`invalid argument "${v}" for "--${name}" flag: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function bool(name: string, v: string): boolean {
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new Error(`invalid argument "${v}" for "--${name}" flag: must be true or false`);
}

/** Runs a flag value parser, reporting its failure as the flag's invalid argument. */
function parsed<T>(name: string, v: string, parse: (text: string) => T): T {
  try {
    return parse(v);
  } catch (err) {
    throw new Error(`invalid argument "${v}" for "--${name}" flag: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function list(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function webhookDefaults(c: ServerConfig): ServerConfig['authorizationWebhook'] {
  return c.authorizationWebhook ?? { configFile: '', version: 'v1beta1', authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000 };
}

const FLAGS: FlagSpec[] = [
  {
    name: 'bind-address',
    default: '127.0.0.1',
    help: 'The IP address on which to serve the secure port (0.0.0.0: every interface).',
    apply: (c, v) => {
      c.bindAddress = v;
    },
  },
  {
    name: 'authorization-mode',
    default: 'AlwaysAllow',
    help: 'Ordered comma-separated list of authorization modes: AlwaysAllow, AlwaysDeny, RBAC, Webhook, Node (members of system:masters are always allowed, as in kube-apiserver).',
    apply: (c, v) => {
      parseAuthorizationModes(v);
      c.authorizationMode = v;
    },
  },
  {
    name: 'authorization-webhook-config-file',
    default: '',
    help: 'A kubeconfig naming the authorization webhook (--authorization-mode=Webhook).',
    apply: (c, v) => {
      c.authorizationWebhook = { ...webhookDefaults(c), configFile: v };
    },
  },
  {
    name: 'authorization-webhook-version',
    default: 'v1beta1',
    help: 'The SubjectAccessReview version sent to the authorization webhook: v1 or v1beta1.',
    apply: (c, v) => {
      if (v !== 'v1' && v !== 'v1beta1') throw new Error(`invalid argument "${v}" for "--authorization-webhook-version" flag: must be "v1" or "v1beta1"`);
      c.authorizationWebhook = { ...webhookDefaults(c), version: v };
    },
  },
  {
    name: 'authorization-webhook-cache-authorized-ttl',
    default: '5m',
    help: 'How long allowed answers of the authorization webhook are reused.',
    apply: (c, v) => {
      c.authorizationWebhook = { ...webhookDefaults(c), authorizedTtlMs: duration('authorization-webhook-cache-authorized-ttl', v) };
    },
  },
  {
    name: 'authorization-webhook-cache-unauthorized-ttl',
    default: '30s',
    help: 'How long not-allowed answers of the authorization webhook are reused.',
    apply: (c, v) => {
      c.authorizationWebhook = { ...webhookDefaults(c), unauthorizedTtlMs: duration('authorization-webhook-cache-unauthorized-ttl', v) };
    },
  },
  ...SERVING_FLAGS,
  ...AUDIT_FLAGS,
  ...SIGNING_FLAGS,
  ...AGGREGATOR_FLAGS,
  {
    name: 'storage',
    default: 'memory',
    help: 'Storage backend: memory (embedded, single process) or redis.',
    apply: (c, v) => {
      if (v !== 'memory' && v !== 'redis') throw new Error(`invalid argument "${v}" for "--storage" flag: must be "memory" or "redis"`);
      c.storage = v;
    },
  },
  {
    name: 'feature-gates',
    default: '',
    help: 'Comma-separated key=value pairs of feature gates (APIResponseCompression, CBORServingAndStorage, WatchList, AllowUnsafeMalformedObjectDeletion, ...).',
    apply: (c, v) => {
      try {
        c.featureGates = parseFeatureGates(v);
      } catch (err) {
        throw new Error(`invalid argument "${v}" for "--feature-gates" flag: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  },
  {
    name: 'runtime-config',
    default: '',
    help: "Comma-separated key=value pairs turning API versions on or off, as kube-apiserver's: api/all, api/ga, api/beta, api/alpha, GROUP/VERSION or GROUP/VERSION/RESOURCE (v1 for the core group). By default every GA version is served and no alpha or beta one.",
    apply: (c, v) => {
      try {
        c.runtimeConfig = parseRuntimeConfig(
          v,
          (g, ver) => ResourceCatalog.isBuiltInGroupVersion(g, ver),
          (g) => ResourceCatalog.isBuiltInGroup(g),
        );
      } catch (err) {
        throw new Error(`invalid argument "${v}" for "--runtime-config" flag: ${err instanceof Error ? err.message : String(err)}`);
      }
    },
  },
  {
    name: 'livez-grace-period',
    default: '0s',
    help: 'Time after start during which /livez treats unfinished start-up work as healthy.',
    apply: (c, v) => {
      c.livezGracePeriodMs = duration('livez-grace-period', v);
    },
  },
  {
    name: 'shutdown-delay-duration',
    default: '0s',
    help: 'Time to keep serving after SIGTERM while /readyz fails, so load balancers drain.',
    apply: (c, v) => {
      c.shutdownDelayMs = duration('shutdown-delay-duration', v);
    },
  },
  {
    name: 'watch-cache-history',
    default: '5m',
    help: 'How long change history is kept for watches, exact reads and continue tokens.',
    apply: (c, v) => {
      c.watchCacheHistoryMs = duration('watch-cache-history', v);
    },
  },
  {
    name: 'watch-cache',
    default: 'true',
    help: 'With --storage=redis, serve lists from a per-process cache kept current by the change stream (false: read every list from Redis).',
    apply: (c, v) => {
      c.watchCache = bool('watch-cache', v);
    },
  },
  {
    name: 'min-request-timeout',
    default: '1800',
    help: 'Minimum seconds a watch without timeoutSeconds stays open (randomised up to twice this).',
    apply: (c, v) => {
      c.minRequestTimeoutSeconds = int('min-request-timeout', v, 1);
    },
  },
  {
    name: 'write-kubeconfig',
    default: '',
    help: 'Write a kubeconfig for this server to PATH once it listens.',
    apply: (c, v) => {
      c.writeKubeconfig = v === '' ? undefined : v;
    },
  },
  {
    name: 'workers',
    default: '1',
    help: 'Worker processes sharing the port (auto = one per core); more than 1 requires --storage=redis.',
    apply: (c, v) => {
      c.workers = v === 'auto' ? -1 : int('workers', v, 1, 256);
    },
  },
  {
    name: 'worker-claim-timeout',
    default: '2s',
    help: 'With --workers: a worker that takes longer than this to claim a new connection (its event loop is blocked) gets no more until it answers, and the connection goes to another worker.',
    apply: (c, v) => {
      c.workerClaimTimeoutMs = duration('worker-claim-timeout', v);
      if (c.workerClaimTimeoutMs < 10) throw new Error(`invalid argument "${v}" for "--worker-claim-timeout" flag: must be at least 10ms`);
    },
  },
  {
    name: 'redis-url',
    default: 'redis://127.0.0.1:6379',
    help: 'Redis URL (redis:// or rediss://, with password) for --storage=redis.',
    apply: (c, v) => {
      c.redisUrl = v;
    },
  },
  {
    name: 'redis-cluster',
    default: '',
    help: 'Comma-separated host:port seed nodes of a Redis Cluster.',
    apply: (c, v) => {
      c.redisCluster = list(v);
    },
  },
  {
    name: 'redis-sentinels',
    default: '',
    help: 'Comma-separated host:port Sentinel addresses.',
    apply: (c, v) => {
      c.redisSentinels = list(v);
    },
  },
  {
    name: 'redis-sentinel-name',
    default: 'mymaster',
    help: 'Name of the Sentinel-monitored master.',
    apply: (c, v) => {
      c.redisSentinelName = v;
    },
  },
  {
    name: 'redis-wait-replicas',
    default: '0',
    help: 'Acknowledge a write only after this many replicas have it (WAIT).',
    apply: (c, v) => {
      c.redisWaitReplicas = int('redis-wait-replicas', v, 0);
    },
  },
  {
    name: 'max-request-body-bytes',
    default: '3145728',
    help: 'Largest request body accepted, in bytes (413 above).',
    apply: (c, v) => {
      c.limits = { ...c.limits, maxRequestBodyBytes: int('max-request-body-bytes', v, 1024) };
    },
  },
  {
    name: 'max-object-size-bytes',
    default: '1572864',
    help: "Largest object stored, in bytes of its JSON form (413 above; etcd's default request limit).",
    apply: (c, v) => {
      c.limits = { ...c.limits, maxObjectBytes: int('max-object-size-bytes', v, 1024) };
    },
  },
  {
    name: 'max-nesting-depth',
    default: '1000',
    help: 'Deepest nesting of objects and arrays accepted in a request body, any media type (400 above).',
    apply: (c, v) => {
      c.limits = { ...c.limits, maxNestingDepth: int('max-nesting-depth', v, 32, 1000) };
    },
  },
  {
    name: 'max-json-patch-operations',
    default: '10000',
    help: 'Most operations accepted in one JSON patch (413 above).',
    apply: (c, v) => {
      c.limits = { ...c.limits, maxJsonPatchOperations: int('max-json-patch-operations', v, 1) };
    },
  },
  {
    name: 'max-json-patch-copy-bytes',
    default: '3145728',
    help: 'Most bytes the copy operations of one JSON patch may add (422 above).',
    apply: (c, v) => {
      c.limits = { ...c.limits, maxJsonPatchCopyBytes: int('max-json-patch-copy-bytes', v, 0) };
    },
  },
  {
    name: 'advertise-address',
    default: '',
    help: "IPv4 address announced to the cluster in the Endpoints and EndpointSlice of the default/kubernetes Service (default: the bind address, or the host's first non-loopback address when bound to 0.0.0.0). A loopback address is not announced, as kube-apiserver cannot store it there.",
    apply: (c, v) => {
      if (v !== '' && ipv4Problem(v) !== undefined) throw new Error(`invalid argument "${v}" for "--advertise-address" flag: ${ipv4Problem(v) ?? ''}`);
      c.advertiseAddress = v;
    },
  },
  {
    name: 'service-cluster-ip-range',
    default: '10.96.0.0/12',
    help: 'IPv4 CIDR range Services get their cluster IPs from; its first address goes to the default/kubernetes Service.',
    apply: (c, v) => {
      c.serviceClusterIPRange = parsed('service-cluster-ip-range', v, parseIpRange);
    },
  },
  {
    name: 'service-node-port-range',
    default: '30000-32767',
    help: 'Range of ports (FIRST-LAST, inclusive) NodePort and LoadBalancer Services get their node ports from.',
    apply: (c, v) => {
      c.serviceNodePortRange = parsed('service-node-port-range', v, parsePortRange);
    },
  },
  {
    name: 'controllers',
    default: '*',
    help: "Controllers the server runs (one process per storage at a time, elected through the kube-system/capstan-controller-manager Lease). '*' enables all, 'foo' enables foo, '-foo' disables foo. Known: garbage-collector-controller (alias garbage-collector), disruption-controller (alias disruption), root-ca-certificate-publisher-controller (alias root-ca-cert-publisher: kube-root-ca.crt in every namespace, with HTTPS), certificatesigningrequest-signing-controller (alias csrsigning: signs approved CSRs of the kubernetes.io signers, with HTTPS or --cluster-signing-cert-file), node-lifecycle-controller (alias nodelifecycle: the NoSchedule taints of node conditions, no eviction). Use --controllers=-garbage-collector when kube-controller-manager runs against this server.",
    apply: (c, v) => {
      const names = list(v);
      parsed('controllers', v, () => validateControllerList(names));
      c.controllers = names;
    },
  },
  {
    name: 'enable-admission-plugins',
    default: '',
    help: "Admission plugins to run besides kube-apiserver's defaults (comma-separated kube plugin names). Plugins always run in kube's order. Of the plugins off by default, Capstan has AlwaysAdmit, AlwaysDeny and NodeRestriction.",
    apply: (c, v) => {
      c.enableAdmissionPlugins = list(v);
    },
  },
  {
    name: 'disable-admission-plugins',
    default: '',
    help: 'Admission plugins to turn off, even if they are on by default (comma-separated kube plugin names).',
    apply: (c, v) => {
      c.disableAdmissionPlugins = list(v);
    },
  },
  {
    name: 'log-level',
    default: 'info',
    help: 'Log level: debug, info, warn, error.',
    apply: (c, v) => {
      if (v !== 'debug' && v !== 'info' && v !== 'warn' && v !== 'error')
        throw new Error(`invalid argument "${v}" for "--log-level" flag: must be debug, info, warn or error`);
      c.logLevel = v;
    },
  },
  {
    name: 'log-format',
    default: 'auto',
    help: 'Log line format: json, text, or auto (text when stderr is a terminal, where request lines are logged only at --log-level=debug; json otherwise).',
    apply: (c, v) => {
      if (v !== 'auto' && v !== 'json' && v !== 'text') throw new Error(`invalid argument "${v}" for "--log-format" flag: must be auto, json or text`);
      c.logFormat = v;
    },
  },
  ...COMPAT_FLAGS,
];

/** The configuration with every flag at its default. */
export function defaultConfig(): ServerConfig {
  const c = {} as ServerConfig;
  for (const f of FLAGS) f.apply(c, f.default);
  return c;
}

/** Usage text for `--help`. */
export function usage(): string {
  const lines = ['Usage: capstan [flags]', '', 'A Kubernetes-compatible API server.', '', 'Flags:'];
  for (const f of FLAGS) lines.push(`      --${f.name}${f.default !== '' ? ` (default "${f.default}")` : ''}`, `          ${f.help}`);
  lines.push('  -h, --help', '          Show this help.');
  return `${lines.join('\n')}\n`;
}

export type ParsedArgs = { help: true } | { help: false; config: ServerConfig };

/** Parses `--flag=value` and `--flag value`; throws a one-line error for unknown flags or bad values. */
export function parseArgs(argv: string[]): ParsedArgs {
  const config = defaultConfig();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return { help: true };
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const spec = FLAGS.find((f) => f.name === name);
    if (!spec) throw new Error(`unknown flag: --${name}`);
    let value: string;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      const next = argv[i + 1];
      if (next === undefined) throw new Error(`flag needs an argument: --${name}`);
      value = next;
      i++;
    }
    spec.apply(config, value);
  }
  const admissionProblems = admissionFlagProblems(config.enableAdmissionPlugins, config.disableAdmissionPlugins);
  if (admissionProblems.length === 0) {
    const unsupported = config.enableAdmissionPlugins.filter((name) => !isImplementedAdmissionPlugin(name));
    admissionProblems.push(...unsupported.map((name) => `admission plugin "${name}" is not supported by Capstan`));
  }
  if (admissionProblems.length > 0) throw new Error(admissionProblems.join('; '));
  if (config.workers === -1) config.workers = 0; // resolved to the core count by the launcher
  return { help: false, config };
}
