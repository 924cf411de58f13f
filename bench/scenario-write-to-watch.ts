/**
 * write-to-watch: how long after a write's response its event reaches a watcher of the same server,
 * as a controller sees it (kube-controller-manager requeues a controller whose informer has not yet
 * seen its own write). One process writes ConfigMaps over HTTPS with a bearer token and holds a
 * JSON watch of their namespace, all on one HTTP/2 connection as client-go does (so a server with
 * several workers serves the writes and the watch in one of them); for each write it records (event arrival - response arrival):
 * negative when the event came first. A second watch of the namespace on another HTTP/2 connection
 * is timed the same way: with several workers, consecutive connections go to different workers, so
 * it sees the writes through another worker, as a controller whose informers and writes use two
 * connections does. Low load: one write at a time with a pause; high load: 16 in flight. Runs in a
 * scratch namespace deleted afterwards, so it can measure a server given by --url.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { configMapBody, configMapsPath } from './fixtures.js';
import { HttpClient } from './http-client.js';
import { Http2Session } from './http2-session.js';
import { metric, type Metric, type OperationRow } from './metrics.js';
import type { BenchOptions, TargetName } from './options.js';
import { cpuMeter, type CpuMeter } from './proc-cpu.js';
import { log, sleep, withTarget, type Scenario } from './scenario.js';
import { createScratchNamespace, deleteScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';
import { percentile } from './stats.js';
import { urlTargetPids } from './endpoint.js';
import { openWatchArrivalsOn } from './watch-arrivals.js';

/** Writes in flight in the high-load phase. */
const HIGH_CONCURRENCY = 16;
/** Pause between writes in the low-load phase. */
const LOW_PAUSE_MS = 10;
const EVENT_TIMEOUT_MS = 60_000;

interface Server {
  url: string;
  token: string;
  cpu: CpuMeter;
}

