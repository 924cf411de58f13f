/**
 * kube's NonStructuralSchema condition, for CRDs stored before Capstan refused non-structural
 * schemas: True with kube's aggregate of the findings, Unknown when no structural schema can be
 * built, absent for structural schemas.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nonStructuralCondition } from '../../src/crd/crd-status.js';

const crd = (...schemas: unknown[]) => ({
  spec: { versions: schemas.map((s, i) => ({ name: `v${i + 1}`, schema: { openAPIV3Schema: s } })) },
});

test('a structural schema has no condition', () => {
  assert.equal(nonStructuralCondition(crd({ type: 'object', properties: { spec: { type: 'object' } } })), undefined);
});

test('violations are listed as kube aggregates them', () => {
  const cond = nonStructuralCondition(crd({ type: 'object' }, { type: 'object', properties: { a: {}, b: { type: 'array' } } }));
  assert.deepEqual(cond, {
    type: 'NonStructuralSchema',
    status: 'True',
    reason: 'Violations',
    message:
      '[spec.versions[1].schema.openAPIV3Schema.properties[a].type: Required value: must not be empty for specified object fields, spec.versions[1].schema.openAPIV3Schema.properties[b].items: Required value: must be specified]',
  });
});

test('a schema no structural form exists for is Unknown', () => {
  const cond = nonStructuralCondition(crd({ type: 'object', properties: { a: { $ref: '#/x' } } }));
  assert.deepEqual(cond, {
    type: 'NonStructuralSchema',
    status: 'Unknown',
    reason: 'StructuralError',
    message: "failed to check validation schema for version v1: OpenAPIV3Schema '$ref' is not supported",
  });
});
