/**
 * `npm run bench:control-plane`: a whole control plane at the size of a real cluster. For each target
 * (Capstan on the embedded store, Capstan on Redis with 2 workers (or 1: `redis`), the reference kube-apiserver with
 * etcd) it starts scripts/control-plane.sh (kube-controller-manager, kube-scheduler and kwok with
 * their own identities and raised client rate limits), runs the workload (workload.ts) and prints,
 * side by side: each phase's time, pods scheduled per second, API call latency by kube's SLO classes
 * (from the server's own request-duration histogram), server CPU seconds and peak memory (server
 * plus Redis or etcd), and kube-controller-manager's stale-cache requeues.
 *
 *   node dist/bench/control-plane/main.js [--quick] [--targets memory,redis,redis-workers2,reference]
 *        [--nodes N] [--deployments N] [--replicas N] [--json FILE] [--server-args "A B"] [--keep]
 *
 * `--server-args` adds Capstan flags to every Capstan target (e.g. "--worker-write-sync-timeout=0").
 * `--keep` keeps each target's work directory (every component's log), as a failed run always does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpClient } from '../http-client.js';
import { cpuMeter } from '../proc-cpu.js';
import { treeMemory } from '../proc-memory.js';
import { PROJECT_ROOT, installCleanupHandlers, spawnRedis, trackProcessGroup, untrackProcessGroup, type RedisProcess } from '../processes.js';
import { alignColumns } from '../table.js';
import { readKubeconfig } from './kubeconfig-access.js';
import {
  countOf,
  parseRequestBuckets,
  parseRequestBucketsByCall,
  quantileOf,
  SLO_P99_SECONDS,
  subtractBuckets,
  type Buckets,
  type SloClass,
} from './request-latency.js';
import { parseRejections, rejectionsBetween, type Rejections } from './rejections.js';
import { parseQueueWaitBuckets, parseRedisCommandBuckets } from './time-spent.js';
import { runWorkload, type PhaseResult, type WorkloadSize } from './workload.js';

const TARGETS = ['memory', 'redis', 'redis-workers2', 'reference'] as const;
type Target = (typeof TARGETS)[number];
/** The targets run when `--targets` is not given (`redis`, one worker, only when asked for). */
const DEFAULT_TARGETS: readonly Target[] = ['memory', 'redis-workers2', 'reference'];

/**
 * The components' client rate limits, raised (as kube's scalability tests raise them) so that the
 * server is what is measured; and leader-election deadlines long enough that a busy two-core host
 * does not make a component give up its lease (and exit) in the middle of a run.
 */
const COMPONENT_ARGS = '--kube-api-qps=500 --kube-api-burst=1000 --leader-elect-lease-duration=60s --leader-elect-renew-deadline=40s';
/**
 * kwok's parallelism, raised (from its default of 4) so that one kwok acts for its nodes as that
 * many kubelets would, each renewing its own Lease and reporting its own pods: with 4 Lease
 * renewals at a time, 1,000 nodes are renewed in time only while a renewal takes under 40 ms, and
 * at 30,000 pods on two cores a node's Lease then went 100 s unrenewed, kube-controller-manager
 * marked its pods not ready, and kwok (unlike a kubelet) never reported them ready again. A
 * configuration file is not defaulted by kwok 0.8, so the other options are kwok's defaults, spelt out.
 */
const KWOK_CONFIG = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  nodeLeaseParallelism: 100
  podPlayStageParallelism: 32
  nodePlayStageParallelism: 4
  podsOnNodeSyncParallelism: 1
  manageAllNodes: false
  enableDebuggingHandlers: true
  enableContentionProfiling: false
  enableProfilingHandler: true
  enablePodsOnNodeSyncListPager: true
  enablePodsOnNodeSyncStreamWatch: false
