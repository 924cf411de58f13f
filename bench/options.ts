/**
 * Command-line options of `npm run bench`. Every size and duration has a default for the full run
 * and a smaller one for `--quick`; explicit flags override both.
 */

export const SCENARIO_NAMES = [
  'startup',
  'crud',
  'create',
  'apply',
  'list',
  'memory',
  'watch-fanout',
  'watch-fanout-many',
  'informer-start',
  'gc',
  'decode',
  'crd-ready',
  'webhook',
  'cr-create',
  'encodings',
  'access',
  'floor',
  'aggregator',
  'overload',
  'write-to-watch',
  'node-watches',
] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];
/** Scenarios that can measure a server given by URL (they clean up what they create). */
export const URL_SCENARIOS: readonly ScenarioName[] = ['crud', 'create', 'apply', 'webhook', 'cr-create', 'overload', 'write-to-watch', 'node-watches'];

export const TARGET_NAMES = ['memory', 'redis', 'redis-workers2', 'url'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];
/** The targets the benchmark starts itself (all but `url`). */
export type BuiltinTargetName = Exclude<TargetName, 'url'>;

/** A server the benchmark does not start: any Kubernetes API server, given by --url. */
export interface UrlTarget {
  url: string;
  /** Bearer token (--token); undefined sends no Authorization header. */
  token: string | undefined;
  /** Column name in the tables (--url-label). */
  label: string;
  /** Processes whose CPU counts as the server's (--server-pids). */
  pids: number[];
  /** Every process of this group counts as the server's (--server-pgid), rescanned at each reading. */
  pgid: number | undefined;
  /** When set, only processes with these command names count (--server-comms), e.g. kube-apiserver,etcd. */
  comms: string[] | undefined;
}

export interface BenchOptions {
  only: ScenarioName[];
  targets: TargetName[];
  /** The `url` target, when --url is given. */
  urlTarget: UrlTarget | undefined;
  quick: boolean;
  jsonFile: string | undefined;
  baselineFile: string | undefined;
  /** Restarts measured by `startup`. */
  startups: number;
  /** Operations per phase of `crud`. */
  crudOps: number;
  /** Creates per object kind of `create`. */
  createOps: number;
  /** Creates and GETs per row of `access` (--access-ops). */
  accessOps: number;
  /** Requests in flight in `access` (--access-concurrency). */
  accessConcurrency: number;
  /** Concurrent requests of `crud`, `list` setup and `informer-start` setup. */
  concurrency: number;
  /** ConfigMaps listed by `list`. */
  listObjects: number;
  /** ConfigMaps stored by `memory` (`--objects`). */
  memoryObjects: number;
  /** Concurrent creates of `memory`. */
  memoryConcurrency: number;
  watchers: number;
  writeRate: number;
  /** Watchers and write rate of `watch-fanout-many`. */
  manyWatchers: number;
  manyWriteRate: number;
  watchSeconds: number;
  /** Bytes of padding in each watch-fanout write (besides sequence number and timestamp). */
  watchPayload: number;
  /** Worker threads holding the watchers of `watch-fanout` and `informer-start`. */
  watchThreads: number;
  informers: number;
  /** Node watches (and nodes) of `node-watches`. */
  nodeWatches: number;
  informerObjects: number;
  /** Size of the `data` payload of ConfigMaps, in bytes. */
  payloadBytes: number;
  /** The server is killed (and the scenario reported as aborted) above this resident size. */
  maxServerRssMb: number;
  /** Extra node flags for the server process, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof']. */
  serverNodeArgs: string[];
  /** Extra Capstan flags for every server the bench starts, e.g. ['--worker-write-sync-timeout=0']. */
  serverArgs: string[];
}

