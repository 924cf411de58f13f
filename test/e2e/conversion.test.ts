/**
 * Version conversion (src/conversion): an object written in one served version reads back in every
 * other, converted as kube-apiserver 1.36 converts it.
 *
 * - HorizontalPodAutoscaler: stored as autoscaling/v2; autoscaling/v1 sees the CPU target as
 *   `targetCPUUtilizationPercentage` and the rest in kube's round-trip annotations (the exact strings
 *   kube writes), and writes through v1 that keep them change nothing else;
 * - Event: core/v1 and events.k8s.io/v1 share one store, with kube's field mapping, in get, list,
 *   watch and field selectors; `kubectl events` shows events written through either API.
 * Everything runs on both storage backends (conversion sits above storage; the backends must agree).
 * Expected values marked "the reference's" were read from kube-apiserver 1.36.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { allBackends } from '../helpers/backends.js';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { openWatch } from '../helpers/watch-client.js';
import { kubectlFor } from './kubectl.js';
import { assertStatus, restFor, type Rest } from './rest.js';

let srv: TestServer;
let rest: Rest;
let ns: string;

const hpaV1 = (): string => `/apis/autoscaling/v1/namespaces/${ns}/horizontalpodautoscalers`;
const hpaV2 = (): string => `/apis/autoscaling/v2/namespaces/${ns}/horizontalpodautoscalers`;
const coreEvents = (): string => `/api/v1/namespaces/${ns}/events`;
const newEvents = (): string => `/apis/events.k8s.io/v1/namespaces/${ns}/events`;

const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
const CURRENT_METRICS = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';

/** What kube writes for a memory AverageValue metric and a scale-down window of 60s (behavior defaulted). */
const MEMORY_METRICS_ANNOTATION = '[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"100Mi"}}]';
const BEHAVIOR_ANNOTATION =
  '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},' +
  '{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":"Max",' +
  '"Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}';

const memoryMetric = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
const cpuMetric = (percent: number): unknown => ({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: percent } } });

function v2Hpa(name: string): unknown {
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name, annotations: { team: 'a' } },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      maxReplicas: 4,
      metrics: [memoryMetric, cpuMetric(50)],
      behavior: { scaleDown: { stabilizationWindowSeconds: 60 } },
    },
  };
}

