/**
 * Discovery content negotiation as kube-apiserver 1.36 answers it (each answer first recorded from
 * the reference, with the CBORServingAndStorage gate on and off): with the gate on, only
 * `/apis/GROUP/VERSION` is served in CBOR (the same APIResourceList as the JSON one); 406 is worded by
 * go-restful on `/version`, `/api`, `/api/VERSION` and `/apis/GROUP/VERSION` (with the route's
 * representations and empty details) and by kube's own handler on `/apis`, `/apis/GROUP` and a custom
 * resource group version (served by the CRD discovery handler, never in CBOR).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultConfig } from '../../src/cli/flags.js';
import { decodeCbor } from '../../src/codec/cbor/cbor-decoder.js';
import { startTestServer, type TestServer } from '../helpers/capstan.js';

let gateOn: TestServer;
let gateOff: TestServer;
before(async () => {
  gateOn = await startTestServer({ featureGates: { ...defaultConfig().featureGates, CBORServingAndStorage: true } });
  gateOff = await startTestServer();
});
after(async () => {
  await gateOn?.stop();
  await gateOff?.stop();
});

const RESTFUL = (types: string): string => `406: Not Acceptable\n\nAvailable representations: ${types}`;
const BASE = 'application/json, application/yaml, application/vnd.kubernetes.protobuf';
const HANDLER = `only the following media types are accepted: ${BASE}`;

async function get(url: string, path: string, accept: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const res = await fetch(url + path, { headers: { accept } });
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

test('with the gate on, a group version lists its resources in CBOR; the other discovery paths do not', async () => {
  const cbor = await get(gateOn.url, '/apis/apps/v1', 'application/cbor;q=0.9, application/json;q=0.5');
  assert.equal(cbor.status, 200);
  assert.equal(cbor.type, 'application/cbor');
  assert.equal(cbor.body.subarray(0, 3).toString('hex'), 'd9d9f7', 'self-described CBOR');
  const json = await get(gateOn.url, '/apis/apps/v1', 'application/json');
  assert.deepEqual(decodeCbor(cbor.body, { maxDepth: 1000 }), JSON.parse(json.body.toString('utf8')));
  for (const path of ['/version', '/api', '/apis', '/apis/apps']) {
    const fallback = await get(gateOn.url, path, 'application/cbor;q=0.9, application/json;q=0.5');
    assert.equal(fallback.status, 200, path);
    assert.equal(fallback.type, 'application/json', path);
  }
});

test('406 answers are worded per discovery path, gate on and off', async () => {
  const cases: [TestServer, string, string, string, boolean][] = [
    [gateOn, '/version', 'application/cbor', RESTFUL('application/json'), true],
    [gateOn, '/api', 'application/cbor', RESTFUL(BASE), true],
    [gateOn, '/apis', 'application/cbor', HANDLER, false],
    [gateOn, '/apis/apps', 'application/cbor', HANDLER, false],
    [gateOn, '/apis/apps/v1', 'application/xml', RESTFUL(`${BASE}, application/cbor`), true],
    [gateOff, '/version', 'text/plain', RESTFUL('application/json'), true],
    [gateOff, '/api/v1', 'application/xml', RESTFUL(BASE), true],
    [gateOff, '/apis/apps/v1', 'application/cbor', RESTFUL(BASE), true],
    [gateOff, '/apis', 'application/xml', HANDLER, false],
  ];
  for (const [srv, path, accept, message, withDetails] of cases) {
    const got = await get(srv.url, path, accept);
    assert.equal(got.status, 406, `${path} ${accept}`);
    assert.equal(got.type, 'application/json');
    const status = JSON.parse(got.body.toString('utf8')) as Record<string, unknown>;
    assert.equal(status.message, message, `${path} ${accept}`);
    assert.equal(status.reason, 'NotAcceptable');
    assert.equal('details' in status, withDetails, `${path}: details`);
  }
});

test("a custom resource group version is served by kube's CRD discovery handler: no CBOR, its handler's 406", async () => {
  const group = 'cbor-discovery.example.com';
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gizmos.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'gizmos', kind: 'Gizmo' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  const created = await fetch(`${gateOn.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(crd),
  });
  assert.equal(created.status, 201);
  const path = `/apis/${group}/v1`;
  for (let i = 0; (await get(gateOn.url, path, 'application/json')).status !== 200; i++) {
    assert.ok(i < 200, 'custom resource group version not served');
    await new Promise((r) => setTimeout(r, 50));
  }
  const refused = await get(gateOn.url, path, 'application/cbor');
  assert.equal(refused.status, 406);
  const status = JSON.parse(refused.body.toString('utf8')) as Record<string, unknown>;
  assert.equal(status.message, HANDLER);
  assert.equal('details' in status, false);
  assert.match(refused.body.toString('utf8'), /^\{\n {2}"kind": "Status"/, 'indented JSON');
  const fallback = await get(gateOn.url, path, 'application/cbor;q=0.9, application/json;q=0.5');
  assert.equal(fallback.status, 200);
  assert.equal(fallback.type, 'application/json');
});
