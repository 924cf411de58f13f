/**
 * node-watches: what a pod write costs the server when every node watches its own pods, as each
 * kubelet (or kwok's simulated one) does with `fieldSelector=spec.nodeName=<node>`. P pods are
 * spread over W nodes; every pod's status is patched once with no watch open, then W node watches
 * are opened and every pod's status is patched once more. Each watch must get exactly one MODIFIED
 * event per pod of its node. Compared is the server CPU per patch without and with the watches
 * (delivery included), and from it the cost of one watch per change of the type.
 */
import { runPool, type HttpClient } from './http-client.js';
import { withEndpoint } from './endpoint.js';
import { metric } from './metrics.js';
import { operationRow, timedPhase, withCpu, type Phase } from './scenario-crud.js';
import { log, type Scenario } from './scenario.js';
import { createScratchNamespace, deleteScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';

const PODS_PER_NODE = 5;
const DELIVERY_TIMEOUT_MS = 120_000;

function nodeBody(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'app.kubernetes.io/part-of': 'bench' } } });
}

function boundPodBody(name: string, nodeName: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'node-watches' } },
    spec: { nodeName, containers: [{ name: 'main', image: 'registry.example.com/app:1.0' }] },
  });
}

/** Patches every pod's status once (the message names the round), with `concurrency` in flight. */
function patchRound(client: HttpClient, podsPath: string, pods: number, concurrency: number, round: string): Promise<Phase> {
  return timedPhase(pods, concurrency, 200, (i) =>
    client.request('PATCH', `${podsPath}/p-${i}/status`, {
      body: JSON.stringify({ status: { message: `${round} ${i}` } }),
      headers: { 'content-type': 'application/merge-patch+json' },
      discardBody: true,
    }),
  );
}

/** Creates `count` objects at `path` from `body(i)`; throws on the first failure. */
async function createAll(client: HttpClient, path: string, count: number, concurrency: number, body: (i: number) => string): Promise<void> {
  let failed = '';
  await runPool(count, concurrency, performance.now() + 300_000, async (i) => {
    const r = await client.request('POST', path, { body: body(i) });
    if (r.status !== 201) failed ||= `HTTP ${r.status}: ${r.body.slice(0, 300)}`;
  });
  if (failed !== '') throw new Error(`creating at ${path}: ${failed}`);
}

interface NodeWatch {
  lines: number;
  ended: boolean;
  close(): void;
}

