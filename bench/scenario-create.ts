/**
 * create: creates of a ~1 KiB ConfigMap, a realistic Deployment and a realistic Pod (manifests.ts),
 * each kind in a namespace of its own that is deleted (and waited for) after its row, so that a
 * shared server such as the reference kube-apiserver is left as it was found. Each row reports
 * throughput, server CPU per create (all the server's processes, from /proc) and latency. Under the
 * table: the CPU a Deployment or Pod create costs beyond a ConfigMap create on the same target,
 * which is what defaulting, validation and admission of a real object add.
 */
import type { Endpoint } from './endpoint.js';
import { withEndpoint } from './endpoint.js';
import { configMapBody, p50p99 } from './fixtures.js';
import { runPool, type HttpClient } from './http-client.js';
import { deploymentBody, podBody } from './manifests.js';
import { metric, type OperationRow, type ScenarioResult } from './metrics.js';
import type { BenchOptions } from './options.js';
import { log, sleep, type Scenario } from './scenario.js';
import { createScratchNamespace, deleteScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';

const PHASE_TIMEOUT_MS = 180_000;
const WARM_UP = 500;

export interface Kind {
  /** Row name prefix, e.g. "Deployment". */
  kind: string;
  /** Collection path in namespace `ns`. */
  path(ns: string): string;
  body(name: string, i: number, options: BenchOptions): string;
}

export const CREATE_KINDS: readonly Kind[] = [
  { kind: 'ConfigMap', path: (ns) => `/api/v1/namespaces/${ns}/configmaps`, body: (name, i, o) => configMapBody(name, o.payloadBytes, i) },
  { kind: 'Deployment', path: (ns) => `/apis/apps/v1/namespaces/${ns}/deployments`, body: (name) => deploymentBody(name) },
  { kind: 'Pod', path: (ns) => `/api/v1/namespaces/${ns}/pods`, body: (name) => podBody(name) },
];

/** Row name of a kind's create. */
export const createRowName = (kind: string): string => `${kind} create`;

export interface Created {
  row: OperationRow;
  firstError: string | undefined;
  /** Server CPU per command name during the measured creates, ms. */
  cpuByComm: Map<string, number> | undefined;
  /** Server CPU while idle before the creates, ms per second. */
  idleCpuMsPerSecond: number | null;
}

/** Creates `count` objects of `kind` in `ns` with `concurrency` in flight, measuring server CPU around them. */
export async function measureCreates(e: Endpoint, client: HttpClient, kind: Kind, ns: string, options: BenchOptions): Promise<Created> {
  const path = kind.path(ns);
  const send = async (prefix: string, count: number, onResult: (status: number, ms: number, body: string) => void): Promise<void> => {
    await runPool(count, options.concurrency, performance.now() + PHASE_TIMEOUT_MS, async (i) => {
      try {
        const res = await client.request('POST', path, { body: kind.body(`${prefix}-${i}`, i, options) });
        onResult(res.status, res.ms, res.status === 201 ? '' : res.body);
      } catch (err) {
        onResult(0, 0, err instanceof Error ? err.message : String(err));
      }
    });
  };
  let firstError: string | undefined;
  let warmFailed = 0;
  await send('warm', WARM_UP, (status, _ms, body) => {
    if (status !== 201) {
      warmFailed++;
      firstError ??= `HTTP ${status}: ${body.slice(0, 300)}`;
    }
  });
  if (warmFailed === WARM_UP) throw new Error(`every ${kind.kind} create failed during warm-up: ${firstError ?? ''}`);
  e.assertAlive();
  await sleep(300);
  let idleCpuMsPerSecond: number | null = null;
  if (e.cpu.available()) {
    const idle = e.cpu.start();
    await sleep(1000);
    idleCpuMsPerSecond = idle().totalMs;
  }
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  const stopCpu = e.cpu.available() ? e.cpu.start() : undefined;
  const t0 = performance.now();
  await send(kind.kind.toLowerCase(), options.createOps, (status, ms, body) => {
    if (status === 201) {
      ok++;
      latencies.push(ms);
    } else {
      failed++;
      firstError ??= `HTTP ${status}: ${body.slice(0, 300)}`;
    }
  });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = stopCpu?.();
  e.assertAlive();
  const { p50, p99 } = p50p99(latencies);
  return {
    row: {
      operation: createRowName(kind.kind),
      opsPerSecond: ok / seconds,
      cpuMsPerOp: cpu !== undefined && ok > 0 ? cpu.totalMs / ok : null,
      p50Ms: p50,
      p99Ms: p99,
      ok,
      failed,
    },
    firstError,
    cpuByComm: cpu?.byComm,
    idleCpuMsPerSecond,
  };
}

function formatByComm(byComm: Map<string, number>, ops: number): string {
  return [...byComm]
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([comm, ms]) => `${comm} ${(ms / ops).toFixed(2)}`)
    .join(', ');
}

