/**
 * Command-line options of `npm run bench`. Every size and duration has a default for the full run
 * and a smaller one for `--quick`; explicit flags override both.
 */

export const SCENARIO_NAMES = ['startup', 'crud', 'list', 'memory', 'watch-fanout', 'watch-fanout-many', 'informer-start'] as const;
export type ScenarioName = typeof SCENARIO_NAMES[number];

export const TARGET_NAMES = ['memory', 'redis', 'redis-workers2'] as const;
export type TargetName = typeof TARGET_NAMES[number];

export interface BenchOptions {
  only: ScenarioName[];
  targets: TargetName[];
  quick: boolean;
  jsonFile: string | undefined;
  baselineFile: string | undefined;
  /** Restarts measured by `startup`. */
  startups: number;
  /** Operations per phase of `crud`. */
  crudOps: number;
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
  informerObjects: number;
  /** Size of the `data` payload of ConfigMaps, in bytes. */
  payloadBytes: number;
  /** The server is killed (and the scenario reported as aborted) above this resident size. */
  maxServerRssMb: number;
  /** Extra node flags for the server process, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/prof']. */
  serverNodeArgs: string[];
}

export const USAGE = `Usage: npm run bench -- [options]

Spawns capstan (node dist/src/main.js) and measures it over HTTP on 127.0.0.1.

Scenarios: ${SCENARIO_NAMES.join(', ')}
  --only a,b           run only these scenarios (default: all)
  --quick              shortened run (smaller sizes, watch-fanout for 10 s)
  --target T           one target: memory (default), redis, redis-workers2
  --targets a,b        several targets, printed side by side
  --json FILE          also write the results as JSON
  --baseline FILE      compare with a previous --json file (adds the change in %)

Sizes (defaults full / quick):
  --startups N         server starts for startup (5 / 3)
  --crud-ops N         creates, gets and updates each for crud (10000 / 2000)
  --concurrency N      concurrent requests for crud and setup (64)
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
  --informer-objects N objects for informer-start (10000 / 2000)
  --payload B          ConfigMap data bytes (1024)
  --max-server-rss-mb N  kill the server above this RSS (6144)
  --server-node-args "A B"  extra node flags for the server, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
  -h, --help
`;

function positiveInt(flag: string, v: string | undefined): number {
  if (v === undefined || !/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${flag} needs a positive integer, got ${String(v)}`);
  return Number(v);
}

function nonNegativeInt(flag: string, v: string | undefined): number {
  if (v === undefined || !/^\d+$/.test(v)) throw new Error(`${flag} needs a non-negative integer, got ${String(v)}`);
  return Number(v);
}

function oneOf<T extends string>(flag: string, allowed: readonly T[], v: string): T {
  const found = allowed.find((a) => a === v);
  if (found === undefined) throw new Error(`${flag}: unknown value "${v}" (choose from ${allowed.join(', ')})`);
  return found;
}

function listOf<T extends string>(flag: string, allowed: readonly T[], v: string | undefined): T[] {
  if (v === undefined) throw new Error(`${flag} needs a value`);
  const items = v.split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => oneOf(flag, allowed, s));
  if (items.length === 0) throw new Error(`${flag} needs at least one value`);
  return [...new Set(items)];
}

/** Parses argv (without node and script); returns undefined when help was asked for. */
export function parseBenchArgs(argv: readonly string[]): BenchOptions | undefined {
  const flags = new Map<string, string>();
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
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
  const known = new Set(['--only', '--target', '--targets', '--json', '--baseline', '--startups', '--crud-ops', '--concurrency',
    '--list-objects', '--objects', '--watchers', '--rate', '--many-watchers', '--many-rate', '--duration', '--watch-payload', '--watch-threads', '--informers',
    '--informer-objects', '--payload', '--max-server-rss-mb', '--memory-concurrency', '--server-node-args']);
  for (const name of flags.keys()) if (!known.has(name)) throw new Error(`unknown option ${name} (see --help)`);
  if (flags.has('--target') && flags.has('--targets')) throw new Error('use either --target or --targets');

  const int = (flag: string, full: number, short: number): number => (flags.has(flag) ? positiveInt(flag, flags.get(flag)) : quick ? short : full);
  const only = flags.has('--only') ? listOf('--only', SCENARIO_NAMES, flags.get('--only')) : [...SCENARIO_NAMES];
  const targetFlag = flags.get('--targets') ?? flags.get('--target');
  const targets = targetFlag !== undefined ? listOf(flags.has('--targets') ? '--targets' : '--target', TARGET_NAMES, targetFlag) : ['memory' as const];
  if (flags.has('--target') && targets.length > 1) throw new Error('--target takes one target; use --targets for several');
  return {
    only: SCENARIO_NAMES.filter((s) => only.includes(s)),
    targets,
    quick,
    jsonFile: flags.get('--json'),
    baselineFile: flags.get('--baseline'),
    startups: int('--startups', 5, 3),
    crudOps: int('--crud-ops', 10_000, 2_000),
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
    informerObjects: int('--informer-objects', 10_000, 2_000),
    payloadBytes: flags.has('--payload') ? nonNegativeInt('--payload', flags.get('--payload')) : 1024,
    maxServerRssMb: int('--max-server-rss-mb', 6144, 6144),
    serverNodeArgs: (flags.get('--server-node-args') ?? '').split(' ').filter((a) => a !== ''),
  };
}
