import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { definitionNames, schemaForDefinition, schemaForKind } from '../../src/schema/openapi-schema.js';

describe('openapi-schema lookups', () => {
  test('unknown definition is undefined', () => {
    assert.equal(schemaForDefinition('io.k8s.api.apps.v1.Nope'), undefined);
  });

  test('definition resolves and exposes group-version-kind', () => {
    const d = schemaForDefinition('io.k8s.api.apps.v1.Deployment');
    assert.ok(d);
    assert.equal(d.type(), 'object');
    assert.equal(d.definition, 'io.k8s.api.apps.v1.Deployment');
    assert.deepEqual(d.groupVersionKinds(), [{ group: 'apps', version: 'v1', kind: 'Deployment' }]);
    assert.ok(d.propertyNames().includes('spec'));
    assert.ok(definitionNames().length > 100);
  });

  test('containers: merge by name, list-map keys, items resolve to Container', () => {
    const d = schemaForDefinition('io.k8s.api.apps.v1.Deployment');
    const containers = d?.walk(['spec', 'template', 'spec', 'containers']);
    assert.ok(containers);
    assert.equal(containers.isList(), true);
    assert.deepEqual(containers.patchStrategies(), ['merge']);
    assert.equal(containers.patchMergeKey(), 'name');
    assert.equal(containers.listType(), 'map');
    assert.deepEqual(containers.listMapKeys(), ['name']);
    assert.equal(containers.items()?.definition, 'io.k8s.api.core.v1.Container');
    const ports = d?.walk(['spec', 'template', 'spec', 'containers', 0, 'ports']);
    assert.equal(ports?.patchMergeKey(), 'containerPort');
    assert.deepEqual(ports?.listMapKeys(), ['containerPort', 'protocol']);
  });

  test('comma-separated strategies, retainKeys on a ref, atomic lists, sets and maps', () => {
    const pod = schemaForKind('', 'v1', 'Pod');
    assert.ok(pod);
    assert.deepEqual(pod.walk(['spec', 'volumes'])?.patchStrategies(), ['merge', 'retainKeys']);
    assert.equal(pod.walk(['spec', 'tolerations'])?.listType(), 'atomic');
    assert.deepEqual(pod.walk(['spec', 'tolerations'])?.patchStrategies(), []);
    const finalizers = pod.walk(['metadata', 'finalizers']);
    assert.equal(finalizers?.listType(), 'set');
    assert.equal(finalizers?.patchMergeKey(), undefined);
    const labels = pod.walk(['metadata', 'labels']);
    assert.equal(labels?.isMap(), true);
    assert.equal(labels?.field('any-key')?.type(), 'string');
    const strategy = schemaForDefinition('io.k8s.api.apps.v1.Deployment')?.walk(['spec', 'strategy']);
    assert.deepEqual(strategy?.patchStrategies(), ['retainKeys']);
    assert.equal(strategy?.definition, 'io.k8s.api.apps.v1.DeploymentStrategy');
    assert.equal(pod.walk(['spec', 'nope']), undefined);
    assert.equal(schemaForDefinition('io.k8s.apimachinery.pkg.util.intstr.IntOrString')?.isIntOrString(), true);
  });
});
