/**
 * `kubectl explain KIND.metadata` describes ObjectMeta's fields for built-in and custom resources as
 * on kube-apiserver 1.36: each command of test/fixtures/meta-descriptions/explain.json prints what the
 * reference printed (test/golden/meta-descriptions/explain.json, scripts/capture-meta-descriptions.mjs).
 * Also: the meta definitions of /openapi/v2 (JSON and protobuf) and of a CRD's /openapi/v3 document
 * carry the recorded descriptions, and the documents' ETags stay stable.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { kubectlFor, type Kubectl } from './kubectl.js';

const fixtures = join(process.cwd(), 'test', 'fixtures', 'meta-descriptions');
const crd = JSON.parse(readFileSync(join(fixtures, 'crd.json'), 'utf8'));
const golden = JSON.parse(readFileSync(join(process.cwd(), 'test', 'golden', 'meta-descriptions', 'explain.json'), 'utf8')) as Array<{
  args: string[];
  stdout: string;
}>;
const recorded = JSON.parse(readFileSync(join(process.cwd(), 'schema', 'meta-descriptions.json'), 'utf8'));
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

let srv: TestServer;
let k: Kubectl;

before(async () => {
  srv = await startTestServer();
  k = kubectlFor(srv.kubeconfig);
  const created = await api(srv.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(crd),
  });
  assert.equal(created.status, 201, created.text);
  await k.ok(['wait', '--for=condition=Established', `crd/${crd.metadata.name}`, '--timeout=10s']);
});

after(async () => {
  await srv.stop();
});

test('kubectl explain of metadata prints what kube-apiserver printed', async () => {
  assert.equal(golden.length, 10);
  for (const { args, stdout } of golden) {
    assert.equal(await k.ok(args), stdout, `kubectl ${args.join(' ')}`);
  }
  // The e2e check of CustomResourcePublishOpenAPI.
  const out = await k.ok(['explain', `${crd.spec.names.plural}.metadata`]);
  assert.match(out, /DESCRIPTION:.*Standard object's metadata.*FIELDS:.*creationTimestamp.*<string>.*CreationTimestamp is a timestamp/s);
});

test('the meta definitions carry the recorded descriptions in /openapi/v2 and a CRD /openapi/v3 document', async () => {
  const v2 = await api(srv.url, '/openapi/v2');
  assert.equal(v2.status, 200);
  const v3 = await api(srv.url, `/openapi/v3/apis/${crd.spec.group}/v1`);
  assert.equal(v3.status, 200);
  for (const [name, entry] of Object.entries<any>(recorded.definitions)) {
    for (const def of [v2.body.definitions[name], v3.body.components.schemas[name]]) {
      if (def === undefined) continue;
      assert.equal(def.description, entry.description, name);
      for (const [field, description] of Object.entries(entry.properties ?? {})) {
        assert.equal(def.properties[field].description, description, `${name}.${field}`);
      }
    }
  }
  assert.ok(v3.body.components.schemas[OBJECT_META], 'the CRD document embeds ObjectMeta');
  assert.equal(v2.body.definitions['io.k8s.api.core.v1.Pod'].properties.metadata.description, recorded.metadataFields['io.k8s.api.core.v1.Pod']);
  // Other definitions stay undescribed (the schema facts carry no descriptions).
  assert.equal(v2.body.definitions['io.k8s.api.core.v1.PodSpec'].properties.containers.description, undefined);
});

test('the protobuf /openapi/v2 shares the JSON form ETag, and a repeat is 304', async () => {
  const json = await api(srv.url, '/openapi/v2');
  const etag = json.headers.get('etag');
  assert.ok(etag);
  const pb = await fetch(`${srv.url}/openapi/v2`, { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
  const bytes = Buffer.from(await pb.arrayBuffer());
  assert.equal(pb.status, 200);
  assert.equal(pb.headers.get('etag'), etag);
  assert.ok(bytes.includes(Buffer.from('CreationTimestamp is a timestamp')), 'the protobuf form has the descriptions');
  const again = await fetch(`${srv.url}/openapi/v2`, { headers: { 'if-none-match': etag } });
  assert.equal(again.status, 304);
});