export const USAGE = `Usage: npm run bench -- [options]

Spawns capstan (node --max-semi-space-size=64 dist/src/main.js, as npm start runs it) and measures it over HTTP on 127.0.0.1, or measures any
Kubernetes API server given by URL (for example the reference kube-apiserver).

Side by side with the reference kube-apiserver, every target over HTTPS + token + RBAC, with an HTML
report: npm run bench -- --compare [--quick]   (options: npm run bench -- --compare --help)

Scenarios: ${SCENARIO_NAMES.join(', ')}
  --only a,b           run only these scenarios (default: all; with only a url target: ${URL_SCENARIOS.join(', ')})
  --quick              shortened run (smaller sizes, watch-fanout for 10 s)
  --target T           one target: memory (default), redis, redis-workers2, url
  --targets a,b        several targets, printed side by side (e.g. memory,redis,url)

A server given by URL (target "url"; runs only the scenarios ${URL_SCENARIOS.join(', ')}):
  --url URL            e.g. https://127.0.0.1:6443 (a self-signed certificate is accepted)
  --token T            bearer token
  --url-label NAME     its column name (default: url)
  --server-pids A,B    processes whose CPU counts as the server's (kube-apiserver, etcd)
  --server-pgid N      all processes of this process group count (what kube-up.sh prints)
  --server-comms a,b   with --server-pgid: only these command names (e.g. kube-apiserver,etcd)
  --json FILE          also write the results as JSON
  --baseline FILE      compare with a previous --json file (adds the change in %)

Sizes (defaults full / quick):
  --startups N         server starts for startup (5 / 3)
  --crud-ops N         creates, gets and updates each for crud (10000 / 2000; 2000 / 1000 against --url)
  --create-ops N       creates per kind (ConfigMap, Deployment, Pod) for create, per row for webhook and cr-create (3000 / 1000)
  --concurrency N      concurrent requests for crud and setup (64)
  --access-ops N       creates and GETs per credential for access (5000 / 1000)
  --access-concurrency N  requests in flight for access and floor (16)
  --list-objects N     ConfigMaps for list (10000 / 10000)
  --objects N          ConfigMaps for memory (100000 / 20000)
  --memory-concurrency N  concurrent creates for memory (128)
  --watchers W         watchers for watch-fanout (1000)
  --rate R             writes per second for watch-fanout (200)
  --many-watchers W    watchers for watch-fanout-many (5000)
  --many-rate R        writes per second for watch-fanout-many (100)
  --duration D         seconds of writes for watch-fanout (60 / 10)
  --watch-payload B    padding bytes per watch-fanout write (256)
  --watch-threads N    client worker threads holding watchers (2)
  --informers N        watchers for informer-start (1000 / 1000)
  --node-watches N     nodes, each watching its pods, for node-watches (1000 / 500)
  --informer-objects N objects for informer-start (10000 / 2000)
  --payload B          ConfigMap data bytes (1024)
  --max-server-rss-mb N  kill the server above this RSS (6144)
  --server-node-args "A B"  extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
  --server-args "A B"  extra Capstan flags for every server the bench starts, e.g. "--worker-write-sync-timeout=0"
  -h, --help
`;

/** `v` as an integer >= 1; throws naming `flag` otherwise. */
export function positiveInt(flag: string, v: string | undefined): number {
  if (v === undefined || !/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${flag} needs a positive integer, got ${String(v)}`);
  return Number(v);
}

/** `v` as an integer >= 0; throws naming `flag` otherwise. */
export function nonNegativeInt(flag: string, v: string | undefined): number {
  if (v === undefined || !/^\d+$/.test(v)) throw new Error(`${flag} needs a non-negative integer, got ${String(v)}`);
  return Number(v);
}

function oneOf<T extends string>(flag: string, allowed: readonly T[], v: string): T {
  const found = allowed.find((a) => a === v);
  if (found === undefined) throw new Error(`${flag}: unknown value "${v}" (choose from ${allowed.join(', ')})`);
  return found;
}

/** A comma-separated list of values from `allowed` (duplicates removed); throws naming `flag` otherwise. */
export function listOf<T extends string>(flag: string, allowed: readonly T[], v: string | undefined): T[] {
  if (v === undefined) throw new Error(`${flag} needs a value`);
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => oneOf(flag, allowed, s));
  if (items.length === 0) throw new Error(`${flag} needs at least one value`);
  return [...new Set(items)];
}

/** The url target from --url, --token, --url-label, --server-pids, --server-pgid, --server-comms. */
export function parseUrlTarget(flags: ReadonlyMap<string, string>): UrlTarget | undefined {
  const url = flags.get('--url');
  const dependent = ['--token', '--url-label', '--server-pids', '--server-pgid', '--server-comms'].filter((f) => flags.has(f));
  if (url === undefined) {
    if (dependent.length > 0) throw new Error(`${dependent.join(', ')} ${dependent.length > 1 ? 'need' : 'needs'} --url`);
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`--url: not a URL: ${url}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new Error(`--url must be http or https, got ${url}`);
  const pidsFlag = flags.get('--server-pids');
  const pids =
    pidsFlag === undefined
      ? []
      : pidsFlag
          .split(',')
          .filter((p) => p.trim() !== '')
          .map((p) => positiveInt('--server-pids', p.trim()));
  const comms = flags
    .get('--server-comms')
    ?.split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '');
  if (comms !== undefined && !flags.has('--server-pgid')) throw new Error('--server-comms filters --server-pgid; give --server-pgid too');
  return {
    url: url.replace(/\/+$/, ''),
    token: flags.get('--token'),
    label: flags.get('--url-label') ?? 'url',
    pids,
    pgid: flags.has('--server-pgid') ? positiveInt('--server-pgid', flags.get('--server-pgid')) : undefined,
    comms,
  };
}

