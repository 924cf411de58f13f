/**
 * The schema folder's derived files agree with the documents they come from (scripts/gen-schema.mjs
 * writes both): the server reads the definitions alone, the served document and the Go tools read the
 * whole one.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { schemaPath } from '../../src/schema/schema-files.js';
import { definitionNames, schemaForDefinition } from '../../src/schema/openapi-schema.js';

test('openapi-v2-definitions.json holds exactly the definitions of openapi-v2.json, in the same order', () => {
  const whole = JSON.parse(readFileSync(schemaPath('openapi-v2.json'), 'utf8')) as { definitions: Record<string, unknown> };
  const text = readFileSync(schemaPath('openapi-v2-definitions.json'), 'utf8');
  assert.equal(text, JSON.stringify({ definitions: whole.definitions }), 'regenerate with npm run gen:schema');
  assert.deepEqual(definitionNames(), Object.keys(whole.definitions));
  assert.deepEqual(schemaForDefinition('io.k8s.api.core.v1.ConfigMap')?.groupVersionKinds(), [{ group: '', version: 'v1', kind: 'ConfigMap' }]);
});
