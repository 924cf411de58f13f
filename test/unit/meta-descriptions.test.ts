/**
 * addMetaDescriptions (src/openapi/meta-descriptions.ts): describes the listed definitions, their
 * properties and `metadata` fields, writes each description first as kube-openapi does, and leaves
 * everything else (and what the document lacks) alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addMetaDescriptions, metaDescriptions } from '../../src/openapi/meta-descriptions.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

test('describes listed definitions, properties and metadata fields only', () => {
  const doc = {
    definitions: {
      [`${META}.ObjectMeta`]: { type: 'object', properties: { name: { type: 'string' }, uid: { type: 'string' } } },
      'io.example.v1.Thing': { properties: { metadata: { $ref: `#/definitions/${META}.ObjectMeta` }, spec: { type: 'object' } } },
      'io.example.v1.Other': { properties: { metadata: { $ref: `#/definitions/${META}.ObjectMeta` } } },
    },
  };
  addMetaDescriptions(doc, {
    definitions: {
      [`${META}.ObjectMeta`]: { description: 'Meta.', properties: { name: 'The name.', missing: 'Not there.' } },
      [`${META}.ListMeta`]: { description: 'Absent from the document.' },
    },
    metadataFields: { 'io.example.v1.Thing': "Standard object's metadata." },
  });
  const meta = doc.definitions[`${META}.ObjectMeta`];
  assert.deepEqual(Object.keys(meta), ['description', 'type', 'properties']);
  assert.deepEqual(meta.properties, { name: { description: 'The name.', type: 'string' }, uid: { type: 'string' } });
  assert.deepEqual(doc.definitions['io.example.v1.Thing'].properties.metadata, {
    description: "Standard object's metadata.",
    $ref: `#/definitions/${META}.ObjectMeta`,
  });
  assert.deepEqual(doc.definitions['io.example.v1.Other'].properties.metadata, { $ref: `#/definitions/${META}.ObjectMeta` });
  assert.equal(`${META}.ListMeta` in doc.definitions, false);
});

test('the recorded descriptions cover ObjectMeta, ListMeta and what they reference', () => {
  const recorded = metaDescriptions();
  for (const name of ['ObjectMeta', 'ListMeta', 'OwnerReference', 'ManagedFieldsEntry', 'FieldsV1', 'Time']) {
    assert.ok(recorded.definitions[`${META}.${name}`]?.description, name);
  }
  assert.match(recorded.definitions[`${META}.ObjectMeta`]?.properties?.['creationTimestamp'] ?? '', /^CreationTimestamp is a timestamp/);
});
