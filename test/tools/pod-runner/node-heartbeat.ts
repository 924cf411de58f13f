/**
 * Keeps the runner's node alive as a kubelet does: renews its Lease in kube-node-lease (creating it
 * when absent) every 10 s and refreshes the Ready condition's lastHeartbeatTime every 40 s.
 */
import type { ApiClient } from './api-client.js';

 

function microTime(d = new Date()): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

async function renewLease(api: ApiClient, node: string): Promise<void> {
  const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node}`;
  const spec = { holderIdentity: node, leaseDurationSeconds: 40, renewTime: microTime() };
  const res = await api.mergePatch(path, { spec });
  if (res.status !== 404) return;
  await api.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kube-node-lease' } });
  await api.request('POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: node, ownerReferences: [] },
    spec,
  });
}

async function refreshReady(api: ApiClient, node: string): Promise<void> {
  const res = await api.get(`/api/v1/nodes/${node}`);
  if (res.status !== 200) return;
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const conditions = (res.body.status?.conditions ?? []) as any[];
  const ready = conditions.find((c) => c.type === 'Ready');
  if (ready) ready.lastHeartbeatTime = now;
  await api.mergePatch(`/api/v1/nodes/${node}/status`, { status: { conditions } });
}

/** Starts the heartbeats; the returned function stops them. */
export function startNodeHeartbeat(api: ApiClient, node: string, log: (msg: string) => void): () => void {
  let beats = 0;
  const beat = (): void => {
    const refresh = beats++ % 4 === 0;
    void renewLease(api, node)
      .then(() => (refresh ? refreshReady(api, node) : undefined))
      .catch((err: unknown) => log(`node heartbeat: ${String(err)}`));
  };
  beat();
  const timer = setInterval(beat, 10_000);
  return () => clearInterval(timer);
}
