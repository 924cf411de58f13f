import { parseAuthorizationModes } from '../auth/authorizer.js';
import { parseDuration } from '../config/duration.js';
import { describeFeatureGates, parseFeatureGates } from '../api/feature-gates.js';
import { ResourceCatalog } from '../catalog/resource-catalog.js';
import { parseRuntimeConfig } from '../config/runtime-config.js';
import { ipv4Problem, parseIpRange } from '../config/ip-range.js';
import { parsePortRange } from '../config/port-range.js';
import { KNOWN_CONTROLLER_NAMES, validateControllerList } from '../controllers/controller-names.js';
import { isImplementedAdmissionPlugin } from '../admission/admission-chain.js';
import { admissionFlagProblems, isDefaultAdmissionPlugin, ORDERED_ADMISSION_PLUGINS } from '../admission/plugin-names.js';
import { SERVING_FLAGS } from '../config/serving-flags.js';
import { AUTHENTICATION_FLAGS } from '../config/authentication-flags.js';
import { AUDIT_FLAGS } from '../config/audit-flags.js';
import { COMPAT_FLAGS } from '../config/compat-flags.js';
import { FLOW_CONTROL_FLAGS } from '../config/flowcontrol-flags.js';
import { SIGNING_FLAGS } from '../config/signing-flags.js';
import { AGGREGATOR_FLAGS } from '../config/aggregator-flags.js';
import { KUBELET_FLAGS } from '../config/kubelet-flags.js';
import type { FlagSpec, FlagValue, ServerConfig } from '../config/server-config.js';
import { boolFlag, listFlag } from '../config/flag-values.js';

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