export const nodeWatchesScenario: Scenario = {
  name: 'node-watches',
  title: 'node-watches: pod status patches while every node watches its own pods (fieldSelector=spec.nodeName)',
  async run(target, options) {
    return withEndpoint(target, options, async (t) => {
      const nodes = options.nodeWatches;
      const pods = nodes * PODS_PER_NODE;
      const c = options.concurrency;
      const client = t.client(c);
      const watchClient = t.client(nodes + 1);
      const run = Date.now().toString(36);
      const ns = scratchNamespaceName('node-watches', run);
      const podsPath = `/api/v1/namespaces/${ns}/pods`;
      const nodeName = (i: number): string => `bench-${run}-node-${i}`;
      const watches: NodeWatch[] = [];
      try {
        await createScratchNamespace(client, ns);
        log(`node-watches: ${nodes} nodes, ${pods} pods`);
        await createAll(client, '/api/v1/nodes', nodes, c, (i) => nodeBody(nodeName(i)));
        await createAll(client, podsPath, pods, c, (i) => boundPodBody(`p-${i}`, nodeName(i % nodes)));
        // Warm-up round, then the round without watches.
        await patchRound(client, podsPath, pods, c, 'warm');
        const alone = await withCpu(t.cpu, () => patchRound(client, podsPath, pods, c, 'alone'));
        t.assertAlive();

        const listed = await client.request('GET', `${podsPath}?limit=1`);
        const rv = (JSON.parse(listed.body) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
        log(`node-watches: opening ${nodes} node watches from ${rv}`);
        const t0 = performance.now();
        let linesSeen = 0;
        let allDelivered: () => void = () => undefined;
        const delivered = new Promise<void>((resolve) => (allDelivered = resolve));
        await runPool(nodes, 64, performance.now() + 120_000, async (i) => {
          const w: NodeWatch = { lines: 0, ended: false, close: () => undefined };
          watches[i] = w;
          const selector = encodeURIComponent(`spec.nodeName=${nodeName(i)}`);
          const opened = await watchClient.stream(
            `${podsPath}?watch=1&fieldSelector=${selector}&resourceVersion=${rv}&timeoutSeconds=600`,
            (chunk) => {
              let n = 0;
              for (let k = chunk.indexOf(10); k !== -1; k = chunk.indexOf(10, k + 1)) n++;
              w.lines += n;
              linesSeen += n;
              if (linesSeen >= pods) allDelivered();
            },
            () => (w.ended = true),
          );
          w.close = opened.close;
          if (opened.status !== 200) throw new Error(`watch of ${nodeName(i)}: HTTP ${opened.status}`);
        });
        if (watches.filter((w) => w !== undefined).length !== nodes) throw new Error('not every node watch opened');
        const openMs = performance.now() - t0;

        log(`node-watches: patching ${pods} pods under ${nodes} watches`);
        const stopCpu = t.cpu.available() ? t.cpu.start() : undefined;
        const started = performance.now();
        const watched = await patchRound(client, podsPath, pods, c, 'watched');
        const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), DELIVERY_TIMEOUT_MS).unref());
        const outcome = await Promise.race([delivered.then(() => 'delivered' as const), timeout]);
        const deliveryMs = performance.now() - started;
        const cpu = stopCpu?.();
        const withWatches: Phase = cpu !== undefined ? { ...watched, cpuMs: cpu.totalMs } : watched;
        t.assertAlive();

        const wrong = watches.filter((w) => w.lines !== PODS_PER_NODE).length;
        const ended = watches.filter((w) => w.ended).length;
        const perPatchAlone = alone.cpuMs !== undefined ? alone.cpuMs / alone.ok : null;
        const perPatchWatched = withWatches.cpuMs !== undefined ? withWatches.cpuMs / watched.ok : null;
        const perWatchUs = perPatchAlone !== null && perPatchWatched !== null ? ((perPatchWatched - perPatchAlone) / nodes) * 1000 : null;
        return {
          metrics: [
            metric('node watches opened', nodes, 'count'),
            metric('time to open all watches', openMs, 'ms'),
            metric('server CPU per pod status patch, no watches', perPatchAlone, 'ms'),
            metric('server CPU per pod status patch, node watches (delivery included)', perPatchWatched, 'ms'),
            metric('server CPU per watch per pod change', perWatchUs, 'µs'),
            metric('patches then delivery to every watch', deliveryMs, 'ms'),
            metric('events delivered', linesSeen, 'count'),
            metric('watches with a wrong event count', wrong, 'count', { goal: { op: '<', value: 1 } }),
            metric('watches ended early', ended, 'count', { goal: { op: '<', value: 1 } }),
            metric('patches failed', alone.failed + watched.failed, 'count', { goal: { op: '<', value: 1 } }),
          ],
          operations: [operationRow('pod status patch, no watches', alone), operationRow(`pod status patch, ${nodes} node watches`, withWatches)],
          notes: [
            `${pods} pods on ${nodes} nodes (${PODS_PER_NODE} each), ${c} patches in flight; each watch expects ${PODS_PER_NODE} MODIFIED events${outcome === 'timeout' ? '; DELIVERY TIMED OUT' : ''}`,
            `server CPU: ${t.cpuScope}`,
            ...(alone.firstError !== undefined ? [`first patch error: ${alone.firstError}`] : []),
            ...(watched.firstError !== undefined ? [`first patch error: ${watched.firstError}`] : []),
          ],
        };
      } finally {
        for (const w of watches) w?.close();
        watchClient.close();
        const problem = await deleteScratchNamespace(client, ns, [podsPath]);
        if (problem !== undefined) log(`node-watches: cleaning up ${ns}: ${problem}`);
        await runPool(nodes, c, performance.now() + 120_000, async (i) => {
          await client.request('DELETE', `/api/v1/nodes/${nodeName(i)}`, { discardBody: true });
        });
        client.close();
      }
    });
  },
};