for (const backend of allBackends()) {
  describe(`on ${backend.name} storage`, () => {
    before(async () => {
      srv = await startTestServer({}, await backend.open());
      rest = restFor(srv.url);
      ns = await rest.namespace('conv');
    });
    after(async () => {
      await srv?.stop();
      await backend.stop();
    });

    describe('HorizontalPodAutoscaler: autoscaling/v1 <-> autoscaling/v2', () => {
      test("created in v1 without a target: v2 has kube's 80% CPU metric, and v1 reads it back as the target", async () => {
        const name = uniqueName('hpa');
        const created = await rest.create(hpaV1(), {
          apiVersion: 'autoscaling/v1',
          kind: 'HorizontalPodAutoscaler',
          metadata: { name },
          spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3 },
        });
        assert.equal(created.apiVersion, 'autoscaling/v1');
        assert.equal(created.spec.targetCPUUtilizationPercentage, 80);
        assert.equal(created.spec.minReplicas, 1);
        assert.equal(created.metadata.annotations, undefined, 'nothing v1 cannot hold, so no round-trip annotation');
        const v2 = await rest.get(`${hpaV2()}/${name}`);
        assert.equal(v2.status, 200, v2.text);
        assert.equal(v2.body.apiVersion, 'autoscaling/v2');
        assert.deepEqual(v2.body.spec.metrics, [cpuMetric(80)]);
        assert.equal(v2.body.spec.targetCPUUtilizationPercentage, undefined);
        assert.deepEqual(v2.body.status, { currentMetrics: null, desiredReplicas: 0 });
      });

      test('created in v1 with a CPU target: v2 has that Utilization metric', async () => {
        const name = uniqueName('hpa');
        await rest.create(hpaV1(), {
          metadata: { name },
          spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, targetCPUUtilizationPercentage: 60 },
        });
        const v2 = await rest.get(`${hpaV2()}/${name}`);
        assert.deepEqual(v2.body.spec.metrics, [cpuMetric(60)]);
      });

      test("created in v2 with a memory metric and behavior: v1 holds them in kube's annotations; a v1 update keeping them changes nothing else", async () => {
        const name = uniqueName('hpa');
        const created = await rest.create(hpaV2(), v2Hpa(name));
        // The reference's stored behavior, in Go's field order.
        assert.deepEqual(Object.keys(created.spec.behavior.scaleDown), ['stabilizationWindowSeconds', 'selectPolicy', 'policies']);
        assert.deepEqual(Object.keys(created.spec.behavior.scaleUp), ['stabilizationWindowSeconds', 'selectPolicy', 'policies']);
        const v1 = await rest.get(`${hpaV1()}/${name}`);
        assert.equal(v1.status, 200, v1.text);
        assert.equal(v1.body.spec.targetCPUUtilizationPercentage, 50);
        assert.equal(v1.body.spec.metrics, undefined);
        assert.equal(v1.body.spec.behavior, undefined);
        // kube's exact strings, and Go's sorted map keys.
        assert.deepEqual(Object.keys(v1.body.metadata.annotations), [BEHAVIOR, METRICS, 'team']);
        assert.equal(v1.body.metadata.annotations[METRICS], MEMORY_METRICS_ANNOTATION);
        assert.equal(v1.body.metadata.annotations[BEHAVIOR], BEHAVIOR_ANNOTATION);
        assert.deepEqual(v1.body.status, { currentReplicas: 0, desiredReplicas: 0 });

        const edited = structuredClone(v1.body);
        edited.spec.maxReplicas = 7;
        const put = await rest.put(`${hpaV1()}/${name}`, edited);
        assert.equal(put.status, 200, put.text);
        assert.equal(put.body.metadata.annotations[METRICS], MEMORY_METRICS_ANNOTATION);

        const after = await rest.get(`${hpaV2()}/${name}`);
        assert.equal(after.body.spec.maxReplicas, 7);
        assert.deepEqual(after.body.spec.metrics, created.spec.metrics);
        assert.deepEqual(after.body.spec.behavior, created.spec.behavior);
        assert.deepEqual(after.body.metadata.annotations, { team: 'a' }, 'round-trip annotations never reach v2');
        assert.equal(after.body.metadata.generation, undefined, "kube's HPA strategy keeps no generation");

        // The same object again through v1 is no write at all.
        const again = await rest.put(`${hpaV1()}/${name}`, put.body);
        assert.equal(again.status, 200, again.text);
        assert.equal(again.body.metadata.resourceVersion, put.body.metadata.resourceVersion);
      });

      test('a v1 patch applies to the v1 view and keeps what only v2 can say', async () => {
        const name = uniqueName('hpa');
        const created = await rest.create(hpaV2(), v2Hpa(name));
        const patched = await rest.patch(`${hpaV1()}/${name}`, { spec: { targetCPUUtilizationPercentage: 70 } });
        assert.equal(patched.status, 200, patched.text);
        assert.equal(patched.body.apiVersion, 'autoscaling/v1');
        assert.equal(patched.body.spec.targetCPUUtilizationPercentage, 70);
        const v2 = await rest.get(`${hpaV2()}/${name}`);
        assert.deepEqual(v2.body.spec.metrics, [memoryMetric, cpuMetric(70)]);
        assert.deepEqual(v2.body.spec.behavior, created.spec.behavior);

        // A JSON patch removing the metrics annotation removes the metric it carried.
        const removed = await rest.patch(
          `${hpaV1()}/${name}`,
          [{ op: 'remove', path: '/metadata/annotations/autoscaling.alpha.kubernetes.io~1metrics' }],
          'application/json-patch+json',
        );
        assert.equal(removed.status, 200, removed.text);
        const v2After = await rest.get(`${hpaV2()}/${name}`);
        assert.deepEqual(v2After.body.spec.metrics, [cpuMetric(70)]);
      });

      test('status written in v2 reads in v1 as current CPU and the current-metrics and conditions annotations', async () => {
        const name = uniqueName('hpa');
        const created = await rest.create(hpaV2(), v2Hpa(name));
        const status = {
          currentReplicas: 2,
          desiredReplicas: 3,
          currentMetrics: [
            { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '250m', averageUtilization: 40 } } },
            { type: 'Resource', resource: { name: 'memory', current: { averageValue: '80Mi' } } },
          ],
          conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'ReadyForNewScale', message: 'ok' }],
        };
        const put = await rest.put(`${hpaV2()}/${name}/status`, { ...created, status });
        assert.equal(put.status, 200, put.text);
        const v1 = await rest.get(`${hpaV1()}/${name}`);
        assert.deepEqual(v1.body.status, { currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 40 });
        assert.equal(
          v1.body.metadata.annotations[CURRENT_METRICS],
          '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":40,"currentAverageValue":"250m"}},' +
            '{"type":"Resource","resource":{"name":"memory","currentAverageValue":"80Mi"}}]',
        );
        assert.equal(
          v1.body.metadata.annotations[CONDITIONS],
          '[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-01-01T00:00:00Z","reason":"ReadyForNewScale","message":"ok"}]',
        );

        // A v1 write of the main resource that drops every annotation keeps the stored status, as kube does.
        const bare = structuredClone(v1.body);
        bare.metadata.annotations = { team: 'a' };
        const put1 = await rest.put(`${hpaV1()}/${name}`, bare);
        assert.equal(put1.status, 200, put1.text);
        const v2 = await rest.get(`${hpaV2()}/${name}`);
        assert.deepEqual(v2.body.status.currentMetrics, status.currentMetrics);
        assert.deepEqual(v2.body.status.conditions, status.conditions);
        assert.deepEqual(v2.body.spec.metrics, [cpuMetric(50)], 'the memory metric went with its annotation');
        assert.equal(v2.body.spec.behavior, undefined);
      });

      test("a v1 status write takes the status from the request's annotations and leaves the spec, as kube-apiserver does", async () => {
        const name = uniqueName('hpa');
        const created = await rest.create(hpaV2(), v2Hpa(name));
        const conditions = [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'ReadyForNewScale' }];
        const seeded = await rest.put(`${hpaV2()}/${name}/status`, {
          ...created,
          status: { currentReplicas: 2, desiredReplicas: 3, currentMetrics: null, conditions },
        });
        assert.equal(seeded.status, 200, seeded.text);
        const v1 = (await rest.get(`${hpaV1()}/${name}`)).body;
        v1.metadata.annotations[CURRENT_METRICS] = '[{"type":"Resource","resource":{"name":"memory","currentAverageValue":"90Mi"}}]';
        delete v1.metadata.annotations[CONDITIONS];
        v1.status.currentCPUUtilizationPercentage = 33;
        v1.status.desiredReplicas = 5;
        v1.spec.maxReplicas = 9;
        const put = await rest.put(`${hpaV1()}/${name}/status`, v1);
        assert.equal(put.status, 200, put.text);
        const v2 = (await rest.get(`${hpaV2()}/${name}`)).body;
        // The reference's answer: the annotation's metrics win over the v1 CPU field; conditions go with their annotation.
        assert.deepEqual(v2.status, {
          currentReplicas: 2,
          desiredReplicas: 5,
          currentMetrics: [{ type: 'Resource', resource: { name: 'memory', current: { averageValue: '90Mi' } } }],
        });
        assert.deepEqual(v2.spec, created.spec);
      });

      test('created in v1 with every round-trip annotation: v2 as kube-apiserver 1.36 stores it (status reset on create)', async () => {
        const name = uniqueName('hpa');
        const created = await rest.create(hpaV1(), {
          apiVersion: 'autoscaling/v1',
          kind: 'HorizontalPodAutoscaler',
          metadata: {
            name,
            annotations: {
              [METRICS]:
                '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}},{"type":"Object","object":{"target":{"kind":"Service","name":"s"},' +
                '"metricName":"hits","targetValue":"0","averageValue":"500m"}},{"type":"External","external":{"metricName":"queue","targetValue":"1500m"}}]',
              [BEHAVIOR]: '{"scaleUp":{"stabilizationWindowSeconds":30,"policies":[{"type":"Pods","value":2,"periodSeconds":20}]}}',
              [CONDITIONS]: '[{"type":"AbleToScale","status":"True"}]',
              [CURRENT_METRICS]: '[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":10}}]',
            },
          },
          spec: { scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' }, maxReplicas: 4, targetCPUUtilizationPercentage: 65 },
        });
        // The reference's answers, field for field (metadata aside).
        assert.deepEqual(created.metadata.annotations, {
          [BEHAVIOR]:
            '{"ScaleUp":{"StabilizationWindowSeconds":30,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":2,"PeriodSeconds":20}],"Tolerance":null},' +
            '"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}',
          [METRICS]:
            '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}},{"type":"Object","object":{"target":{"kind":"Service","name":"s"},' +
            '"metricName":"hits","targetValue":"0","averageValue":"500m"}},{"type":"External","external":{"metricName":"queue","targetValue":"1500m"}}]',
        });
        assert.deepEqual(created.status, { currentReplicas: 0, desiredReplicas: 0 });
        const v2 = await rest.get(`${hpaV2()}/${name}`);
        assert.deepEqual(v2.body.spec, {
          scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
          minReplicas: 1,
          maxReplicas: 4,
          metrics: [
            { type: 'Pods', pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '1k' } } },
            {
              type: 'Object',
              object: { describedObject: { kind: 'Service', name: 's' }, target: { type: 'AverageValue', averageValue: '500m' }, metric: { name: 'hits' } },
            },
            { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'Value', value: '1500m' } } },
            cpuMetric(65),
          ],
          behavior: {
            scaleUp: { stabilizationWindowSeconds: 30, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 2, periodSeconds: 20 }] },
            scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
          },
        });
        assert.deepEqual(v2.body.status, { desiredReplicas: 0, currentMetrics: null });
        assert.equal(v2.body.metadata.annotations, undefined);
      });

      test('annotations Go could not decode are ignored, never a server error', async () => {
        const name = uniqueName('hpa');
        const r = await rest.post(hpaV1(), {
          metadata: { name, annotations: { [METRICS]: '{not json', [BEHAVIOR]: '{"ScaleUp":{"StabilizationWindowSeconds":"x"}}', [CONDITIONS]: '[1]' } },
          spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, targetCPUUtilizationPercentage: 30 },
        });
        assert.equal(r.status, 201, r.text);
        assert.deepEqual(r.body.metadata.annotations, undefined);
        const v2 = await rest.get(`${hpaV2()}/${name}`);
        assert.deepEqual(v2.body.spec.metrics, [cpuMetric(30)]);
        assert.equal(v2.body.spec.behavior, undefined);
        assert.equal(v2.body.status.conditions, undefined);
      });

      test('hostile round-trip annotations never cause a server error', async () => {
        const values = [
          '[null]',
          '[{"type":"Object","object":null}]',
          '[{"type":"Object","object":{"target":"str"}}]',
          '[{"type":"Pods","pods":{"targetAverageValue":12}}]',
          '[{"type":"External","external":{"metricSelector":{"matchExpressions":[null,{"values":[1]}]}}}]',
          '[{"type":"Resource","resource":{"targetAverageUtilization":1e12}}]',
          '{"ScaleUp":{"Policies":[null]}}',
          '{"ScaleUp":[]}',
          '{"scaleup":{"tolerance":"0.05"},"SCALEDOWN":{"selectpolicy":"Disabled"}}',
          '[[[[[[[[[[]]]]]]]]]]',
          '{"__proto__":{"x":1}}',
          '"text"',
          '1e400',
          '',
        ];
        for (const value of values) {
          const name = uniqueName('hpa');
          const annotations = { [METRICS]: value, [BEHAVIOR]: value, [CURRENT_METRICS]: value, [CONDITIONS]: value };
          const created = await rest.post(hpaV1(), {
            metadata: { name, annotations },
            spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 2 },
          });
          assert.ok(created.status === 201 || (created.status >= 400 && created.status < 500), `${value}: ${created.text}`);
          if (created.status !== 201) continue;
          for (const path of [`${hpaV1()}/${name}`, `${hpaV2()}/${name}`]) {
            const r = await rest.get(path);
            assert.equal(r.status, 200, `${value}: ${r.text}`);
          }
          const put = await rest.put(`${hpaV1()}/${name}`, { ...created.body, metadata: { ...created.body.metadata, annotations } });
          assert.ok(put.status === 200 || (put.status >= 400 && put.status < 500), `${value}: ${put.text}`);
        }
      });

      test('whatever v2 stored, reading it in v1 is never a server error', async () => {
        const name = uniqueName('hpa');
        const body = v2Hpa(name) as { spec: { metrics: unknown[] } };
        // Every metric type v1 has no field for, with quantities in unusual but valid spellings: all travel in v1's annotation.
        const selector = { matchLabels: { app: 'web' } };
        body.spec.metrics = [
          { type: 'Pods', pods: { metric: { name: 'qps', selector }, target: { type: 'AverageValue', averageValue: '1500m' } } },
          {
            type: 'Object',
            object: { describedObject: { apiVersion: 'v1', kind: 'Service', name: 'web' }, metric: { name: 'rps' }, target: { type: 'Value', value: '1e3' } },
          },
          { type: 'External', external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '0.5' } } },
          { type: 'ContainerResource', containerResource: { name: 'memory', container: 'app', target: { type: 'AverageValue', averageValue: '12Ki' } } },
        ];
        const created = await rest.post(hpaV2(), body);
        assert.equal(created.status, 201, created.text);
        const v1 = await rest.get(`${hpaV1()}/${name}`);
        assert.equal(v1.status, 200, v1.text);
        const carried = JSON.parse(String(v1.body.metadata.annotations[METRICS])) as { type: string }[];
        assert.deepEqual(
          carried.map((m) => m.type),
          ['Pods', 'Object', 'External', 'ContainerResource'],
        );
        const back = await rest.get(`${hpaV2()}/${name}`);
        assert.equal(back.status, 200, back.text);
        assert.deepEqual(back.body.spec.metrics, created.body.spec.metrics);
        const list = await rest.get(hpaV1());
        assert.equal(list.status, 200, list.text);
      });

      test('round-trip annotations sent in v2 are dropped, as kube drops them', async () => {
        const name = uniqueName('hpa');
        const body = v2Hpa(name) as { metadata: { annotations: Record<string, string> } };
        body.metadata.annotations[METRICS] = MEMORY_METRICS_ANNOTATION;
        const created = await rest.create(hpaV2(), body);
        assert.deepEqual(created.metadata.annotations, { team: 'a' });
      });

      test('list and watch in either version see every object, converted', async () => {
        const fromV1 = uniqueName('hpa');
        const fromV2 = uniqueName('hpa');
        const listed = await rest.get(hpaV1());
        const w1 = await openWatch(srv.url, `${hpaV1()}?watch=true&resourceVersion=${String(listed.body.metadata.resourceVersion)}`);
        const w2 = await openWatch(srv.url, `${hpaV2()}?watch=true&resourceVersion=${String(listed.body.metadata.resourceVersion)}`);
        try {
          await rest.create(hpaV1(), {
            metadata: { name: fromV1 },
            spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 2, targetCPUUtilizationPercentage: 55 },
          });
          await rest.create(hpaV2(), v2Hpa(fromV2));
          const seen1 = await w1.waitFor((evs) => evs.filter((e) => e.type === 'ADDED').length >= 2);
          const seen2 = await w2.waitFor((evs) => evs.filter((e) => e.type === 'ADDED').length >= 2);
          const byName = (evs: typeof seen1, n: string): any => evs.find((e) => e.object.metadata.name === n)?.object;
          assert.equal(byName(seen1, fromV2).apiVersion, 'autoscaling/v1');
          assert.equal(byName(seen1, fromV2).spec.targetCPUUtilizationPercentage, 50);
          assert.equal(byName(seen1, fromV2).metadata.annotations[METRICS], MEMORY_METRICS_ANNOTATION);
          assert.equal(byName(seen2, fromV1).apiVersion, 'autoscaling/v2');
          assert.deepEqual(byName(seen2, fromV1).spec.metrics, [cpuMetric(55)]);
        } finally {
          w1.close();
          w2.close();
        }
        for (const [path, apiVersion] of [
          [hpaV1(), 'autoscaling/v1'],
          [hpaV2(), 'autoscaling/v2'],
        ] as const) {
          const list = await rest.get(path);
          assert.equal(list.status, 200, list.text);
          const items = list.body.items as Array<{ apiVersion: string; metadata: { name: string }; spec: Record<string, unknown> }>;
          const names = items.map((i) => i.metadata.name);
          assert.ok(names.includes(fromV1) && names.includes(fromV2), names.join(','));
          // Items of a built-in list carry no kind or apiVersion, as kube writes them; their shape shows the version.
          for (const item of items) assert.equal(item.apiVersion, undefined);
          assert.equal(list.body.apiVersion, apiVersion);
          const item = items.find((i) => i.metadata.name === fromV2);
          if (apiVersion === 'autoscaling/v1') assert.equal(item?.spec.targetCPUUtilizationPercentage, 50);
          else assert.deepEqual(item?.spec.metrics, [memoryMetric, cpuMetric(50)]);
        }
      });

      test('Table output prints the same Targets in both versions (v1 from its annotations)', async () => {
        const name = uniqueName('hpa');
        await rest.create(hpaV2(), v2Hpa(name));
        const accept = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
        const cells: string[] = [];
        for (const path of [hpaV1(), hpaV2()]) {
          const r = await rest.get(`${path}/${name}`, accept);
          assert.equal(r.status, 200, r.text);
          const columns = (r.body.columnDefinitions as Array<{ name: string }>).map((c) => c.name);
          cells.push(String(r.body.rows[0].cells[columns.indexOf('Targets')]));
        }
        assert.deepEqual(cells, ['memory: <unknown>/100Mi, cpu: <unknown>/50%', 'memory: <unknown>/100Mi, cpu: <unknown>/50%']);
      });

      test('metadata-only answers carry no round-trip annotations (the reference builds them from its internal object)', async () => {
        const name = uniqueName('hpa');
        await rest.create(hpaV2(), v2Hpa(name));
        const partial = await rest.get(`${hpaV1()}/${name}`, { accept: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io' });
        assert.equal(partial.status, 200, partial.text);
        assert.equal(partial.body.kind, 'PartialObjectMetadata');
        assert.deepEqual(partial.body.metadata.annotations, { team: 'a' });
        const table = await rest.get(`${hpaV1()}?labelSelector=`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
        const row = (table.body.rows as Array<{ object: { metadata: { name: string; annotations?: unknown } } }>).find((x) => x.object.metadata.name === name);
        assert.deepEqual(row?.object.metadata.annotations, { team: 'a' });
        // With the whole object, the row holds it in the request's version.
        const full = await rest.get(`${hpaV1()}/${name}?includeObject=Object`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
        assert.equal(full.body.rows[0].object.apiVersion, 'autoscaling/v1');
        assert.equal(full.body.rows[0].object.metadata.annotations[METRICS], MEMORY_METRICS_ANNOTATION);
      });

      test('discovery gives both versions the storage version hash of autoscaling/v2', async () => {
        for (const path of ['/apis/autoscaling/v1', '/apis/autoscaling/v2']) {
          const r = await rest.get(path);
          const hpa = (r.body.resources as Array<{ name: string; storageVersionHash?: string }>).find((x) => x.name === 'horizontalpodautoscalers');
          assert.equal(hpa?.storageVersionHash, 'qwQve8ut294=', path);
        }
      });

      test('kubectl reads a v2-only HPA through its preferred version', async () => {
        const name = uniqueName('hpa');
        await rest.create(hpaV2(), v2Hpa(name));
        const k = kubectlFor(srv.kubeconfig);
        const v1 = await k.json(['get', 'horizontalpodautoscalers.v1.autoscaling', name, '-n', ns]);
        assert.equal(v1.metadata.annotations[METRICS], MEMORY_METRICS_ANNOTATION);
        const v2 = await k.json(['get', 'hpa', name, '-n', ns]);
        assert.equal(v2.apiVersion, 'autoscaling/v2');
        assert.deepEqual(v2.spec.metrics, [memoryMetric, cpuMetric(50)]);
      });
    });

    describe('Event: core/v1 and events.k8s.io/v1 share one store', () => {
      const eventTime = '2024-05-06T07:08:09.123456Z';

      test("a core Event reads through events.k8s.io/v1 with kube's field mapping, and back unchanged", async () => {
        const name = uniqueName('ev');
        const created = await rest.create(coreEvents(), {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name },
          involvedObject: { kind: 'Pod', namespace: ns, name: 'web-1', uid: 'u-1', apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
          reason: 'Pulled',
          message: 'image pulled',
          source: { component: 'kubelet', host: 'node-1' },
          firstTimestamp: '2024-05-06T07:00:00Z',
          lastTimestamp: '2024-05-06T07:05:00Z',
          count: 3,
          type: 'Normal',
          reportingComponent: 'kubelet',
          reportingInstance: 'node-1',
        });
        const r = await rest.get(`${newEvents()}/${name}`);
        assert.equal(r.status, 200, r.text);
        const { metadata, ...rest1 } = r.body;
        assert.equal(metadata.uid, created.metadata.uid);
        assert.equal(metadata.resourceVersion, created.metadata.resourceVersion);
        assert.deepEqual(rest1, {
          kind: 'Event',
          apiVersion: 'events.k8s.io/v1',
          eventTime: null,
          reportingController: 'kubelet',
          reportingInstance: 'node-1',
          reason: 'Pulled',
          regarding: { kind: 'Pod', namespace: ns, name: 'web-1', uid: 'u-1', apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
          note: 'image pulled',
          type: 'Normal',
          deprecatedSource: { component: 'kubelet', host: 'node-1' },
          deprecatedFirstTimestamp: '2024-05-06T07:00:00Z',
          deprecatedLastTimestamp: '2024-05-06T07:05:00Z',
          deprecatedCount: 3,
        });
        // Go's field order of events.k8s.io/v1 Event.
        assert.deepEqual(Object.keys(r.body), [
          'kind',
          'apiVersion',
          'metadata',
          'eventTime',
          'reportingController',
          'reportingInstance',
          'reason',
          'regarding',
          'note',
          'type',
          'deprecatedSource',
          'deprecatedFirstTimestamp',
          'deprecatedLastTimestamp',
          'deprecatedCount',
        ]);
        const back = await rest.get(`${coreEvents()}/${name}`);
        assert.deepEqual(back.body, created);
      });

      test('an events.k8s.io Event reads through core/v1 with the fields renamed', async () => {
        const name = uniqueName('ev');
        const created = await rest.create(newEvents(), {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name },
          eventTime,
          series: { count: 2, lastObservedTime: eventTime },
          reportingController: 'example.com/ctl',
          reportingInstance: 'ctl-1',
          action: 'Scale',
          reason: 'Scaled',
          regarding: { kind: 'Deployment', namespace: ns, name: 'web' },
          related: { kind: 'ReplicaSet', namespace: ns, name: 'web-abc' },
          note: 'scaled up',
          type: 'Normal',
        });
        const r = await rest.get(`${coreEvents()}/${name}`);
        assert.equal(r.status, 200, r.text);
        const { metadata: _m, ...fields } = r.body;
        assert.deepEqual(fields, {
          kind: 'Event',
          apiVersion: 'v1',
          involvedObject: { kind: 'Deployment', namespace: ns, name: 'web' },
          reason: 'Scaled',
          message: 'scaled up',
          source: {},
          firstTimestamp: null,
          lastTimestamp: null,
          type: 'Normal',
          eventTime,
          series: { count: 2, lastObservedTime: eventTime },
          action: 'Scale',
          related: { kind: 'ReplicaSet', namespace: ns, name: 'web-abc' },
          reportingComponent: 'example.com/ctl',
          reportingInstance: 'ctl-1',
        });
        // Go's field order of core/v1 Event; unset times are written as null, as kube writes them.
        assert.deepEqual(Object.keys(r.body), [
          'kind',
          'apiVersion',
          'metadata',
          'involvedObject',
          'reason',
          'message',
          'source',
          'firstTimestamp',
          'lastTimestamp',
          'type',
          'eventTime',
          'series',
          'action',
          'related',
          'reportingComponent',
          'reportingInstance',
        ]);
        const back = await rest.get(`${newEvents()}/${name}`);
        assert.deepEqual(back.body, { ...created, deprecatedFirstTimestamp: null, deprecatedLastTimestamp: null });
      });

      test('a patch through one API changes what the other reads', async () => {
        const name = uniqueName('ev');
        await rest.create(coreEvents(), { metadata: { name }, involvedObject: { kind: 'Pod', namespace: ns, name: 'p' }, reason: 'A', message: 'first' });
        // (events.k8s.io/v1 refuses changes to an Event's note and count, as kube does; core/v1 allows them.)
        const patched = await rest.patch(`${coreEvents()}/${name}`, { message: 'second', count: 4 });
        assert.equal(patched.status, 200, patched.text);
        assert.equal(patched.body.message, 'second');
        const viaNew = await rest.get(`${newEvents()}/${name}`);
        assert.equal(viaNew.body.note, 'second');
        assert.equal(viaNew.body.deprecatedCount, 4);
        const refused = await rest.patch(`${newEvents()}/${name}`, { note: 'third' });
        assert.equal(refused.status, 422, refused.text);
      });

      test('lists, field selectors and watches of either API see the events of both', async () => {
        const viaCore = uniqueName('ev');
        const viaNew = uniqueName('ev');
        const start = await rest.get(coreEvents());
        const watchNew = await openWatch(srv.url, `${newEvents()}?watch=true&resourceVersion=${String(start.body.metadata.resourceVersion)}`);
        const watchCore = await openWatch(
          srv.url,
          `${coreEvents()}?watch=true&fieldSelector=involvedObject.name=target-b&resourceVersion=${String(start.body.metadata.resourceVersion)}`,
        );
        try {
          await rest.create(coreEvents(), {
            metadata: { name: viaCore },
            involvedObject: { kind: 'Pod', namespace: ns, name: 'target-a' },
            reason: 'FromCore',
            message: 'm',
          });
          await rest.create(newEvents(), {
            metadata: { name: viaNew },
            eventTime,
            reportingController: 'c',
            reportingInstance: 'i',
            action: 'A',
            reason: 'FromNew',
            type: 'Normal',
            regarding: { kind: 'Pod', namespace: ns, name: 'target-b' },
          });
          const seenNew = await watchNew.waitFor((evs) => evs.length >= 2);
          assert.deepEqual(
            seenNew.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name]),
            [
              ['ADDED', 'events.k8s.io/v1', viaCore],
              ['ADDED', 'events.k8s.io/v1', viaNew],
            ],
          );
          assert.deepEqual(seenNew[0]?.object.regarding, { kind: 'Pod', namespace: ns, name: 'target-a' });
          const seenCore = await watchCore.waitFor((evs) => evs.length >= 1);
          assert.equal(seenCore[0]?.object.metadata.name, viaNew);
          assert.equal(seenCore[0]?.object.involvedObject.name, 'target-b');
        } finally {
          watchNew.close();
          watchCore.close();
        }
        const names = async (path: string): Promise<string[]> => {
          const r = await rest.get(path);
          assert.equal(r.status, 200, r.text);
          return (r.body.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name);
        };
        for (const path of [coreEvents(), newEvents()]) {
          const all = await names(path);
          assert.ok(all.includes(viaCore) && all.includes(viaNew), `${path}: ${all.join(',')}`);
        }
        assert.deepEqual(await names(`${newEvents()}?fieldSelector=regarding.name%3Dtarget-a`), [viaCore]);
        assert.deepEqual(await names(`${coreEvents()}?fieldSelector=involvedObject.name%3Dtarget-b`), [viaNew]);
        assert.deepEqual(await names(`${newEvents()}?fieldSelector=reportingController%3Dc`), [viaNew]);
        assertStatus(
          await rest.get(`${newEvents()}?fieldSelector=involvedObject.name%3Dtarget-a`),
          400,
          'BadRequest',
          'field label not supported: involvedObject.name',
        );
        assertStatus(await rest.get(`${newEvents()}?fieldSelector=source%3Dc`), 400, 'BadRequest', 'field label not supported: source');
        assert.deepEqual(await names(`${coreEvents()}?fieldSelector=source%3Dc`), [viaNew], 'core falls back to the reporting controller');
      });

      test("discovery gives both APIs' events the storage version hash of core v1 Event, as kube does", async () => {
        const hashOf = async (path: string): Promise<unknown> => {
          const r = await rest.get(path);
          assert.equal(r.status, 200, r.text);
          return (r.body.resources as Array<{ name: string; storageVersionHash?: string }>).find((x) => x.name === 'events')?.storageVersionHash;
        };
        assert.equal(await hashOf('/api/v1'), 'r2yiGXH7wu8=');
        assert.equal(await hashOf('/apis/events.k8s.io/v1'), 'r2yiGXH7wu8=');
      });

      test('kubectl events shows events written through either API', async () => {
        const k = kubectlFor(srv.kubeconfig);
        const own = await rest.namespace('convk');
        await rest.create(`/api/v1/namespaces/${own}/events`, {
          metadata: { name: 'from-core' },
          involvedObject: { kind: 'Pod', namespace: own, name: 'p1' },
          reason: 'CoreReason',
          message: 'core message',
          type: 'Normal',
          firstTimestamp: '2024-05-06T07:00:00Z',
          lastTimestamp: '2024-05-06T07:00:00Z',
          count: 1,
        });
        await rest.create(`/apis/events.k8s.io/v1/namespaces/${own}/events`, {
          metadata: { name: 'from-new' },
          eventTime,
          reportingController: 'c',
          reportingInstance: 'i',
          action: 'A',
          reason: 'NewReason',
          regarding: { kind: 'Pod', namespace: own, name: 'p2' },
          note: 'new note',
          type: 'Warning',
        });
        const out = await k.ok(['events', '-n', own]);
        assert.match(out, /Normal\s+CoreReason\s+Pod\/p1\s+core message/);
        assert.match(out, /Warning\s+NewReason\s+Pod\/p2\s+new note/);
        const listed = await k.json(['get', 'events.v1.events.k8s.io', '-n', own]);
        assert.deepEqual((listed.items as Array<{ metadata: { name: string } }>).map((i) => i.metadata.name).sort(), ['from-core', 'from-new']);
      });
    });
  });
}
