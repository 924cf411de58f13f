/**
 * apply: server-side apply of Deployments beside plain updates, with the server CPU each phase
 * spent per request: creates by apply, steady-state re-applies of the same configuration (no
 * change, nothing stored), re-applies that change the replicas, and PUT updates of the same
 * objects (their managedFields updated too), so that the cost of computing managedFields shows
 * beside the update rate. Runs in a scratch namespace deleted afterwards (works with --url).
 */
import { withEndpoint } from './endpoint.js';
import { metric } from './metrics.js';
import { log, type Scenario } from './scenario.js';
import { operationRow, phaseMetrics, timedPhase, withCpu } from './scenario-crud.js';
import { createScratchNamespace, deleteScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';

/** A Deployment's applied configuration (JSON is YAML) with `replicas`. */
function deployment(name: string, ns: string, replicas: number): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels: { app: name, tier: 'bench' } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'nginx:1.27',
              ports: [{ containerPort: 80, protocol: 'TCP' }],
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
              resources: { requests: { cpu: '100m', memory: '64Mi' } },
            },
          ],
        },
      },
    },
  });
}

export const applyScenario: Scenario = {
  name: 'apply',
  title: 'apply: Deployment server-side apply (create, steady-state re-apply, change) beside PUT updates',
  async run(target, options) {
    return withEndpoint(target, options, async (t) => {
      const client = t.client(options.concurrency);
      const ns = scratchNamespaceName('apply');
      const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
      const applyHeaders = { 'content-type': 'application/apply-patch+yaml' };
      let cleanedUp = false;
      try {
        const n = options.crudOps;
        const c = options.concurrency;
        await createScratchNamespace(client, ns);
        const apply = (prefix: string, expect: number, replicas: (i: number) => number) =>
          timedPhase(n, c, expect, (i) =>
            client.request('PATCH', `${path}/${prefix}-${i}?fieldManager=bench`, {
              body: deployment(`${prefix}-${i}`, ns, replicas(i)),
              headers: applyHeaders,
            }),
          );
        // Warm-up so the JIT and the connection pool are not part of the numbers.
        await apply('warm', 201, () => 1);
        log(`apply: ${n} creates by apply`);
        const creates = await withCpu(t.cpu, () => apply('d', 201, () => 1));
        t.assertAlive();
        log(`apply: ${n} steady-state re-applies`);
        const reapplies = await withCpu(t.cpu, () => apply('d', 200, () => 1));
        t.assertAlive();
        log(`apply: ${n} re-applies changing replicas`);
        const changes = await withCpu(t.cpu, () => apply('d', 200, () => 2));
        t.assertAlive();
        log(`apply: ${n} PUT updates`);
        const updates = await withCpu(t.cpu, () =>
          timedPhase(n, c, 200, (i) => client.request('PUT', `${path}/d-${i}?fieldManager=updater`, { body: deployment(`d-${i}`, ns, 3 + (i % 2)) })),
        );
        t.assertAlive();
        log(`apply: deleting ${ns}`);
        const cleanupProblem = await deleteScratchNamespace(client, ns, [path]);
        cleanedUp = true;
        const phases = [creates, reapplies, changes, updates];
        const errors = phases.map((p) => p.firstError).filter((e): e is string => e !== undefined);
        if (cleanupProblem !== undefined) errors.push(cleanupProblem);
        return {
          metrics: [
            ...phaseMetrics('apply create', creates),
            ...phaseMetrics('re-apply (no change)', reapplies),
            ...phaseMetrics('re-apply (change)', changes),
            ...phaseMetrics('update', updates),
            metric(
              'failed requests',
              phases.reduce((s, p) => s + p.failed, 0),
              'count',
              { goal: { op: '<', value: 1 } },
            ),
          ],
          operations: [
            operationRow('Deployment apply (create)', creates),
            operationRow('Deployment re-apply (no change)', reapplies),
            operationRow('Deployment re-apply (replicas)', changes),
            operationRow('Deployment update (PUT)', updates),
          ],
          notes: [
            `${n} ops per phase, ${c} in flight, after ${n} warm-up applies; server CPU: ${t.cpuScope}`,
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