export const createScenario: Scenario = {
  name: 'create',
  title: 'create: ConfigMap, Deployment and Pod creates (fresh namespace per kind, deleted afterwards)',
  async run(target, options) {
    return withEndpoint(target, options, async (e): Promise<ScenarioResult> => {
      const client = e.client(options.concurrency);
      const rows: OperationRow[] = [];
      const notes: string[] = [
        `${options.createOps} creates per kind after ${WARM_UP} warm-up creates, ${options.concurrency} in flight; server CPU: ${e.cpuScope}`,
      ];
      const problems: string[] = [];
      try {
        const run = Date.now().toString(36);
        for (const kind of CREATE_KINDS) {
          const ns = scratchNamespaceName(kind.kind, run);
          log(`create: ${options.createOps} ${kind.kind}s in ${ns}`);
          await createScratchNamespace(client, ns);
          let created: Created | undefined;
          try {
            created = await measureCreates(e, client, kind, ns, options);
          } finally {
            log(`create: deleting ${ns}`);
            const problem = await deleteScratchNamespace(client, ns, [kind.path(ns)]);
            if (problem !== undefined) problems.push(problem);
          }
          rows.push(created.row);
          if (created.firstError !== undefined) problems.push(`${kind.kind}: first error: ${created.firstError}`);
          if (created.cpuByComm !== undefined && created.row.ok > 0) {
            const idle = created.idleCpuMsPerSecond === null ? '' : `; idle before: ${created.idleCpuMsPerSecond.toFixed(0)} ms CPU/s`;
            notes.push(`${kind.kind}: CPU ms/op by process: ${formatByComm(created.cpuByComm, created.row.ok)}${idle}`);
          }
        }
      } finally {
        client.close();
      }
      return {
        metrics: [
          metric(
            'failed requests',
            rows.reduce((n, r) => n + r.failed, 0),
            'count',
            { goal: { op: '<', value: 1 } },
          ),
        ],
        operations: rows,
        notes: [...notes, ...problems.slice(0, 4)],
      };
    });
  },
  summarize(byTarget) {
    const lines: string[] = [];
    for (const kind of ['Deployment', 'Pod']) {
      const parts: string[] = [];
      for (const { target, result } of byTarget) {
        const cpu = (name: string): number | null | undefined => result.operations?.find((r) => r.operation === createRowName(name))?.cpuMsPerOp;
        const objectCpu = cpu(kind);
        const baseCpu = cpu('ConfigMap');
        if (objectCpu === null || objectCpu === undefined || baseCpu === null || baseCpu === undefined) continue;
        parts.push(`${target} ${(objectCpu - baseCpu).toFixed(2)}`);
      }
      if (parts.length > 0) lines.push(`validation + defaulting + admission cost, server CPU ms/op (${kind} create - ConfigMap create): ${parts.join(', ')}`);
    }
    return lines;
  },
};
