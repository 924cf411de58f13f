/**
 * Server-side apply of a custom resource types its `metadata` as ObjectMeta, a struct: a field
 * ObjectMeta does not declare is refused as structured-merge-diff refuses it
 * (`.metadata.unknownMeta: field not declared in schema`), even where the CRD keeps unknown fields
 * elsewhere (kube's FieldValidation conformance test of root and embedded metadata).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';

let srv: TestServer;
before(async () => {
  srv = await startTestServer();
});
after(async () => {
  await srv.stop();
});

test('an applied custom resource with an unknown metadata field is refused', async () => {
  const group = `${uniqueName('meta')}.example.com`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      scope: 'Cluster',
      names: { plural: 'gadgets', kind: 'Gadget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
        },
      ],
    },
  };
  const json = { 'content-type': 'application/json' };
  assert.equal(
    (await api(srv.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', headers: json, body: JSON.stringify(crd) })).status,
    201,
  );
  const path = `/apis/${group}/v1/gadgets`;
  for (let i = 0; (await api(srv.url, path)).status !== 200; i++) {
    assert.ok(i < 200, 'custom resource not served');
    await new Promise((r) => setTimeout(r, 50));
  }
  const body = `apiVersion: ${group}/v1\nkind: Gadget\nmetadata:\n  name: g1\n  unknownMeta: x\nspec:\n  anything: 1\n`;
  const r = await api(srv.url, `${path}/g1?fieldManager=m&fieldValidation=Strict`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/apply-patch+yaml' },
    body,
  });
  assert.ok(r.status >= 400, r.text);
  assert.match(r.text, /\.metadata\.unknownMeta: field not declared in schema/);
  // Declared metadata fields and unknown fields under spec (kept) are applied.
  const ok = await api(srv.url, `${path}/g1?fieldManager=m&fieldValidation=Strict`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/apply-patch+yaml' },
    body: `apiVersion: ${group}/v1\nkind: Gadget\nmetadata:\n  name: g1\n  labels:\n    a: b\nspec:\n  anything: 1\n`,
  });
  assert.equal(ok.status, 201, ok.text);
});