/** Parses argv (without node and script); returns undefined when help was asked for. */
export function parseBenchArgs(argv: readonly string[]): BenchOptions | undefined {
  const flags = new Map<string, string>();
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return undefined;
    if (arg === '--quick') {
      quick = true;
      continue;
    }
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else {
      value = argv[i + 1];
      i++;
    }
    if (value === undefined) throw new Error(`${name} needs a value`);
    flags.set(name, value);
  }
  const known = new Set([
    '--only',
    '--target',
    '--targets',
    '--json',
    '--baseline',
    '--startups',
    '--crud-ops',
    '--concurrency',
    '--list-objects',
    '--objects',
    '--watchers',
    '--rate',
    '--many-watchers',
    '--many-rate',
    '--duration',
    '--watch-payload',
    '--watch-threads',
    '--informers',
    '--node-watches',
    '--informer-objects',
    '--payload',
    '--max-server-rss-mb',
    '--memory-concurrency',
    '--server-node-args',
    '--server-args',
    '--create-ops',
    '--access-ops',
    '--access-concurrency',
    '--url',
    '--token',
    '--url-label',
    '--server-pids',
    '--server-pgid',
    '--server-comms',
  ]);
  for (const name of flags.keys()) if (!known.has(name)) throw new Error(`unknown option ${name} (see --help)`);
  if (flags.has('--target') && flags.has('--targets')) throw new Error('use either --target or --targets');

  const int = (flag: string, full: number, short: number): number => (flags.has(flag) ? positiveInt(flag, flags.get(flag)) : quick ? short : full);
  const targetFlag = flags.get('--targets') ?? flags.get('--target');
  const defaultTargets: TargetName[] = flags.has('--url') ? ['url'] : ['memory'];
  const targets = targetFlag !== undefined ? listOf(flags.has('--targets') ? '--targets' : '--target', TARGET_NAMES, targetFlag) : defaultTargets;
  if (flags.has('--target') && targets.length > 1) throw new Error('--target takes one target; use --targets for several');
  const urlTarget = parseUrlTarget(flags);
  if (targets.includes('url') && urlTarget === undefined) throw new Error('target url needs --url');
  const onlyUrl = targets.every((t) => t === 'url');
  const only = flags.has('--only') ? listOf('--only', SCENARIO_NAMES, flags.get('--only')) : onlyUrl ? [...URL_SCENARIOS] : [...SCENARIO_NAMES];
  return {
    only: SCENARIO_NAMES.filter((s) => only.includes(s)),
    targets,
    urlTarget,
    quick,
    jsonFile: flags.get('--json'),
    baselineFile: flags.get('--baseline'),
    startups: int('--startups', 5, 3),
    crudOps: int('--crud-ops', targets.includes('url') ? 2_000 : 10_000, targets.includes('url') ? 1_000 : 2_000),
    createOps: int('--create-ops', 3_000, 1_000),
    accessOps: int('--access-ops', 5_000, 1_000),
    accessConcurrency: int('--access-concurrency', 16, 16),
    concurrency: int('--concurrency', 64, 64),
    listObjects: int('--list-objects', 10_000, 10_000),
    memoryObjects: int('--objects', 100_000, 20_000),
    memoryConcurrency: int('--memory-concurrency', 128, 128),
    watchers: int('--watchers', 1000, 1000),
    writeRate: int('--rate', 200, 200),
    manyWatchers: int('--many-watchers', 5000, 5000),
    manyWriteRate: int('--many-rate', 100, 100),
    watchSeconds: int('--duration', 60, 10),
    watchPayload: flags.has('--watch-payload') ? nonNegativeInt('--watch-payload', flags.get('--watch-payload')) : 256,
    watchThreads: int('--watch-threads', 2, 2),
    informers: int('--informers', 1000, 1000),
    nodeWatches: int('--node-watches', 1000, 500),
    informerObjects: int('--informer-objects', 10_000, 2_000),
    payloadBytes: flags.has('--payload') ? nonNegativeInt('--payload', flags.get('--payload')) : 1024,
    maxServerRssMb: int('--max-server-rss-mb', 6144, 6144),
    serverNodeArgs: (flags.get('--server-node-args') ?? '').split(' ').filter((a) => a !== ''),
    serverArgs: (flags.get('--server-args') ?? '').split(' ').filter((a) => a !== ''),
  };
}