`;
const FULL: WorkloadSize = { nodes: 1000, deployments: 300, replicas: 100 };
const QUICK: WorkloadSize = { nodes: 50, deployments: 20, replicas: 50 };
const REQUEUE = /is not as new as written version/;
const SLO_CLASSES: SloClass[] = ['mutating', 'get', 'list namespace', 'list cluster'];

interface TargetResult {
  target: Target;
  phases: PhaseResult[];
  cpuSeconds: number;
  /** CPU seconds of the server's busiest process (with --workers: whether the load is spread). */
  busiestProcessCpuSeconds: number;
  peakMemoryBytes: number;
  requeues: number;
  latency: Record<string, { count: number; p50: number; p99: number }>;
  /** The calls with the highest p99 among those of the SLO classes (for example `mutating PATCH pods/status`). */
  slowestCalls: Array<{ call: string; count: number; p50: number; p99: number }>;
  /** Every call of the SLO classes with at least SLOWEST_CALL_MIN_COUNT requests, highest p99 first (in the JSON). */
  calls: Array<{ call: string; count: number; p50: number; p99: number }>;
  /** Requests answered 429 by API Priority and Fairness, by `level reason`. */
  rejected: Record<string, number>;
  /** Time the executed requests of each priority level waited in its queues (levels with at least SLOWEST_CALL_MIN_COUNT requests). */
  queueWait: Array<{ level: string; count: number; p50: number; p99: number }>;
  /** Capstan on Redis: its Redis commands and scripts (at least SLOWEST_CALL_MIN_COUNT calls), send to reply, most called first. */
  redisCommands: Array<{ command: string; count: number; p50: number; p99: number }>;
}

/** How many of the slowest calls a result lists, and how many requests a call needs to be listed. */
const SLOWEST_CALLS = 6;
const SLOWEST_CALL_MIN_COUNT = 50;

interface Options {
  size: WorkloadSize;
  targets: Target[];
  json: string | undefined;
  serverArgs: string[];
  /** Keep every target's work directory (the components' and the server's logs), not only a failed one's. */
  keep: boolean;
}

function parseArgs(argv: string[]): Options {
  let size = { ...FULL };
  let targets: Target[] = [...DEFAULT_TARGETS];
  let json: string | undefined;
  const overrides: Partial<WorkloadSize> = {};
  let serverArgs: string[] = [];
  let keep = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--quick') size = { ...QUICK };
    else if (a === '--targets') {
      targets = value()
        .split(',')
        .map((t) => {
          if (!(TARGETS as readonly string[]).includes(t)) throw new Error(`unknown target ${t} (${TARGETS.join(', ')})`);
          return t as Target;
        });
    } else if (a === '--nodes') overrides.nodes = Number(value());
    else if (a === '--deployments') overrides.deployments = Number(value());
    else if (a === '--replicas') overrides.replicas = Number(value());
    else if (a === '--json') json = value();
    else if (a === '--keep') keep = true;
    else if (a === '--server-args')
      serverArgs = value()
        .split(' ')
        .filter((x) => x !== '');
    else throw new Error(`unknown argument ${a}`);
  }
  return { size: { ...size, ...overrides }, targets, json, serverArgs, keep };
}

/** Processes whose command line mentions MARK and whose command name is one of COMMS. */
function processesMentioning(mark: string, comms: readonly string[]): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const comm = readFileSync(`/proc/${e}/comm`, 'utf8').trim();
      if (!comms.includes(comm)) continue;
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(mark)) out.push(Number(e));
    } catch {
      // gone while scanning
    }
  }
  return out;
}

interface ControlPlane {
  kubeconfig: string;
  /** Rejects when control-plane.sh exits (a component died: it stops the others). */
  exited: Promise<never>;
  serverPids: () => number[];
  kcmLog: string;
  stop(): Promise<void>;
}

async function startControlPlane(target: Target, work: string, redis: RedisProcess | undefined, serverArgs: string[]): Promise<ControlPlane> {
  const args = [join(PROJECT_ROOT, 'scripts', 'control-plane.sh'), '--port', '0', '--nodes', '0', '--work-dir', work];
  if (target === 'reference') args.push('--server', 'reference');
  const capstanArgs = redis === undefined ? [] : ['--storage=redis', `--redis-url=${redis.url}`, '--workers', target === 'redis-workers2' ? '2' : '1'];
  if (target !== 'reference') capstanArgs.push(...serverArgs);
  if (capstanArgs.length > 0) args.push('--', ...capstanArgs);
  const kwokConfig = join(work, 'kwok-parallelism.yaml');
  writeFileSync(kwokConfig, KWOK_CONFIG);
  const env = { ...process.env, KCM_ARGS: COMPONENT_ARGS, SCHEDULER_ARGS: COMPONENT_ARGS, KWOK_ARGS: `--cidr=10.0.0.0/8 --config ${kwokConfig}` };
  const child: ChildProcess = spawn('bash', args, { cwd: PROJECT_ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pgid = child.pid ?? 0;
  trackProcessGroup(pgid);
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  const kubeconfig = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`control plane not ready within 300 s:\n${stderr}`)), 300_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /control-plane: ready KUBECONFIG=(\S+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`control-plane.sh exited (${code}):\n${stderr}`));
    });
  });
  let serverPids: () => number[];
  if (target === 'reference') {
    const upLog = readFileSync(join(work, 'kube-up.log'), 'utf8');
    const dir = /kube-up: dir ([^,\s]+)/.exec(upLog)?.[1];
    if (dir === undefined) throw new Error('kube-up.log names no directory');
    serverPids = () => processesMentioning(dir, ['kube-apiserver', 'etcd']);
  } else {
    const mark = join(work, 'pki');
    serverPids = () => [...processesMentioning(mark, ['node', 'MainThread']), ...(redis !== undefined ? [redis.pid] : [])];
  }
  const exited = new Promise<never>((_, reject) => {
    const fail = (): void => reject(new Error(`a component of the control plane exited; logs in ${work}:\n${stderr}`));
    if (child.exitCode !== null) fail();
    else child.once('exit', fail);
  });
  exited.catch(() => undefined);
  return {
    kubeconfig,
    exited,
    serverPids,
    kcmLog: join(work, 'kube-controller-manager.log'),
    stop: async () => {
      const gone = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
      try {
        process.kill(-pgid, 'SIGTERM');
      } catch {
        // already gone
      }
      await Promise.race([gone, new Promise((r) => setTimeout(r, 20_000))]);
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // stopped
      }
      untrackProcessGroup(pgid);
    },
  };
}

const requeuesIn = (log: string): number =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => REQUEUE.test(l)).length
    : 0;

/** The request-duration buckets by SLO class and by call, the APF rejections and the APF queue waits by level. */
async function scrape(http: HttpClient): Promise<{ byClass: Buckets; byCall: Buckets; rejected: Rejections; queueWait: Buckets; redis: Buckets }> {
  const res = await http.request('GET', '/metrics', { timeoutMs: 60_000 });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  return {
    byClass: parseRequestBuckets(res.body),
    byCall: parseRequestBucketsByCall(res.body),
    rejected: parseRejections(res.body),
    queueWait: parseQueueWaitBuckets(res.body),
    redis: parseRedisCommandBuckets(res.body),
  };
}

async function runTarget(target: Target, size: WorkloadSize, serverArgs: string[], keep: boolean): Promise<TargetResult> {
  const work = mkdtempSync(join(tmpdir(), `capstan-cp-scale-${target}-`));
  const redis = target === 'redis' || target === 'redis-workers2' ? await spawnRedis({ fsyncEveryWrite: true }) : undefined;
  const log = (line: string): void => void process.stderr.write(`  [${target}] ${line}\n`);
  let plane: ControlPlane | undefined;
  let succeeded = false;
  try {
    plane = await startControlPlane(target, work, redis, serverArgs);
    const cp = plane;
    const { server, access } = readKubeconfig(cp.kubeconfig);
    const http = new HttpClient(server, 4, access);
    const before = await scrape(http);
    const requeuesBefore = requeuesIn(cp.kcmLog);
    const stopwatch = cpuMeter(cp.serverPids).start();
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, treeMemory(cp.serverPids()).rss)), 1000);
    let phases: PhaseResult[];
    try {
      phases = await Promise.race([runWorkload(server, access, size, log), cp.exited]);
    } finally {
      clearInterval(sampler);
    }
    const cpu = stopwatch();
    const cpuSeconds = cpu.totalMs / 1000;
    const busiestProcessCpuSeconds = Math.max(0, ...cpu.byPid.values()) / 1000;
    const after = await scrape(http);
    http.close();
    const delta = subtractBuckets(after.byClass, before.byClass);
    const latency: TargetResult['latency'] = {};
    for (const cls of SLO_CLASSES) {
      const series = delta.get(cls);
      if (series !== undefined) latency[cls] = { count: countOf(series), p50: quantileOf(series, 0.5), p99: quantileOf(series, 0.99) };
    }
    const calls = [...subtractBuckets(after.byCall, before.byCall)]
      .filter(([, series]) => countOf(series) >= SLOWEST_CALL_MIN_COUNT)
      .map(([call, series]) => ({ call, count: countOf(series), p50: quantileOf(series, 0.5), p99: quantileOf(series, 0.99) }))
      .sort((a, b) => b.p99 - a.p99);
    const slowestCalls = calls.slice(0, SLOWEST_CALLS);
    succeeded = true;
    const requeues = requeuesIn(cp.kcmLog) - requeuesBefore;
    const rejected = Object.fromEntries(rejectionsBetween(before.rejected, after.rejected));
    const queueWait = [...subtractBuckets(after.queueWait, before.queueWait)]
      .filter(([, series]) => countOf(series) >= SLOWEST_CALL_MIN_COUNT)
      .map(([level, series]) => ({ level, count: countOf(series), p50: quantileOf(series, 0.5), p99: quantileOf(series, 0.99) }))
      .sort((a, b) => b.p99 - a.p99);
    const redisCommands = [...subtractBuckets(after.redis, before.redis)]
      .filter(([, series]) => countOf(series) >= SLOWEST_CALL_MIN_COUNT)
      .map(([command, series]) => ({ command, count: countOf(series), p50: quantileOf(series, 0.5), p99: quantileOf(series, 0.99) }))
      .sort((a, b) => b.count - a.count);
    return {
      target,
      phases,
      cpuSeconds,
      busiestProcessCpuSeconds,
      peakMemoryBytes: peak,
      requeues,
      latency,
      slowestCalls,
      calls,
      rejected,
      queueWait,
      redisCommands,
    };
  } finally {
    await plane?.stop();
    await redis?.stop();
    // The logs of a failed run (or with --keep) stay for a look.
    if (succeeded && !keep) rmSync(work, { recursive: true, force: true });
    else log(`kept ${work}`);
  }
}

function render(results: TargetResult[], size: WorkloadSize): string {
  const header = ['', ...results.map((r) => r.target)];
  const rows: string[][] = [];
  const phaseNames = results[0]?.phases.map((p) => p.name) ?? [];
  phaseNames.forEach((name, i) => {
    rows.push([`${name} (s)`, ...results.map((r) => r.phases[i]?.seconds.toFixed(1) ?? '-')]);
    if (results.some((r) => r.phases[i]?.podsScheduledPerSecond !== undefined)) {
      rows.push([`  pods scheduled/s`, ...results.map((r) => r.phases[i]?.podsScheduledPerSecond?.toFixed(0) ?? '-')]);
    }
  });
  for (const cls of SLO_CLASSES) {
    const ms = (s: number): string => (Number.isNaN(s) ? '-' : `${(s * 1000).toFixed(0)}`);
    rows.push([
      `${cls}: calls, p50 / p99 ms (SLO p99 ${SLO_P99_SECONDS[cls]} s)`,
      ...results.map((r) => {
        const l = r.latency[cls];
        return l === undefined ? '-' : `${l.count}, ${ms(l.p50)} / ${ms(l.p99)}`;
      }),
    ]);
  }
  rows.push(['server CPU (s)', ...results.map((r) => r.cpuSeconds.toFixed(1))]);
  rows.push(['  of it, its busiest process (s)', ...results.map((r) => r.busiestProcessCpuSeconds.toFixed(1))]);
  rows.push(['peak memory, server + store (MiB)', ...results.map((r) => (r.peakMemoryBytes / 1048576).toFixed(0))]);
  rows.push(['stale-cache requeues (kube-controller-manager)', ...results.map((r) => String(r.requeues))]);
  rows.push([
    'requests rejected by APF (429)',
    ...results.map((r) => {
      const byKey = Object.entries(r.rejected).sort((a, b) => b[1] - a[1]);
      const total = byKey.reduce((s, [, n]) => s + n, 0);
      return total === 0 ? '0' : `${total} (${byKey.map(([k, n]) => `${k} ${n}`).join(', ')})`;
    }),
  ]);
  const title = `control plane at scale: ${size.nodes} kwok nodes, ${size.deployments} Deployments x ${size.replicas} (${size.deployments * size.replicas} pods)`;
  const slowest = results.flatMap((r) => [
    `${r.target}: slowest calls by p99 (calls, p50 / p99 ms)`,
    ...r.slowestCalls.map((c) => `  ${c.call}: ${c.count}, ${(c.p50 * 1000).toFixed(0)} / ${(c.p99 * 1000).toFixed(0)}`),
    `${r.target}: APF queue wait of the requests that ran, by priority level (requests, p50 / p99 ms)`,
    ...r.queueWait.map((w) => `  ${w.level}: ${w.count}, ${(w.p50 * 1000).toFixed(1)} / ${(w.p99 * 1000).toFixed(1)}`),
    ...(r.redisCommands.length === 0
      ? []
      : [
          `${r.target}: Redis commands and scripts, send to reply (calls, p50 / p99 ms)`,
          ...r.redisCommands.map((c) => `  ${c.command}: ${c.count}, ${(c.p50 * 1000).toFixed(1)} / ${(c.p99 * 1000).toFixed(1)}`),
        ]),
  ]);
  return [title, ...alignColumns(header, rows, 1), ...slowest].join('\n');
}

async function main(): Promise<void> {
  const { size, targets, json, serverArgs, keep } = parseArgs(process.argv.slice(2));
  installCleanupHandlers();
  const bin = process.env.KUBE_BIN ?? join(homedir(), '.cache', 'kube-reference', 'bin');
  for (const b of ['kube-controller-manager', 'kube-scheduler', 'kwok', ...(targets.includes('reference') ? ['kube-apiserver', 'etcd'] : [])]) {
    if (!existsSync(join(bin, b))) throw new Error(`${join(bin, b)} is missing: build the reference with ../shared/reference/build.sh (or set KUBE_BIN)`);
  }
  const results: TargetResult[] = [];
  for (const target of targets) {
    process.stderr.write(`${target}:\n`);
    results.push(await runTarget(target, size, serverArgs, keep));
    // Each target's table as soon as it is done (a full-size target takes most of an hour).
    if (targets.length > 1) process.stderr.write(`${render(results.slice(-1), size)}\n`);
    if (json !== undefined) writeFileSync(json, JSON.stringify({ size, results }, null, 2));
  }
  const table = render(results, size);
  process.stdout.write(`${table}\n`);
  const reference = results.find((r) => r.target === 'reference');
  if (reference !== undefined) {
    const timeOf = (r: TargetResult): number => r.phases.reduce((s, p) => s + p.seconds, 0);
    for (const r of results) {
      if (r === reference) continue;
      process.stdout.write(
        `${r.target} / reference: time ${(timeOf(r) / timeOf(reference)).toFixed(2)}x (goal <= 0.5), server CPU ${(r.cpuSeconds / reference.cpuSeconds).toFixed(2)}x (goal <= 0.33)\n`,
      );
    }
  }
  if (json !== undefined) writeFileSync(json, JSON.stringify({ size, results }, null, 2));
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:control-plane: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
