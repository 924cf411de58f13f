/**
 * cr-create: creates of a custom resource whose CRD has a 30-field schema, once without rules and
 * once with 3 `x-kubernetes-validations` CEL rules (on the spec, a list and a string), each CRD in a
 * group of its own (deleted afterwards, with its resources) and the resources in a scratch
 * namespace. Rows report throughput and latency; the note under them is what the rules cost.
 */
import type { Endpoint } from './endpoint.js';
import { withEndpoint } from './endpoint.js';
import { p50p99 } from './fixtures.js';
import { runPool, type HttpClient } from './http-client.js';
import { metric, type OperationRow, type ScenarioResult } from './metrics.js';
import type { BenchOptions } from './options.js';
import { log, sleep, type Scenario } from './scenario.js';
import { createScratchNamespace, deleteScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';

const PHASE_TIMEOUT_MS = 180_000;
const WARM_UP = 300;
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** The 30 spec fields: strings, integers, booleans, a list and a map, with bounds kube's cost checks accept. */
function specSchema(rules: boolean): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 10; i++) properties[`s${i}`] = { type: 'string', maxLength: 64 };
  for (let i = 0; i < 10; i++) properties[`n${i}`] = { type: 'integer', minimum: 0 };
  for (let i = 0; i < 7; i++) properties[`b${i}`] = { type: 'boolean' };
  properties.min = { type: 'integer' };
  properties.tags = { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 32 } };
  properties.name = { type: 'string', maxLength: 63 };
  const spec: Record<string, unknown> = { type: 'object', properties };
  if (rules) {
    spec['x-kubernetes-validations'] = [{ rule: 'self.min <= self.n0', message: 'min must not exceed n0' }];
    (properties.tags as Record<string, unknown>)['x-kubernetes-validations'] = [{ rule: 'self.all(t, t.size() > 0)', message: 'tags must not be empty' }];
    (properties.name as Record<string, unknown>)['x-kubernetes-validations'] = [
      { rule: "self.matches('^[a-z][-a-z0-9]*$')", messageExpression: "'name ' + self + ' is not a DNS label'" },
    ];
  }
  return spec;
}

function crd(group: string, rules: boolean): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `benchwidgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'benchwidgets', singular: 'benchwidget', kind: 'BenchWidget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: specSchema(rules) } } } }],
    },
  };
}

function body(group: string, name: string, i: number): string {
  const spec: Record<string, unknown> = { min: 1, name: `widget-${i}`, tags: ['a', 'b', 'c'] };
  for (let k = 0; k < 10; k++) spec[`s${k}`] = `value-${k}-${i}`;
  for (let k = 0; k < 10; k++) spec[`n${k}`] = k + 1;
  for (let k = 0; k < 7; k++) spec[`b${k}`] = k % 2 === 0;
  return JSON.stringify({ apiVersion: `${group}/v1`, kind: 'BenchWidget', metadata: { name }, spec });
}

async function waitServed(client: HttpClient, path: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await client.request('GET', path)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`${path} not served within 30 s`);
    await sleep(50);
  }
}

async function measure(
  e: Endpoint,
  client: HttpClient,
  rules: boolean,
  ns: string,
  run: string,
  options: BenchOptions,
): Promise<{ row: OperationRow; firstError?: string }> {
  const group = `bench-cel-${rules ? 'rules' : 'plain'}-${run}.example.com`;
  const created = await client.request('POST', CRD_PATH, { body: JSON.stringify(crd(group, rules)) });
  if (created.status !== 201) throw new Error(`CRD not created: HTTP ${created.status}: ${created.body.slice(0, 300)}`);
  const path = `/apis/${group}/v1/namespaces/${ns}/benchwidgets`;
  try {
    await waitServed(client, path);
    let firstError: string | undefined;
    const send = (prefix: string, count: number, onResult: (status: number, ms: number, text: string) => void): Promise<number> =>
      runPool(count, options.concurrency, performance.now() + PHASE_TIMEOUT_MS, async (i) => {
        try {
          const res = await client.request('POST', path, { body: body(group, `${prefix}-${i}`, i) });
          onResult(res.status, res.ms, res.status === 201 ? '' : res.body);
        } catch (err) {
          onResult(0, 0, err instanceof Error ? err.message : String(err));
        }
      });
    await send('warm', WARM_UP, (status, _ms, text) => {
      if (status !== 201) firstError ??= `HTTP ${status}: ${text.slice(0, 300)}`;
    });
    e.assertAlive();
    const latencies: number[] = [];
    let ok = 0;
    let failed = 0;
    const stopCpu = e.cpu.available() ? e.cpu.start() : undefined;
    const t0 = performance.now();
    await send('w', options.createOps, (status, ms, text) => {
      if (status === 201) {
        ok++;
        latencies.push(ms);
      } else {
        failed++;
        firstError ??= `HTTP ${status}: ${text.slice(0, 300)}`;
      }
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = stopCpu?.();
    const { p50, p99 } = p50p99(latencies);
    return {
      row: {
        operation: `custom resource create (30 fields, ${rules ? '3 CEL rules' : 'no rules'})`,
        opsPerSecond: ok / seconds,
        cpuMsPerOp: cpu !== undefined && ok > 0 ? cpu.totalMs / ok : null,
        p50Ms: p50,
        p99Ms: p99,
        ok,
        failed,
      },
      firstError,
    };
  } finally {
    await client.request('DELETE', `${CRD_PATH}/benchwidgets.${group}`);
  }
}

export const crCreateScenario: Scenario = {
  name: 'cr-create',
  title: 'cr-create: custom resource creates, 30-field schema, without and with 3 CEL rules (CRDs deleted afterwards)',
  async run(target, options) {
    return withEndpoint(target, options, async (e): Promise<ScenarioResult> => {
      const client = e.client(options.concurrency);
      const rows: OperationRow[] = [];
      const notes = [`${options.createOps} creates per row after ${WARM_UP} warm-up creates, ${options.concurrency} in flight; server CPU: ${e.cpuScope}`];
      const run = Date.now().toString(36);
      const ns = scratchNamespaceName('cr-create', run);
      try {
        await createScratchNamespace(client, ns);
        for (const rules of [false, true]) {
          log(`cr-create: ${options.createOps} creates ${rules ? 'with' : 'without'} CEL rules`);
          const { row, firstError } = await measure(e, client, rules, ns, run, options);
          rows.push(row);
          if (firstError !== undefined) notes.push(`first error: ${firstError}`);
        }
      } finally {
        const problem = await deleteScratchNamespace(client, ns, []);
        if (problem !== undefined) notes.push(problem);
        client.close();
      }
      const [plain, withRules] = rows;
      if (plain?.cpuMsPerOp != null && withRules?.cpuMsPerOp != null)
        notes.push(`3 CEL rules cost ${(withRules.cpuMsPerOp - plain.cpuMsPerOp).toFixed(3)} ms server CPU per create`);
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
        notes,
      };
    });
  },
};