/** Runs a flag value parser, reporting its failure as the flag's invalid argument. */
function parsed<T>(name: string, v: string, parse: (text: string) => T): T {
  try {
    return parse(v);
  } catch (err) {
    throw new Error(`invalid argument "${v}" for "--${name}" flag: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** kube's admission plugins that Capstan has or that kube runs by default, in kube's order. */
function admissionPluginValues(): FlagValue[] {
  return ORDERED_ADMISSION_PLUGINS.filter((n) => isImplementedAdmissionPlugin(n) || isDefaultAdmissionPlugin(n)).map((n) => ({
    value: n,
    help: !isImplementedAdmissionPlugin(n)
      ? 'On by default in kube-apiserver; Capstan does not have it, so it never runs.'
      : isDefaultAdmissionPlugin(n)
        ? 'On by default.'
        : 'Off by default.',
  }));
}

function webhookDefaults(c: ServerConfig): ServerConfig['authorizationWebhook'] {
  return c.authorizationWebhook ?? { configFile: '', version: 'v1beta1', authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000 };
}

/** Every flag, in `--help` order. */
export const FLAGS: readonly FlagSpec[] = [
  {
    name: 'bind-address',
    group: 'serving',
    default: '127.0.0.1',
    help: 'The IP address on which to serve the secure port (0.0.0.0: every interface).',
    apply: (c, v) => {
      c.bindAddress = v;
    },
  },
  {
    name: 'authorization-mode',
    group: 'authorization',
    default: 'AlwaysAllow',
    help: "Ordered comma-separated list of authorization modes, asked in order until one allows or denies: AlwaysAllow, AlwaysDeny, RBAC, Webhook, Node (ABAC is refused at start; kube's usual value is Node,RBAC). Members of system:masters are always allowed, as in kube-apiserver. With AlwaysAllow, any user that authenticates, anonymous included, may do anything.",
    apply: (c, v) => {
      parseAuthorizationModes(v);
      c.authorizationMode = v;
    },
  },
  {
    name: 'authorization-webhook-config-file',
    group: 'authorization',
    default: '',
    help: 'A kubeconfig naming the service the Webhook mode asks, with one SubjectAccessReview per request: its allow allows, its deny refuses without asking later modes, and when it cannot be reached a request no earlier mode allowed answers 500.',
    apply: (c, v) => {
      c.authorizationWebhook = { ...webhookDefaults(c), configFile: v };
    },
  },
  {
    name: 'authorization-webhook-version',
    group: 'authorization',
    default: 'v1beta1',
    help: 'The SubjectAccessReview version sent to the authorization webhook: v1 or v1beta1.',
    apply: (c, v) => {
      if (v !== 'v1' && v !== 'v1beta1') throw new Error(`invalid argument "${v}" for "--authorization-webhook-version" flag: must be "v1" or "v1beta1"`);
      c.authorizationWebhook = { ...webhookDefaults(c), version: v };
    },
  },
  {
    name: 'authorization-webhook-cache-authorized-ttl',
    group: 'authorization',
    default: '5m',
    help: 'How long allowed answers of the authorization webhook are reused (0: ask every time).',
    apply: (c, v) => {
      c.authorizationWebhook = { ...webhookDefaults(c), authorizedTtlMs: duration('authorization-webhook-cache-authorized-ttl', v) };
    },
  },
  {
    name: 'authorization-webhook-cache-unauthorized-ttl',
    group: 'authorization',
    default: '30s',
    help: 'How long not-allowed answers of the authorization webhook are reused (0: ask every time).',
    apply: (c, v) => {
      c.authorizationWebhook = { ...webhookDefaults(c), unauthorizedTtlMs: duration('authorization-webhook-cache-unauthorized-ttl', v) };
    },
  },
  ...SERVING_FLAGS,
  ...AUTHENTICATION_FLAGS,
  ...AUDIT_FLAGS,
  ...SIGNING_FLAGS,
  ...AGGREGATOR_FLAGS,
  ...KUBELET_FLAGS,
  ...FLOW_CONTROL_FLAGS,
  {
    name: 'storage',
    group: 'storage',
    default: 'memory',
    help: 'Storage backend: memory (embedded, single process) or redis.',
    apply: (c, v) => {
      if (v !== 'memory' && v !== 'redis') throw new Error(`invalid argument "${v}" for "--storage" flag: must be "memory" or "redis"`);
      c.storage = v;
    },
  },
  {
    name: 'feature-gates',
    group: 'api',
    default: '',
    help: "Comma-separated Name=true|false pairs for the gates below, with kube-apiserver 1.36's defaults. A gate Capstan does not know stops the start (unrecognized feature gate: NAME).",
    values: () => describeFeatureGates().map((g) => ({ value: g.name, help: `${g.default ? 'On' : 'Off'} by default. ${g.help}` })),
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
    group: 'api',
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
    group: 'processes',
    default: '0s',
    help: 'Time after start during which /livez treats unfinished start-up work as healthy.',
    apply: (c, v) => {
      c.livezGracePeriodMs = duration('livez-grace-period', v);
    },
  },
  {
    name: 'shutdown-delay-duration',
    group: 'processes',
    default: '0s',
    help: 'Time to keep serving after SIGTERM while /readyz fails, so load balancers drain.',
    apply: (c, v) => {
      c.shutdownDelayMs = duration('shutdown-delay-duration', v);
    },
  },
  {
    name: 'watch-cache-history',
    group: 'storage',
    default: '5m',
    help: 'How long change history is kept for watches, exact reads and continue tokens.',
    apply: (c, v) => {
      c.watchCacheHistoryMs = duration('watch-cache-history', v);
    },
  },
  {
    name: 'watch-cache',
    group: 'storage',
    default: 'true',
    help: 'With --storage=redis, serve lists from a per-process cache kept current by the change stream (false: read every list from Redis).',
    apply: (c, v) => {
      c.watchCache = boolFlag('watch-cache', v);
    },
  },
  {
    name: 'min-request-timeout',
    group: 'limits',
    default: '1800',
    help: 'Minimum seconds a watch without timeoutSeconds stays open (randomised up to twice this).',
    apply: (c, v) => {
      c.minRequestTimeoutSeconds = int('min-request-timeout', v, 1);
    },
  },
  {
    name: 'write-kubeconfig',
    group: 'serving',
    default: '',
    help: 'Write an admin kubeconfig to PATH once the server listens: the CA to trust and a client certificate in system:masters (npm start passes capstan.kubeconfig). A PATH that cannot be written stops the start.',
    apply: (c, v) => {
      c.writeKubeconfig = v === '' ? undefined : v;
    },
  },
  {
    name: 'workers',
    group: 'processes',
    default: '1',
    help: 'Worker processes sharing the port (auto = one per core); more than 1 requires --storage=redis.',
    apply: (c, v) => {
      c.workers = v === 'auto' ? -1 : int('workers', v, 1, 256);
    },
  },
  {
    name: 'worker-claim-timeout',
    group: 'processes',
    default: '2s',
    help: 'With --workers: a worker that takes longer than this to claim a new connection (its event loop is blocked) gets no more until it answers, and the connection goes to another worker.',
    apply: (c, v) => {
      c.workerClaimTimeoutMs = duration('worker-claim-timeout', v);
      if (c.workerClaimTimeoutMs < 10) throw new Error(`invalid argument "${v}" for "--worker-claim-timeout" flag: must be at least 10ms`);
    },
  },
  {
    name: 'worker-rebalance-interval',
    group: 'processes',
    default: '15s',
    help: "With --workers: when one worker's event loop stays more than 85% busy while another's is at least 40 points less busy, the busy worker closes (HTTP/2 GOAWAY) the one client connection carrying closest to the share of its requests that would even them out, and the client reconnects to the other; at most one such move per this interval, and a client so moved is not moved again for two minutes. 0 turns it off (each connection stays with the worker it was handed to).",
    apply: (c, v) => {
      c.workerRebalanceIntervalMs = duration('worker-rebalance-interval', v);
    },
  },
  {
    name: 'worker-write-sync-timeout',
    group: 'processes',
    default: '0',
    help: "With --workers and --storage=redis: when set, a write answers only once the other workers' watches of its type have its change (waiting at most this long; a worker that lets it pass is not waited for until it catches up), so a client whose watches another worker serves sees its own write by the time the response comes. 0 (the default): writes do not wait; other workers' watches get the change moments later.",
    apply: (c, v) => {
      c.workerWriteSyncTimeoutMs = duration('worker-write-sync-timeout', v);
    },
  },
  {
    name: 'redis-url',
    group: 'storage',
    default: 'redis://127.0.0.1:6379',
    help: 'Redis URL for --storage=redis: redis:// or rediss:// (TLS), with the password in it or in the CAPSTAN_REDIS_PASSWORD environment variable. With --redis-cluster or --redis-sentinels it carries only the scheme and the password.',
    apply: (c, v) => {
      c.redisUrl = v;
    },
  },
  {
    name: 'redis-cluster',
    group: 'storage',
    default: '',
    help: 'Comma-separated host:port seed nodes of a Redis Cluster.',
    apply: (c, v) => {
      c.redisCluster = listFlag(v);
    },
  },
  {
    name: 'redis-sentinels',
    group: 'storage',
    default: '',
    help: 'Comma-separated host:port Sentinel addresses.',
    apply: (c, v) => {
      c.redisSentinels = listFlag(v);
    },
  },
  {
    name: 'redis-sentinel-name',
    group: 'storage',
    default: 'mymaster',
    help: 'Name of the Sentinel-monitored master.',
    apply: (c, v) => {
      c.redisSentinelName = v;
    },
  },
  {
    name: 'redis-wait-replicas',
    group: 'storage',
    default: '0',
    help: 'Acknowledge a write only after this many replicas have it (WAIT), and answer a read only once every connected replica, and at least this many, holds what it saw.',
    apply: (c, v) => {
      c.redisWaitReplicas = int('redis-wait-replicas', v, 0);
    },
  },
  {
    name: 'max-request-body-bytes',
    group: 'limits',
    default: '3145728',
    help: 'Largest request body accepted, in bytes (413 above).',
    apply: (c, v) => {
      c.limits = { ...c.limits, maxRequestBodyBytes: int('max-request-body-bytes', v, 1024) };
    },
  },
  {
    name: 'max-object-size-bytes',
    group: 'limits',
    default: '1572864',
    help: "Largest object stored, in bytes of its JSON form (413 above; etcd's default request limit).",
    apply: (c, v) => {
      c.limits = { ...c.limits, maxObjectBytes: int('max-object-size-bytes', v, 1024) };
    },
  },
  {
    name: 'max-nesting-depth',
    group: 'limits',
    default: '1000',
    help: 'Deepest nesting of objects and arrays accepted in a request body, any media type (400 above).',
    apply: (c, v) => {
      c.limits = { ...c.limits, maxNestingDepth: int('max-nesting-depth', v, 32, 1000) };
    },
  },
  {
    name: 'max-json-patch-operations',
    group: 'limits',
    default: '10000',
    help: 'Most operations accepted in one JSON patch (413 above).',
    apply: (c, v) => {
      c.limits = { ...c.limits, maxJsonPatchOperations: int('max-json-patch-operations', v, 1) };
    },
  },
  {
    name: 'max-json-patch-copy-bytes',
    group: 'limits',
    default: '3145728',
    help: 'Most bytes the copy operations of one JSON patch may add (422 above).',
    apply: (c, v) => {
      c.limits = { ...c.limits, maxJsonPatchCopyBytes: int('max-json-patch-copy-bytes', v, 0) };
    },
  },
  {
    name: 'advertise-address',
    group: 'api',
    default: '',
    help: "IPv4 address announced to the cluster in the Endpoints and EndpointSlice of the default/kubernetes Service (default: the bind address, or the host's first non-loopback address when bound to 0.0.0.0). A loopback address is not announced, as kube-apiserver cannot store it there.",
    apply: (c, v) => {
      if (v !== '' && ipv4Problem(v) !== undefined) throw new Error(`invalid argument "${v}" for "--advertise-address" flag: ${ipv4Problem(v) ?? ''}`);
      c.advertiseAddress = v;
    },
  },
  {
    name: 'service-cluster-ip-range',
    group: 'api',
    default: '10.96.0.0/12',
    help: 'IPv4 CIDR range Services get their cluster IPs from; its first address goes to the default/kubernetes Service.',
    apply: (c, v) => {
      c.serviceClusterIPRange = parsed('service-cluster-ip-range', v, parseIpRange);
    },
  },
  {
    name: 'service-node-port-range',
    group: 'api',
    default: '30000-32767',
    help: 'Range of ports (FIRST-LAST, inclusive) NodePort and LoadBalancer Services get their node ports from.',
    apply: (c, v) => {
      c.serviceNodePortRange = parsed('service-node-port-range', v, parsePortRange);
    },
  },
  {
    name: 'controllers',
    group: 'controllers',
    default: '*',
    help:
      "Controllers the server runs, in kube-controller-manager's syntax: '*' enables all, 'foo' enables foo, '-foo' disables foo; a list without '*' enables only what it names. Unless noted below, a controller runs in one process per storage at a time: the holder of the kube-system/capstan-controller-manager Lease. When kube-controller-manager runs against Capstan, disable here each controller it runs too, so that each runs once (with all of them: --controllers=" +
      KNOWN_CONTROLLER_NAMES.map((c) => `-${c.aliases[0] ?? c.name}`).join(',') +
      ').',
    values: () => KNOWN_CONTROLLER_NAMES.map((c) => ({ value: c.name, help: `${c.help} Alias${c.aliases.length > 1 ? 'es' : ''}: ${c.aliases.join(', ')}.` })),
    apply: (c, v) => {
      const names = listFlag(v);
      parsed('controllers', v, () => validateControllerList(names));
      c.controllers = names;
    },
  },
  {
    name: 'enable-admission-plugins',
    group: 'admission',
    default: '',
    help: 'Admission plugins to run besides kube-apiserver\'s defaults (comma-separated kube plugin names). Enabled plugins run in kube\'s order whatever the order here. Naming a plugin Capstan does not have stops the start (admission plugin "NAME" is not supported by Capstan).',
    values: admissionPluginValues,
    apply: (c, v) => {
      c.enableAdmissionPlugins = listFlag(v);
    },
  },
  {
    name: 'disable-admission-plugins',
    group: 'admission',
    default: '',
    help: "Admission plugins to turn off, even if they are on by default (comma-separated kube plugin names; any of kube's names is accepted, also those Capstan does not have).",
    apply: (c, v) => {
      c.disableAdmissionPlugins = listFlag(v);
    },
  },
  {
    name: 'log-level',
    group: 'logging',
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
    group: 'logging',
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
  for (const f of FLAGS) {
    lines.push(`      --${f.name}${f.default !== '' ? ` (default "${f.default}")` : ''}`, `          ${f.help}`);
    for (const v of f.values?.() ?? []) lines.push(`            ${v.value}: ${v.help}`);
  }
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
