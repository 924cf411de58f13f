/**
 * webhook: what one validating admission webhook adds to a write. ConfigMap creates in a namespace no
 * webhook sees, then in a namespace a ValidatingWebhookConfiguration selects, whose webhook (an HTTPS
 * server in the bench process, with a generated CA, answering `allowed: true` at once) every create
 * calls. Each phase has its own scratch namespace; the configuration and both namespaces are deleted
 * afterwards. Under the table: the added latency (p50) and server CPU per create.
 */
import { withEndpoint } from './endpoint.js';
import { configMapBody } from './fixtures.js';
import { CREATE_KINDS, measureCreates, type Created } from './scenario-create.js';
import type { OperationRow, ScenarioResult } from './metrics.js';
import { metric } from './metrics.js';
import { log, sleep, type Scenario } from './scenario.js';
import { createScratchNamespace, deleteScratchNamespace, scratchNamespaceName } from './scratch-namespace.js';
import { startWebhookServer } from '../test/helpers/webhook-server.js';

const BASE_ROW = 'ConfigMap create, no webhook';
const HOOK_ROW = 'ConfigMap create, 1 validating webhook';
const CONFIG_PATH = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

function configurationBody(name: string, ns: string, url: string, caBundle: string): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name },
    webhooks: [
      {
        name: 'allow.bench.capstan.dev',
        clientConfig: { url, caBundle },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        failurePolicy: 'Fail',
      },
    ],
  });
}

export const webhookScenario: Scenario = {
  name: 'webhook',
  title: 'webhook: ConfigMap creates without and with one validating admission webhook (HTTPS, in the bench process)',
  async run(target, options) {
    const hooks = await startWebhookServer(['localhost']);
    let calls = 0;
    hooks.handle('/allow', (call) => {
      calls++;
      const uid = (call.body as { request?: { uid?: string } }).request?.uid ?? '';
      return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } };
    });
    try {
      return await withEndpoint(target, options, async (e): Promise<ScenarioResult> => {
        const client = e.client(options.concurrency);
        const kind = CREATE_KINDS[0];
        const run = Date.now().toString(36);
        const rows: OperationRow[] = [];
        const problems: string[] = [];
        const configName = `bench-webhook-${run}`;
        try {
          const phases: [string, string, boolean][] = [
            [BASE_ROW, scratchNamespaceName('nohook', run), false],
            [HOOK_ROW, scratchNamespaceName('hook', run), true],
          ];
          for (const [rowName, ns, withHook] of phases) {
            log(`webhook: ${options.createOps} ConfigMaps in ${ns}${withHook ? ' (webhook)' : ''}`);
            await createScratchNamespace(client, ns);
            let created: Created | undefined;
            try {
              if (withHook) {
                const res = await client.request('POST', CONFIG_PATH, {
                  body: configurationBody(configName, ns, `https://localhost:${hooks.port}/allow`, hooks.certs.caBundle),
                });
                if (res.status !== 201) throw new Error(`creating the webhook configuration: HTTP ${res.status}: ${res.body.slice(0, 300)}`);
                // In force once a create reaches the webhook.
                const before = calls;
                for (let i = 0; calls === before; i++) {
                  if (i > 200) throw new Error('the webhook configuration did not take effect within 10 s');
                  await client.request('POST', kind.path(ns), { body: configMapBody(`probe-${i}`, 16, i) });
                  if (calls === before) await sleep(50);
                }
              }
              created = await measureCreates(e, client, kind, ns, options);
            } finally {
              if (withHook) await client.request('DELETE', `${CONFIG_PATH}/${configName}`);
              const problem = await deleteScratchNamespace(client, ns, [kind.path(ns)]);
              if (problem !== undefined) problems.push(problem);
            }
            rows.push({ ...created.row, operation: rowName });
            if (created.firstError !== undefined) problems.push(`${rowName}: first error: ${created.firstError}`);
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
          notes: [`${options.createOps} creates per row, ${options.concurrency} in flight; webhook calls answered: ${calls}`, ...problems.slice(0, 4)],
        };
      });
    } finally {
      await hooks.stop();
    }
  },
  summarize(byTarget) {
    const parts: string[] = [];
    for (const { target, result } of byTarget) {
      const row = (name: string) => result.operations?.find((r) => r.operation === name);
      const base = row(BASE_ROW);
      const hook = row(HOOK_ROW);
      if (base === undefined || hook === undefined) continue;
      const cpu = base.cpuMsPerOp !== null && hook.cpuMsPerOp !== null ? `, server CPU +${(hook.cpuMsPerOp - base.cpuMsPerOp).toFixed(2)} ms/op` : '';
      parts.push(`${target}: p50 +${(hook.p50Ms - base.p50Ms).toFixed(2)} ms${cpu}`);
    }
    return parts.length > 0 ? [`validating webhook overhead per create: ${parts.join('; ')}`] : [];
  },
};
