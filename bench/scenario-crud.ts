/**
 * crud: creates, GETs and PUT updates of ~1 KiB ConfigMaps with a fixed number of requests in flight,
 * with the server CPU (all its processes) each phase spent per request. Runs in a scratch namespace
 * that is deleted afterwards, so it can also measure a shared server given by --url.
 */
import { withEndpoint } from './endpoint.js';
import { bulkCreate, configMapBody, configMapsPath, p50p99 } from './fixtures.js';
import { runPool } from './http-client.js';
import { metric, type Metric, type OperationRow } from './metrics.js';
import type { CpuMeter } from './proc-cpu.js';
import { log, type Scenario } from './scenario.js';
import { createScratchNamespace, deleteScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';
import { median } from './stats.js';

const PHASE_TIMEOUT_MS = 120_000;

export interface Phase {
  ok: number;
  failed: number;
  seconds: number;
  latencies: number[];
  firstError: string | undefined;
  /** Server CPU during the phase, ms (undefined when not measured). */
  cpuMs?: number;
}

export function operationRow(operation: string, p: Phase): OperationRow {
  const { p50, p99 } = p50p99(p.latencies);
  return {
    operation,
    opsPerSecond: p.ok / p.seconds,
    cpuMsPerOp: p.cpuMs !== undefined && p.ok > 0 ? p.cpuMs / p.ok : null,
    p50Ms: p50,
    p99Ms: p99,
    ok: p.ok,
    failed: p.failed,
  };
}

/**
 * The phases of one row over several rounds merged: throughput and latencies over all of them,
 * server CPU per request the median of the rounds' (robust to a GC or a neighbour landing in one).
 */
export function mergedRounds(name: string, phases: readonly Phase[]): { row: OperationRow; firstError: string | undefined } {
  const merged: Phase = {
    ok: phases.reduce((n, p) => n + p.ok, 0),
    failed: phases.reduce((n, p) => n + p.failed, 0),
    seconds: phases.reduce((n, p) => n + p.seconds, 0),
    latencies: phases.flatMap((p) => p.latencies),
    firstError: phases.find((p) => p.firstError !== undefined)?.firstError,
  };
  const perRound = phases.filter((p) => p.cpuMs !== undefined && p.ok > 0).map((p) => (p.cpuMs ?? 0) / p.ok);
  return { row: { ...operationRow(name, merged), cpuMsPerOp: perRound.length > 0 ? median(perRound) : null }, firstError: merged.firstError };
}

/** Server CPU per request (µs) of row `a` minus row `b`; null when either is unmeasured. */
export function cpuDifferenceUs(rows: readonly OperationRow[], a: string, b: string): number | null {
  const x = rows.find((r) => r.operation === a)?.cpuMsPerOp;
  const y = rows.find((r) => r.operation === b)?.cpuMsPerOp;
  return x === null || x === undefined || y === null || y === undefined ? null : (x - y) * 1000;
}

/** The failed requests of all rows, a metric whose goal is none. */
export function failedRequestsMetric(rows: readonly OperationRow[]): Metric {
  return metric(
    'failed requests',
    rows.reduce((n, r) => n + r.failed, 0),
    'count',
    { goal: { op: '<', value: 1 } },
  );
}

/** Runs `phase` and adds the server CPU it took. */
export async function withCpu(cpu: CpuMeter, phase: () => Promise<Phase>): Promise<Phase> {
  const stop = cpu.available() ? cpu.start() : undefined;
  const p = await phase();
  const used = stop?.();
  return used !== undefined ? { ...p, cpuMs: used.totalMs } : p;
}

export function phaseMetrics(label: string, p: Phase): Metric[] {
  const { p50, p99 } = p50p99(p.latencies);
  return [metric(`${label}/s`, p.ok / p.seconds, 'ops/s', { higherIsBetter: true }), metric(`${label} p50`, p50, 'ms'), metric(`${label} p99`, p99, 'ms')];
}

export async function timedPhase(
  count: number,
  concurrency: number,
  expect: number,
  send: (i: number) => Promise<{ status: number; ms: number; body: string }>,
): Promise<Phase> {
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  let firstError: string | undefined;
  const t0 = performance.now();
  await runPool(count, concurrency, t0 + PHASE_TIMEOUT_MS, async (i) => {
    try {
      const res = await send(i);
      if (res.status === expect) {
        ok++;
        latencies.push(res.ms);
      } else {
        failed++;
        firstError ??= `HTTP ${res.status}: ${res.body.slice(0, 300)}`;
      }
    } catch (err) {
      failed++;
      firstError ??= err instanceof Error ? err.message : String(err);
    }
  });
  return { ok, failed, seconds: (performance.now() - t0) / 1000, latencies, firstError };
}

export const crudScenario: Scenario = {
  name: 'crud',
  title: 'crud: ConfigMap create / get / update (PUT with resourceVersion)',
  async run(target, options) {
    return withEndpoint(target, options, async (t) => {
      const client = t.client(options.concurrency);
      const ns = scratchNamespaceName('crud');
      const path = configMapsPath(ns);
      let cleanedUp = false;
      try {
        const n = options.crudOps;
        const c = options.concurrency;
        await createScratchNamespace(client, ns);
        // Warm-up so the JIT and the connection pool are not part of the numbers.
        await bulkCreate(client, { prefix: 'warm', count: 500, bytes: options.payloadBytes, concurrency: c, timeoutMs: 30_000, path });
        log(`crud: ${n} creates`);
        let resourceVersions: string[] = [];
        const creates = await withCpu(t.cpu, async () => {
          const created = await bulkCreate(client, {
            prefix: 'crud',
            count: n,
            bytes: options.payloadBytes,
            concurrency: c,
            timeoutMs: PHASE_TIMEOUT_MS,
            keepLatencies: true,
            path,
          });
          resourceVersions = created.resourceVersions;
          return { ok: created.created, failed: created.failed, seconds: created.seconds, latencies: created.latencies, firstError: created.firstError };
        });
        t.assertAlive();
        log(`crud: ${n} gets`);
        const gets = await withCpu(t.cpu, () => timedPhase(n, c, 200, (i) => client.request('GET', `${path}/crud-${i}`, { discardBody: true })));
        t.assertAlive();
        log(`crud: ${n} updates`);
        const updates = await withCpu(t.cpu, () =>
          timedPhase(n, c, 200, (i) => {
            const rv = resourceVersions[i];
            if (rv === undefined) return Promise.resolve({ status: 0, ms: 0, body: `crud-${i} was not created` });
            return client.request('PUT', `${path}/crud-${i}`, { body: configMapBody(`crud-${i}`, options.payloadBytes, i + 1, {}, rv, ns) });
          }),
        );
        t.assertAlive();
        log(`crud: deleting ${ns}`);
        const cleanupProblem = await deleteScratchNamespace(client, ns, [path]);
        cleanedUp = true;
        const errors = [creates, gets, updates].map((p) => p.firstError).filter((e): e is string => e !== undefined);
        if (cleanupProblem !== undefined) errors.push(cleanupProblem);
        return {
          metrics: [
            ...phaseMetrics('create', creates),
            ...phaseMetrics('get', gets),
            ...phaseMetrics('update', updates),
            metric('failed requests', creates.failed + gets.failed + updates.failed, 'count', { goal: { op: '<', value: 1 } }),
          ],
          operations: [operationRow('ConfigMap create', creates), operationRow('ConfigMap get', gets), operationRow('ConfigMap update', updates)],
          notes: [
            `${n} ops per phase, ${c} in flight, ${options.payloadBytes} B data per ConfigMap, after 500 warm-up creates; server CPU: ${t.cpuScope}`,
            ...errors.slice(0, 2).map((e) => `first error: ${e}`),
          ],
        };
      } catch (err) {
        if (!cleanedUp) await deleteScratchNamespace(client, ns, [path]);
        throw err;
      } finally {
        client.close();
      }
    });
  },
};
