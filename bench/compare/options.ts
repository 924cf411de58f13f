/**
 * Command-line options of the side-by-side comparison (`npm run bench -- --compare`). Every size has
 * a default for the full run and one for `--quick`; explicit flags override both.
 */
import { join } from 'node:path';
import { listOf, nonNegativeInt, parseUrlTarget, positiveInt, type BuiltinTargetName, type UrlTarget } from '../options.js';
import { PROJECT_ROOT } from '../processes.js';

export const COMPARE_TARGETS = ['memory', 'redis', 'redis-workers2', 'reference'] as const;
export type CompareTargetName = (typeof COMPARE_TARGETS)[number];

/** The parts of a target's measurement, in the order they run. */
export const COMPARE_PHASES = ['startup', 'fresh', 'verbs', 'list', 'watch', 'paired'] as const;
/** The phases run without --only: paired rounds start every target at once, so they are asked for. */
const DEFAULT_PHASES: readonly ComparePhase[] = ['startup', 'fresh', 'verbs', 'list', 'watch'];
export type ComparePhase = (typeof COMPARE_PHASES)[number];

/** How the reference column is obtained. */
export type ReferenceSource = { kind: 'kube-up'; dir: string; label: string; explicit: boolean } | { kind: 'url'; target: UrlTarget } | { kind: 'none' };

export interface CompareOptions {
  capstanTargets: BuiltinTargetName[];
  reference: ReferenceSource;
  phases: ComparePhase[];
  quick: boolean;
  /** Directory the HTML, SVG and JSON report is written to. */
  reportDir: string;
  /** Creates measured on a fresh server before any warm-up. */
  freshOps: number;
  warmupCreates: number;
  warmupGets: number;
  /** Updates, patches, applies and deletes of the warm-up (each), so every verb's code is compiled before it is measured. */
  warmupVerbs: number;
  /** Operations per measured verb. */
  ops: number;
  concurrency: number;
  payloadBytes: number;
  listObjects: number;
  /** Measured LISTs per encoding. */
  lists: number;
  watchers: number;
  writeRate: number;
  watchSeconds: number;
  watchThreads: number;
  serverNodeArgs: string[];
  /** Extra Capstan flags for every Capstan target (after the compare's own). */
  serverArgs: string[];
  /** Rounds of the paired phase. */
  pairedRounds: number;
  /** Each target's processes on core 0 and the client on the other cores while measured (`--pin`). */
  pin: boolean;
}

export const COMPARE_USAGE = `Usage: npm run bench -- --compare [options]   (or: npm run bench:compare -- [options])

Side by side, same client, same run: Capstan (memory; Redis 1 worker; Redis 2 workers; Redis with
appendonly yes + appendfsync always) and the reference kube-apiserver + etcd (started with
../shared/reference/kube-up.sh, KUBE_UP_CONTROLLERS=0, when it has been built), all over HTTPS with a
system:masters bearer token and --authorization-mode=RBAC. Per target: start to ready and idle RSS,
the first creates on the fresh server, a warm-up, then create, GET, update, merge patch, server-side
apply and delete; LIST of N ConfigMaps in JSON and protobuf; watch fan-out. Prints the tables and
writes an HTML report with charts (bench-report/index.html).

  --quick              a few minutes in all (smaller sizes)
  --targets a,b        of ${COMPARE_TARGETS.join(', ')} (default: all; reference skipped with a note when not built)
  --only a,b           phases: ${COMPARE_PHASES.join(', ')} (default: all but paired)
                       paired: every target running at once, measured in turn in rotating rounds
                       (the six verbs, over HTTP/1.1 and over one HTTP/2 connection as client-go
                       holds it); each figure is the median of a target's rounds, so the machine's
                       drift reaches every target alike
  --pin                each target's processes (Capstan's, Redis; kube-apiserver, etcd) run on core 0
                       from their start, and this client on the other cores while it measures
                       (taskset). Without it the client competes with the server for cores
  --report DIR         where index.html, the SVG charts and results.json go (default: bench-report)
  --reference-dir DIR  where kube-up.sh is (default: ../shared/reference)

Instead of starting the reference, compare with a running server:
  --url URL --token T [--url-label NAME] [--server-pgid N --server-comms kube-apiserver,etcd | --server-pids A,B]

Sizes (defaults full / quick):
  --fresh-ops N        creates on the fresh server (5000 / 5000)
  --warmup-creates N   warm-up creates (2000 / 2000)
  --warmup-gets N      warm-up GETs (4000 / 4000)
  --warmup-verbs N     warm-up updates, patches, applies, deletes each (500 / 300)
  --ops N              operations per measured verb (5000 / 2000)
  --concurrency N      requests in flight (64)
  --payload B          ConfigMap data bytes (1024)
  --list-objects N     ConfigMaps listed (10000 / 10000)
  --lists N            measured LISTs per encoding (30 / 20)
  --watchers W         watchers (1000)
  --rate R             writes per second during the fan-out (20)
  --duration D         seconds of writes during the fan-out (20 / 10)
  --watch-threads N    client worker threads holding the watchers (2)
  --rounds N           paired rounds (8 / 6); each is --ops requests of each verb per transport
  --server-node-args "A B"  extra node flags for Capstan, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
  --server-args "A B"  extra Capstan flags for every Capstan target, e.g. "--log-level=error"
  -h, --help
`;

