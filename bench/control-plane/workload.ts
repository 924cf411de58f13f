/**
 * The cluster-scale workload: kwok nodes, then Deployments created, rolled and deleted through the
 * real kube-controller-manager and kube-scheduler, each phase timed from the first request to the
 * moment informers (list + watch, as a controller sees them) show it finished.
 */
import { HttpClient, runPool, type ServerAccess } from '../http-client.js';
import { Informer } from './informer.js';
import { asNumber, asObject, objectElements, stringField } from '../../src/api/values.js';

export interface WorkloadSize {
  nodes: number;
  deployments: number;
  replicas: number;
}

export interface PhaseResult {
  name: string;
  /** From the phase's first request to the state it waits for. */
  seconds: number;
  /** Pods that got a node in this phase, per second between the phase's start and the last binding. */
  podsScheduledPerSecond?: number;
}

const NAMESPACE = 'scale';
const DEPLOYMENTS = `/apis/apps/v1/namespaces/${NAMESPACE}/deployments`;
const PODS = `/api/v1/namespaces/${NAMESPACE}/pods`;

interface DeploymentSummary {
  generation: number;
  observed: number;
  replicas: number;
  updated: number;
  available: number;
}

/** Resolves when CHECK holds, checked at every informer change and every second; rejects after TIMEOUT_MS. */
function until(check: () => boolean, timeoutMs: number, what: string, subscribe: (wake: () => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    let done = false;
    const wake = (): void => {
      if (done) return;
      if (check()) {
        done = true;
        clearInterval(timer);
        resolve();
      } else if (Date.now() > deadline) {
        done = true;
        clearInterval(timer);
        reject(new Error(`${what}: not reached within ${Math.round(timeoutMs / 1000)} s`));
      }
    };
    const timer = setInterval(wake, 1000);
    subscribe(wake);
    wake();
  });
}

/** Runs the workload against SERVER; LOG reports progress. */
export async function runWorkload(server: string, access: ServerAccess, size: WorkloadSize, log: (line: string) => void): Promise<PhaseResult[]> {
  const http = new HttpClient(server, 64, access);
  const must = async (method: string, path: string, body?: unknown, contentType?: string): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      const res = await http.request(method, path, {
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(contentType !== undefined ? { headers: { 'content-type': contentType } } : {}),
        discardBody: true,
      });
      if (res.status < 300) return;
      // 429 (the server shedding) and 409 on a conflicting write are retried, as clients do.
      if ((res.status === 429 || res.status === 409 || res.status >= 500) && attempt < 20) {
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      throw new Error(`${method} ${path}: ${res.status}`);
    }
  };
  const wakers = new Set<() => void>();
  const notify = (): void => {
    for (const w of wakers) w();
  };
  const subscribe = (w: () => void): void => {
    wakers.add(w);
  };
  const results: PhaseResult[] = [];
  const scheduledAt = new Map<string, number>();

  const nodes = new Informer<boolean>({
    server,
    access,
    path: '/api/v1/nodes?labelSelector=type%3Dkwok',
    summarize: (o) => objectElements(asObject(o.status).conditions).some((c) => c.type === 'Ready' && c.status === 'True'),
    onChange: notify,
  });
  const deployments = new Informer<DeploymentSummary>({
    server,
    access,
    path: DEPLOYMENTS,
    summarize: (o) => {
      const s = asObject(o.status);
      return {
        generation: asNumber(asObject(o.metadata).generation),
        observed: asNumber(s.observedGeneration),
        replicas: asNumber(s.replicas),
        updated: asNumber(s.updatedReplicas),
        available: asNumber(s.availableReplicas),
      };
    },
    onChange: notify,
  });
  const pods = new Informer<string>({
    server,
    access,
    path: PODS,
    summarize: (o) => stringField(o.spec, 'nodeName'),
    onChange: (name, node, now) => {
      if (node !== undefined && node !== '' && !scheduledAt.has(name)) scheduledAt.set(name, now);
      notify();
    },
  });
  try {
    await Promise.all([nodes.ready, deployments.ready, pods.ready]);
    const timed = async (name: string, body: () => Promise<void>, scheduling = false): Promise<void> => {
      const t0 = performance.now();
      const before = scheduledAt.size;
      await body();
      const seconds = (performance.now() - t0) / 1000;
      const result: PhaseResult = { name, seconds };
      if (scheduling) {
        const times = [...scheduledAt.values()].filter((t) => t >= t0);
        const last = times.length > 0 ? Math.max(...times) : t0;
        if (last > t0) result.podsScheduledPerSecond = (scheduledAt.size - before) / ((last - t0) / 1000);
      }
      results.push(result);
      log(`${name}: ${seconds.toFixed(1)} s`);
    };

    await timed(`${size.nodes} kwok nodes Ready`, async () => {
      await runPool(size.nodes, 32, Infinity, (i) =>
        must('POST', '/api/v1/nodes', {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name: `scale-node-${i}`,
            annotations: { 'kwok.x-k8s.io/node': 'fake' },
            labels: { type: 'kwok', 'kubernetes.io/hostname': `scale-node-${i}`, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64' },
          },
        }),
      );
      await until(() => nodes.items.size >= size.nodes && [...nodes.items.values()].every((r) => r), 600_000, 'nodes Ready', subscribe);
    });

    await must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
    // Pods are admitted once the namespace's default ServiceAccount exists (kube-controller-manager creates it).
    for (let i = 0; i < 600; i++) {
      if ((await http.request('GET', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/default`, { discardBody: true })).status === 200) break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const total = size.deployments * size.replicas;
    const allRolledOut = (): boolean =>
      deployments.items.size === size.deployments &&
      [...deployments.items.values()].every(
        (d) => d.observed >= d.generation && d.updated === size.replicas && d.available === size.replicas && d.replicas === size.replicas,
      );
    const timeoutMs = Math.max(600_000, total * 100);

    await timed(
      `${size.deployments} Deployments x ${size.replicas}: all Available`,
      async () => {
        await runPool(size.deployments, 16, Infinity, (i) =>
          must('POST', DEPLOYMENTS, {
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: `web-${i}` },
            spec: {
              replicas: size.replicas,
              selector: { matchLabels: { app: `web-${i}` } },
              template: {
                metadata: { labels: { app: `web-${i}` } },
                spec: { nodeSelector: { type: 'kwok' }, containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10' }] },
              },
            },
          }),
        );
        await until(allRolledOut, timeoutMs, 'all Deployments Available', subscribe);
      },
      true,
    );

    await timed(
      'rolling update of all: all Available',
      async () => {
        await runPool(size.deployments, 16, Infinity, (i) =>
          must(
            'PATCH',
            `${DEPLOYMENTS}/web-${i}`,
            { spec: { template: { metadata: { annotations: { 'bench.capstan.dev/revision': '2' } } } } },
            'application/strategic-merge-patch+json',
          ),
        );
        // The informer may still hold the old generation for a moment: wait until it has seen every patch.
        await until(() => [...deployments.items.values()].every((d) => d.generation >= 2) && allRolledOut(), timeoutMs, 'rolling update', subscribe);
      },
      true,
    );

    await timed('deletion: all Pods gone', async () => {
      await runPool(size.deployments, 16, Infinity, (i) => must('DELETE', `${DEPLOYMENTS}/web-${i}`, { propagationPolicy: 'Background' }));
      await until(() => deployments.items.size === 0 && pods.items.size === 0, timeoutMs, 'Pods deleted', subscribe);
    });
    return results;
  } finally {
    nodes.stop();
    deployments.stop();
    pods.stop();
    http.close();
  }
}
