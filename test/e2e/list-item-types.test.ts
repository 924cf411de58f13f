/**
 * Whether list items carry `kind` and `apiVersion`, as kube-apiserver 1.36 answers (recorded from the
 * reference): a built-in type's list (JSON, YAML, CBOR, and the deletecollection answer) has items
 * without them; a custom resource's list keeps them on every item; a Table's row objects and a
 * PartialObjectMetadataList's items keep theirs (ConfigMap v1 with includeObject=Object,
 * PartialObjectMetadata meta.k8s.io/v1 otherwise).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { load as yamlLoad } from 'js-yaml';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { decodeCbor } from '../../src/codec/cbor/cbor-decoder.js';

describe('list items and their type', () => {
  let srv: TestServer;
  let ns: string;
  const post = (path: string, body: unknown): ReturnType<typeof api> =>
    api(srv.url, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const types = (items: any[]): unknown[] => items.map((i) => [i.kind, i.apiVersion]);
  const cms = (): string => `/api/v1/namespaces/${ns}/configmaps`;

  before(async () => {
    srv = await startTestServer({ featureGates: { CBORServingAndStorage: true } });
    ns = uniqueName('items');
    assert.equal((await post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
    for (const name of ['a', 'b']) assert.equal((await post(cms(), { metadata: { name, labels: { set: 'x' } }, data: { k: 'v' } })).status, 201);
  });
  after(() => srv.stop());

  test('a built-in list has items without kind and apiVersion, in JSON, YAML and CBOR, with or without a limit or resourceVersion=0', async () => {
    for (const query of ['', '?limit=1', '?resourceVersion=0']) {
      const json = await api(srv.url, `${cms()}${query}`);
      assert.equal(json.body.kind, 'ConfigMapList');
      assert.ok(json.body.items.length > 0);
      assert.deepEqual(
        types(json.body.items),
        json.body.items.map(() => [undefined, undefined]),
        `JSON ${query}`,
      );
      assert.deepEqual(Object.keys(json.body.items[0]), ['metadata', 'data']);
    }
    const yaml = await api(srv.url, cms(), { headers: { accept: 'application/yaml' } });
    const fromYaml = yamlLoad(yaml.text) as any;
    assert.equal(fromYaml.kind, 'ConfigMapList');
    assert.deepEqual(types(fromYaml.items), [
      [undefined, undefined],
      [undefined, undefined],
    ]);
    const pretty = await api(srv.url, `${cms()}?pretty=true`);
    assert.deepEqual(types(pretty.body.items), [
      [undefined, undefined],
      [undefined, undefined],
    ]);
    const res = await fetch(`${srv.url}${cms()}`, { headers: { accept: 'application/cbor' } });
    assert.equal(res.headers.get('content-type'), 'application/cbor');
    const fromCbor = decodeCbor(Buffer.from(await res.arrayBuffer()), { maxDepth: 1000 }) as any;
    assert.equal(fromCbor.kind, 'ConfigMapList');
    assert.deepEqual(types(fromCbor.items), [
      [undefined, undefined],
      [undefined, undefined],
    ]);
    assert.deepEqual(fromCbor.items[0].data, { k: 'v' });
  });

  test('Tables and metadata-only lists keep the items their type', async () => {
    const table = await api(srv.url, `${cms()}?includeObject=Object`, { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.deepEqual(
      table.body.rows.map((r: any) => [r.object.kind, r.object.apiVersion]),
      [
        ['ConfigMap', 'v1'],
        ['ConfigMap', 'v1'],
      ],
    );
    const metadataTable = await api(srv.url, cms(), { headers: { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.deepEqual(metadataTable.body.rows[0].object.kind, 'PartialObjectMetadata');
    const partial = await api(srv.url, cms(), { headers: { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' } });
    assert.deepEqual(types(partial.body.items), [
      ['PartialObjectMetadata', 'meta.k8s.io/v1'],
      ['PartialObjectMetadata', 'meta.k8s.io/v1'],
    ]);
  });

  test("a custom resource's list keeps each item's kind and apiVersion", async () => {
    const group = `${uniqueName('g')}.example.com`;
    const crd = await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        names: { plural: 'widgets', kind: 'Widget', listKind: 'WidgetList', singular: 'widget' },
        scope: 'Namespaced',
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
    assert.equal(crd.status, 201, crd.text);
    const path = `/apis/${group}/v1/namespaces/${ns}/widgets`;
    for (let i = 0; i < 200; i++) {
      if ((await api(srv.url, path)).status === 200) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal((await post(path, { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' } })).status, 201);
    const list = await api(srv.url, path);
    assert.equal(list.body.kind, 'WidgetList');
    assert.deepEqual(types(list.body.items), [['Widget', `${group}/v1`]]);
  });

  test('the answer of a deletecollection is a list like any other', async () => {
    const deleted = await api(srv.url, `${cms()}?labelSelector=set%3Dx`, { method: 'DELETE' });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(deleted.body.kind, 'ConfigMapList');
    assert.deepEqual(types(deleted.body.items), [
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });
});