const VALUE_FLAGS = new Set([
  '--targets',
  '--only',
  '--report',
  '--reference-dir',
  '--url',
  '--token',
  '--url-label',
  '--server-pgid',
  '--server-comms',
  '--server-pids',
  '--fresh-ops',
  '--warmup-creates',
  '--warmup-gets',
  '--warmup-verbs',
  '--ops',
  '--concurrency',
  '--payload',
  '--list-objects',
  '--lists',
  '--watchers',
  '--rate',
  '--duration',
  '--watch-threads',
  '--server-node-args',
  '--server-args',
  '--rounds',
]);

/** Parses the arguments after `--compare`; undefined when help was asked for. Throws on anything unknown. */
export function parseCompareArgs(argv: readonly string[]): CompareOptions | undefined {
  const flags = new Map<string, string>();
  let quick = false;
  let pin = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return undefined;
    if (arg === '--quick') {
      quick = true;
      continue;
    }
    if (arg === '--pin') {
      pin = true;
      continue;
    }
    if (arg === '--compare') continue;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    if (!VALUE_FLAGS.has(name)) throw new Error(`unknown option ${name} for --compare (see --compare --help)`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`${name} needs a value`);
    flags.set(name, value);
  }
  const int = (flag: string, full: number, short: number): number => (flags.has(flag) ? positiveInt(flag, flags.get(flag)) : quick ? short : full);
  const targets: CompareTargetName[] = flags.has('--targets') ? listOf('--targets', COMPARE_TARGETS, flags.get('--targets')) : [...COMPARE_TARGETS];
  const only: ComparePhase[] = flags.has('--only') ? listOf('--only', COMPARE_PHASES, flags.get('--only')) : [...DEFAULT_PHASES];
  const urlTarget = parseUrlTarget(flags);
  let reference: ReferenceSource = { kind: 'none' };
  if (urlTarget !== undefined) reference = { kind: 'url', target: urlTarget };
  else if (targets.includes('reference')) {
    reference = {
      kind: 'kube-up',
      dir: flags.get('--reference-dir') ?? join(PROJECT_ROOT, '..', 'shared', 'reference'),
      label: 'kube-apiserver',
      explicit: flags.has('--targets'),
    };
  }
  return {
    capstanTargets: targets.filter((t): t is BuiltinTargetName => t !== 'reference'),
    reference,
    phases: COMPARE_PHASES.filter((p) => only.includes(p)),
    quick,
    reportDir: flags.get('--report') ?? 'bench-report',
    freshOps: int('--fresh-ops', 5000, 5000),
    warmupCreates: int('--warmup-creates', 2000, 2000),
    warmupGets: int('--warmup-gets', 4000, 4000),
    warmupVerbs: int('--warmup-verbs', 500, 300),
    ops: int('--ops', 5000, 2000),
    concurrency: int('--concurrency', 64, 64),
    payloadBytes: flags.has('--payload') ? nonNegativeInt('--payload', flags.get('--payload')) : 1024,
    listObjects: int('--list-objects', 10_000, 10_000),
    lists: int('--lists', 30, 20),
    watchers: int('--watchers', 1000, 1000),
    writeRate: int('--rate', 20, 20),
    watchSeconds: int('--duration', 20, 10),
    watchThreads: int('--watch-threads', 2, 2),
    serverNodeArgs: (flags.get('--server-node-args') ?? '').split(' ').filter((a) => a !== ''),
    pairedRounds: int('--rounds', 8, 6),
    serverArgs: (flags.get('--server-args') ?? '').split(' ').filter((a) => a !== ''),
    pin,
  };
}