/** A bench-started target over HTTPS with a static token, or the --url target. */
async function withHttpsServer<T>(name: TargetName, options: BenchOptions, body: (s: Server) => Promise<T>): Promise<T> {
  if (name === 'url') {
    const target = options.urlTarget;
    if (target === undefined) throw new Error('target url needs --url');
    if (target.token === undefined) throw new Error('write-to-watch needs --token for the url target');
    return body({ url: target.url, token: target.token, cpu: cpuMeter(() => urlTargetPids(target)) });
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-w2w-'));
  const token = randomBytes(16).toString('hex');
  writeFileSync(join(dir, 'tokens.csv'), `${token},bench,bench-uid,system:masters\n`);
  try {
    return await withTarget(
      name,
      options,
      async (t) => {
        const url = t.server.secureUrl;
        if (url === undefined) throw new Error(`target ${name} serves no HTTPS port`);
        return body({ url, token, cpu: t.cpu });
      },
      ['--token-auth-file', join(dir, 'tokens.csv'), '--cert-dir', join(dir, 'pki')],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface PhaseResult {
  /** event arrival - response arrival, ms, per write, at the watch on the writer's connection. */
  gaps: number[];
  /** The same at the watch on the other connection. */
  otherGaps: number[];
  writes: number;
  seconds: number;
  cpuMs: number | undefined;
  missing: number;
}

async function phase(
  client: Http2Session,
  other: Http2Session,
  server: Server,
  ns: string,
  prefix: string,
  writes: number,
  concurrency: number,
  pauseMs: number,
  payload: number,
): Promise<PhaseResult> {
  const path = configMapsPath(ns);
  const start = await client.request('GET', `${path}?limit=1`);
  const listRv = (JSON.parse(start.body) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
  if (start.status !== 200 || listRv === undefined) throw new Error(`list ${path}: HTTP ${start.status}`);
  const watchPath = `${path}?watch=1&allowWatchBookmarks=true&resourceVersion=${listRv}`;
  const watch = await openWatchArrivalsOn(client, watchPath);
  const otherWatch = await openWatchArrivalsOn(other, watchPath);
  try {
    const responses = new Map<string, number>();
    const stopCpu = server.cpu.available() ? server.cpu.start() : undefined;
    const t0 = performance.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < writes) {
        const i = next++;
        const res = await client.request('POST', path, configMapBody(`${prefix}-${i}`, payload, i, {}, undefined, ns));
        const at = performance.now();
        if (res.status !== 201) throw new Error(`create ${prefix}-${i}: HTTP ${res.status}: ${res.body.slice(0, 200)}`);
        const rv = /"resourceVersion":"(\d+)"/.exec(res.body)?.[1];
        if (rv !== undefined) responses.set(rv, at);
        if (pauseMs > 0) await sleep(pauseMs);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - t0) / 1000;
    const versions = [...responses.keys()];
    const all = (await watch.waitFor(versions, EVENT_TIMEOUT_MS)) && (await otherWatch.waitFor(versions, EVENT_TIMEOUT_MS));
    const cpuMs = stopCpu?.()?.totalMs;
    const gaps: number[] = [];
    const otherGaps: number[] = [];
    let missing = 0;
    for (const [rv, at] of responses) {
      const arrived = watch.arrivals.get(rv);
      const otherArrived = otherWatch.arrivals.get(rv);
      if (arrived === undefined || otherArrived === undefined) missing++;
      if (arrived !== undefined) gaps.push(arrived - at);
      if (otherArrived !== undefined) otherGaps.push(otherArrived - at);
    }
    if (!all) log(`write-to-watch: ${missing} events did not arrive at both watches within ${EVENT_TIMEOUT_MS} ms`);
    return { gaps, otherGaps, writes: responses.size, seconds, cpuMs, missing };
  } finally {
    watch.close();
    otherWatch.close();
  }
}

function gapMetrics(label: string, gaps: number[]): Metric[] {
  const first = gaps.filter((g) => g <= 0).length;
  return [
    metric(`${label}: event after response p50`, gaps.length > 0 ? percentile(gaps, 0.5) : null, 'ms'),
    metric(`${label}: event after response p99`, gaps.length > 0 ? percentile(gaps, 0.99) : null, 'ms'),
    metric(`${label}: event before response`, gaps.length > 0 ? first / gaps.length : null, 'ratio', { higherIsBetter: true }),
  ];
}

function phaseMetrics(label: string, p: PhaseResult): Metric[] {
  return [
    ...gapMetrics(label, p.gaps),
    ...gapMetrics(`${label}, other connection`, p.otherGaps),
    metric(`${label}: events missing`, p.missing, 'count', { goal: { op: '<', value: 1 } }),
  ];
}

function row(operation: string, p: PhaseResult, gaps: number[]): OperationRow {
  return {
    operation,
    opsPerSecond: p.writes / p.seconds,
    cpuMsPerOp: p.cpuMs !== undefined && p.writes > 0 ? p.cpuMs / p.writes : null,
    p50Ms: gaps.length > 0 ? percentile(gaps, 0.5) : Number.NaN,
    p99Ms: gaps.length > 0 ? percentile(gaps, 0.99) : Number.NaN,
    ok: p.writes - p.missing,
    failed: p.missing,
  };
}

export const writeToWatchScenario: Scenario = {
  name: 'write-to-watch',
  title: "write-to-watch: a write's event at a watcher, relative to the write's response (HTTPS, negative: event first)",
  async run(target, options) {
    const low = options.quick ? 100 : 300;
    const high = options.quick ? 1000 : 3000;
    return withHttpsServer(target, options, async (server) => {
      const client = new HttpClient(server.url, HIGH_CONCURRENCY, { token: server.token, insecureTls: true });
      const session = await Http2Session.open(server.url, server.token);
      const other = await Http2Session.open(server.url, server.token);
      const ns = scratchNamespaceName('w2w');
      try {
        await createScratchNamespace(client, ns);
        log(`write-to-watch: ${low} writes one at a time`);
        const lowResult = await phase(session, other, server, ns, 'low', low, 1, LOW_PAUSE_MS, options.payloadBytes);
        log(`write-to-watch: ${high} writes, ${HIGH_CONCURRENCY} in flight`);
        const highResult = await phase(session, other, server, ns, 'high', high, HIGH_CONCURRENCY, 0, options.payloadBytes);
        return {
          metrics: [...phaseMetrics('low load', lowResult), ...phaseMetrics('high load', highResult)],
          operations: [
            row('event after response, 1 write at a time', lowResult, lowResult.gaps),
            row('the same at another connection, 1 write at a time', lowResult, lowResult.otherGaps),
            row(`event after response, ${HIGH_CONCURRENCY} in flight`, highResult, highResult.gaps),
            row(`the same at another connection, ${HIGH_CONCURRENCY} in flight`, highResult, highResult.otherGaps),
          ],
          notes: [
            `ConfigMap creates with ${options.payloadBytes} B data; p50/p99 columns are (event arrival - response arrival) at a JSON watch on the writer's HTTP/2 connection, and at one on another connection (another worker when there are several); ops/s and CPU ms/op are the writes'`,
          ],
        };
      } finally {
        await deleteScratchNamespace(client, ns, [configMapsPath(ns)]);
        session.close();
        other.close();
        client.close();
      }
    });
  },
};
