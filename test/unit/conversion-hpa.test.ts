/**
 * HPA conversion (src/conversion/hpa-conversion.ts) on its own: every metric source type survives
 * v2 -> v1 -> v2, the v1 annotation strings are Go's `json.Marshal` output, and what Go's decoder
 * would refuse in an annotation is ignored as kube ignores it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BEHAVIOR_ANNOTATION,
  CONDITIONS_ANNOTATION,
  CURRENT_METRICS_ANNOTATION,
  METRICS_ANNOTATION,
  hpaV1ToV2,
  hpaV2ToV1,
} from '../../src/conversion/hpa-conversion.js';

const selector = { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] };

const v2 = {
  kind: 'HorizontalPodAutoscaler',
  apiVersion: 'autoscaling/v2',
  metadata: { name: 'h', namespace: 'n', annotations: { keep: 'me' } },
  spec: {
    scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
    minReplicas: 2,
    maxReplicas: 9,
    metrics: [
      {
        type: 'Object',
        object: { describedObject: { kind: 'Service', name: 's' }, target: { type: 'Value', value: '2' }, metric: { name: 'hits', selector } },
      },
      {
        type: 'Object',
        object: { describedObject: { kind: 'Service', name: 's' }, target: { type: 'AverageValue', averageValue: '500m' }, metric: { name: 'rate' } },
      },
      { type: 'Pods', pods: { metric: { name: 'qps', selector }, target: { type: 'AverageValue', averageValue: '1k' } } },
      { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
      { type: 'ContainerResource', containerResource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 }, container: 'app' } },
      { type: 'External', external: { metric: { name: 'queue', selector }, target: { type: 'Value', value: '30' } } },
      { type: 'External', external: { metric: { name: 'lag' }, target: { type: 'AverageValue', averageValue: '4' } } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
    ],
    behavior: {
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }], tolerance: '50m' },
      scaleDown: { selectPolicy: 'Min', policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }] },
    },
  },
  status: {
    observedGeneration: 3,
    lastScaleTime: '2024-01-01T00:00:00Z',
    currentReplicas: 2,
    desiredReplicas: 3,
    currentMetrics: [
      { type: 'Object', object: { metric: { name: 'hits' }, current: { value: '3', averageValue: '1500m' }, describedObject: { kind: 'Service', name: 's' } } },
      { type: 'Pods', pods: { metric: { name: 'qps' }, current: { averageValue: '900' } } },
      { type: 'Resource', resource: { name: 'cpu', current: { averageValue: '250m', averageUtilization: 45 } } },
      { type: 'ContainerResource', containerResource: { name: 'cpu', current: { averageValue: '100m', averageUtilization: 20 }, container: 'app' } },
      { type: 'External', external: { metric: { name: 'queue' }, current: { value: '31' } } },
    ],
    conditions: [{ type: 'ScalingActive', status: 'False', lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'Bad<reason>', message: 'a & b' }],
  },
};

describe('HPA autoscaling/v1 <-> v2', () => {
  test('every metric source, behavior, status and condition survives v2 -> v1 -> v2', () => {
    const v1 = hpaV2ToV1(v2);
    assert.equal((v1.spec as Record<string, unknown>).targetCPUUtilizationPercentage, 60);
    assert.equal((v1.status as Record<string, unknown>).currentCPUUtilizationPercentage, 45);
    const back = hpaV1ToV2(v1);
    const cpu = v2.spec.metrics[v2.spec.metrics.length - 1];
    // v1 keeps the CPU target outside the annotation, so it comes back last; here it already is.
    assert.deepEqual(back.spec, { ...v2.spec, metrics: [...v2.spec.metrics.slice(0, -1), cpu] });
    assert.deepEqual(back.status, v2.status);
    assert.deepEqual(back.metadata, v2.metadata);
  });

  test('annotations are Go json.Marshal text: v1 field names, canonical quantities, HTML escaping', () => {
    const annotations = (hpaV2ToV1(v2).metadata as { annotations: Record<string, string> }).annotations;
    assert.deepEqual(Object.keys(annotations), [BEHAVIOR_ANNOTATION, CONDITIONS_ANNOTATION, CURRENT_METRICS_ANNOTATION, METRICS_ANNOTATION, 'keep']);
    assert.equal(
      annotations[BEHAVIOR_ANNOTATION],
      '{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15}],' +
        '"Tolerance":"50m"},"ScaleDown":{"StabilizationWindowSeconds":null,"SelectPolicy":"Min","Policies":[{"Type":"Percent","Value":10,"PeriodSeconds":60}],"Tolerance":null}}',
    );
    assert.equal(
      annotations[CONDITIONS_ANNOTATION],
      '[{"type":"ScalingActive","status":"False","lastTransitionTime":"2024-01-01T00:00:00Z","reason":"Bad\\u003creason\\u003e","message":"a \\u0026 b"}]',
    );
    const metrics = JSON.parse(annotations[METRICS_ANNOTATION]) as unknown[];
    assert.deepEqual(metrics[0], {
      type: 'Object',
      object: { target: { kind: 'Service', name: 's' }, metricName: 'hits', targetValue: '2', selector },
    });
    assert.deepEqual(metrics[1], {
      type: 'Object',
      object: { target: { kind: 'Service', name: 's' }, metricName: 'rate', targetValue: '0', averageValue: '500m' },
    });
    assert.deepEqual(metrics[4], { type: 'ContainerResource', containerResource: { name: 'cpu', targetAverageUtilization: 70, container: 'app' } });
    assert.equal(metrics.length, 7, 'the CPU utilization target is not in the annotation');
  });

  test('annotation values Go cannot decode are ignored; keys match case-insensitively', () => {
    const v1 = {
      kind: 'HorizontalPodAutoscaler',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: 'h',
        annotations: {
          [METRICS_ANNOTATION]: '[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"not a quantity"}}]',
          [BEHAVIOR_ANNOTATION]: '{"scaleDown":{"SELECTPOLICY":"Min"}}',
          [CONDITIONS_ANNOTATION]: '{"type":"x"}',
          [CURRENT_METRICS_ANNOTATION]: 'null',
        },
      },
      spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3 },
      status: { currentReplicas: 1, desiredReplicas: 1 },
    };
    const out = hpaV1ToV2(v1) as { metadata: Record<string, unknown>; spec: Record<string, unknown>; status: Record<string, unknown> };
    assert.deepEqual(out.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    assert.deepEqual((out.spec.behavior as Record<string, Record<string, unknown>>).scaleDown?.selectPolicy, 'Min');
    assert.equal(out.status.conditions, undefined);
    assert.deepEqual(out.status.currentMetrics, [], 'a null list decodes to an empty one, as in Go');
    assert.equal(out.metadata.annotations, undefined);
  });
});
