/**
 * The custom resource facts a catalogue keeps for the CRD registrar (catalog/custom-resource-facts.ts):
 * a schema per served apiVersion and kind, a conversion webhook per group and kind (found from any
 * of the group's versions), both forgotten when the registrar unserves them, and each catalogue's
 * facts its own (servers in one process, or workers, never see each other's CRDs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResourceCatalog } from '../../src/catalog/resource-catalog.js';
import type { ConversionWebhook } from '../../src/catalog/custom-resource-facts.js';

const schema = { type: 'object', properties: { spec: { type: 'object' } } };

function webhook(crdName: string): ConversionWebhook {
  return { crdName, reviewVersions: ['v1'], post: (review) => Promise.resolve(review) };
}

test('a schema is found by the apiVersion and kind it was recorded for, until it is forgotten', () => {
  const facts = ResourceCatalog.builtIn().customResources;
  facts.setSchema('example.com/v1', 'Widget', { cacheKey: 'uid/5/v1', schema });
  assert.deepEqual(facts.schemaOf('example.com/v1', 'Widget'), { cacheKey: 'uid/5/v1', schema });
  assert.equal(facts.schemaOf('example.com/v2', 'Widget'), undefined);
  assert.equal(facts.schemaOf('example.com/v1', 'Gadget'), undefined);
  facts.setSchema('example.com/v1', 'Widget', undefined);
  assert.equal(facts.schemaOf('example.com/v1', 'Widget'), undefined);
});

test("a conversion webhook answers for every version of its CRD's group, until it is forgotten", () => {
  const facts = ResourceCatalog.builtIn().customResources;
  assert.equal(facts.anyConversion(), false);
  const conversion = webhook('widgets.example.com');
  facts.setConversion('example.com', 'Widget', conversion);
  assert.equal(facts.anyConversion(), true);
  assert.equal(facts.conversionOf('example.com/v1', 'Widget'), conversion);
  assert.equal(facts.conversionOf('example.com/v2beta1', 'Widget'), conversion);
  assert.equal(facts.conversionOf('other.example.com/v1', 'Widget'), undefined);
  assert.equal(facts.conversionOf('example.com/v1', 'Gadget'), undefined);
  facts.setConversion('example.com', 'Widget', undefined);
  assert.equal(facts.anyConversion(), false);
  assert.equal(facts.conversionOf('example.com/v1', 'Widget'), undefined);
});

test("each catalogue has its own facts: one server's CRDs are unknown to another's", () => {
  const a = ResourceCatalog.builtIn();
  const b = ResourceCatalog.builtIn();
  a.customResources.setSchema('example.com/v1', 'Widget', { cacheKey: 'uid/1/v1', schema });
  a.customResources.setConversion('example.com', 'Widget', webhook('widgets.example.com'));
  assert.equal(b.customResources.schemaOf('example.com/v1', 'Widget'), undefined);
  assert.equal(b.customResources.anyConversion(), false);
  assert.equal(b.customResources.conversionOf('example.com/v1', 'Widget'), undefined);
});
