/**
 * crd-ready: how soon a new CustomResourceDefinition serves its custom resources. For each of
 * several CRDs (one version, a small schema): CRD create -> the first custom resource created
 * (201), and -> served by every worker (4 consecutive GETs on fresh connections answer 200; the
 * primary hands connections to workers in turn). Polled every 5 ms, each on a fresh connection.
 */
import { request } from 'node:http';
import { median } from './stats.js';
import { metric } from './metrics.js';
import { sleep, withTarget, type Scenario } from './scenario.js';

const POLL_MS = 5;
const TIMEOUT_MS = 30_000;

/** One request on a fresh connection (so any worker may answer); resolves with the status, 0 on failure. */
function fresh(port: number, method: string, path: string, body?: string): Promise<number> {
  return new Promise((resolve) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = request({ host: '127.0.0.1', port, path, method, headers, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', () => resolve(0));
    });
    req.setTimeout(5_000, () => req.destroy());
    req.once('error', () => resolve(0));
    req.end(body);
  });
}

function crdBody(group: string): string {
  const schema = {
    type: 'object',
    properties: { spec: { type: 'object', properties: { size: { type: 'string' }, replicas: { type: 'integer', minimum: 0 } } }, status: { type: 'object' } },
  };
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, subresources: { status: {} } }],
    },
  });
}

/** Polls CHECK every POLL_MS until it holds; resolves with the ms since START. */
async function until(start: number, what: string, check: () => Promise<boolean>): Promise<number> {
  for (;;) {
    if (await check()) return performance.now() - start;
    if (performance.now() - start > TIMEOUT_MS) throw new Error(`${what}: not within ${TIMEOUT_MS} ms`);
    await sleep(POLL_MS);
  }
}

export const crdReadyScenario: Scenario = {
  name: 'crd-ready',
  title: 'crd-ready: CRD created -> first custom resource served (poll every 5 ms, fresh connections)',
  async run(name, options) {
    const count = options.quick ? 5 : 20;
    return withTarget(name, options, async (t) => {
      const port = t.server.port;
      const firstCreate: number[] = [];
      const everyWorker: number[] = [];
      for (let i = 0; i < count; i++) {
        const group = `bench${i}-${Date.now().toString(36)}.example.com`;
        const start = performance.now();
        const created = await fresh(port, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crdBody(group));
        if (created !== 201) throw new Error(`CRD create answered ${created}`);
        const widgets = `/apis/${group}/v1/namespaces/default/widgets`;
        const widget = JSON.stringify({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w' }, spec: { size: 'L', replicas: 1 } });
        firstCreate.push(await until(start, 'first custom resource', async () => (await fresh(port, 'POST', widgets, widget)) === 201));
        let streak = 0;
        everyWorker.push(
          await until(start, 'served by every worker', async () => {
            streak = (await fresh(port, 'GET', widgets)) === 200 ? streak + 1 : 0;
            return streak >= 4;
          }),
        );
        t.assertAlive();
      }
      return {
        metrics: [
          metric('CRD create -> first CR created, median', median(firstCreate), 'ms', { goal: { op: '<', value: 1000 } }),
          metric('CRD create -> first CR created, max', Math.max(...firstCreate), 'ms'),
          metric('CRD create -> served by every worker, median', median(everyWorker), 'ms', { goal: { op: '<', value: 1000 } }),
          metric('CRD create -> served by every worker, max', Math.max(...everyWorker), 'ms'),
        ],
        notes: [`${count} CRDs, one after another`],
      };
    });
  },
};
