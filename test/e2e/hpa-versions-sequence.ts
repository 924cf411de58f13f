/**
 * A HorizontalPodAutoscaler written at autoscaling/v1 and applied and updated at autoscaling/v2 by
 * several managers: conflicts and ownership are decided at each manager's own version (the objects
 * converted there), as structured-merge-diff does. scripts/capture-hpa-versions-goldens.mjs records
 * kube-apiserver 1.36's answers into test/golden/managedfields/hpa-versions.json;
 * test/e2e/managed-fields-versions.test.ts replays the sequence on Capstan.
 */
type Obj = Record<string, any>;
export type Send = (method: string, path: string, contentType: string, body?: string) => Promise<{ status: number; body: any }>;

/** One step's answer: status, then the managers' entries or the conflict. */
export interface StepResult {
  step: string;
  status: number;
  entries?: { manager: string; operation: string; apiVersion: string; fieldsV1: Obj }[];
  message?: string;
  causes?: Obj[];
}

const NS = 'hpa-versions';

export async function hpaVersionsSequence(send: Send): Promise<StepResult[]> {
  const json = 'application/json';
  await send('POST', '/api/v1/namespaces', json, JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
  const v1 = `/apis/autoscaling/v1/namespaces/${NS}/horizontalpodautoscalers`;
  const v2 = `/apis/autoscaling/v2/namespaces/${NS}/horizontalpodautoscalers`;
  const target = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' };
  const config = (cpu: number, max: number): string =>
    JSON.stringify({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: {
        scaleTargetRef: target,
        maxReplicas: max,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } } }],
      },
    });
  const steps: [string, string, string, string, string][] = [
    [
      'create at v1',
      'POST',
      `${v1}?fieldManager=v1mgr`,
      json,
      JSON.stringify({
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h' },
        spec: { scaleTargetRef: target, minReplicas: 1, maxReplicas: 5, targetCPUUtilizationPercentage: 50 },
      }),
    ],
    ['apply at v2 changing the v1 manager field', 'PATCH', `${v2}/h?fieldManager=v2app`, 'application/apply-patch+yaml', config(60, 5)],
    ['apply at v2 with the same values', 'PATCH', `${v2}/h?fieldManager=v2app`, 'application/apply-patch+yaml', config(50, 5)],
    ['force apply at v2', 'PATCH', `${v2}/h?fieldManager=v2app&force=true`, 'application/apply-patch+yaml', config(70, 6)],
    ['update at v2', 'PATCH', `${v2}/h?fieldManager=v2upd`, 'application/merge-patch+json', JSON.stringify({ spec: { minReplicas: 2 } })],
    ['update at v1', 'PATCH', `${v1}/h?fieldManager=v1mgr2`, 'application/merge-patch+json', JSON.stringify({ spec: { maxReplicas: 8 } })],
    ['apply at v2 again', 'PATCH', `${v2}/h?fieldManager=v2app`, 'application/apply-patch+yaml', config(70, 6)],
  ];
  const results: StepResult[] = [];
  for (const [step, method, path, contentType, body] of steps) {
    const r = await send(method, path, contentType, body);
    if (r.status >= 300) results.push({ step, status: r.status, message: r.body?.message, causes: r.body?.details?.causes });
    else {
      // kube orders entries by operation, then time in seconds, then manager: the order of Update
      // entries depends on whether the steps fell in one second, so they are compared by name.
      const entries = (r.body?.metadata?.managedFields ?? [])
        .map((e: Obj) => ({ manager: e.manager, operation: e.operation, apiVersion: e.apiVersion, fieldsV1: e.fieldsV1 }))
        .sort((a: Obj, b: Obj) => (a.operation === b.operation ? (a.manager < b.manager ? -1 : 1) : a.operation < b.operation ? -1 : 1));
      results.push({ step, status: r.status, entries });
    }
  }
  return results;
}

/** Deletes the sequence's namespace. */
export async function cleanUpHpaVersions(send: Send): Promise<void> {
  await send('DELETE', `/api/v1/namespaces/${NS}`, 'application/json');
}
