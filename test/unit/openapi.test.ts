import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { openapiRouter, OpenApiService } from '../../src/openapi/openapi-router.js';
import { openApiV2DocumentType } from '../../src/openapi/openapi-v2-protobuf.js';

type Json = { [key: string]: unknown };

function asObject(value: unknown, what: string): Json {
  assert.ok(typeof value === 'object' && value !== null && !Array.isArray(value), `${what} is an object`);
  return value as Json;
}

const PROTOBUF_V2 = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

describe('openapi router', () => {
  let server: Server;
  let base = '';
  const service = new OpenApiService();

  before(async () => {
    const app = express();
    app.use(openapiRouter(service));
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
  });

  let v2Json: Json | undefined;
  async function v2(): Promise<Json> {
    if (v2Json) return v2Json;
    const res = await fetch(`${base}/openapi/v2`, { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    v2Json = asObject(await res.json(), 'v2 document');
    return v2Json;
  }

  test('GET /openapi/v2 serves the Swagger 2.0 document as JSON', async () => {
    const doc = await v2();
    assert.equal(doc['swagger'], '2.0');
    assert.ok(Object.keys(asObject(doc['paths'], 'paths')).includes('/apis/apps/v1/namespaces/{namespace}/deployments'));
    assert.ok(asObject(doc['definitions'], 'definitions')['io.k8s.api.core.v1.Pod']);
    // No Accept header at all means JSON too.
    const plain = await fetch(`${base}/openapi/v2`);
    assert.equal(plain.headers.get('content-type'), 'application/json');
    await plain.arrayBuffer();
  });

  test('GET /openapi/v2 serves gnostic protobuf to kubectl', async () => {
    const res = await fetch(`${base}/openapi/v2`, { headers: { Accept: `${PROTOBUF_V2}, application/json;q=0.5` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const bytes = new Uint8Array(await res.arrayBuffer());
    const type = await openApiV2DocumentType();
    const decoded = type.toObject(type.decode(bytes));
    const json = await v2();
    assert.equal(decoded['swagger'], '2.0');
    const defs = asObject(decoded['definitions'], 'definitions')['additional_properties'];
    assert.ok(Array.isArray(defs));
    assert.equal(defs.length, Object.keys(asObject(json['definitions'], 'definitions')).length);
    const paths = asObject(decoded['paths'], 'paths')['path'];
    assert.ok(Array.isArray(paths));
    assert.equal(paths.length, Object.keys(asObject(json['paths'], 'paths')).length);

    // Vendor extensions become NamedAny entries holding YAML, as gnostic writes them.
    const deployment = defs.map((d) => asObject(d, 'named schema')).find((d) => d['name'] === 'io.k8s.api.apps.v1.Deployment');
    assert.ok(deployment);
    const ext = asObject(deployment['value'], 'schema')['vendor_extension'];
    assert.ok(Array.isArray(ext));
    const gvk = ext.map((e) => asObject(e, 'NamedAny')).find((e) => e['name'] === 'x-kubernetes-group-version-kind');
    assert.ok(gvk);
    assert.equal(asObject(gvk['value'], 'Any')['yaml'], '- group: apps\n  kind: Deployment\n  version: v1\n');
  });

  test('GET /openapi/v2 refuses media types it cannot produce', async () => {
    const res = await fetch(`${base}/openapi/v2`, { headers: { Accept: 'text/html' } });
    assert.equal(res.status, 406);
    await res.arrayBuffer();
  });

  test('GET /openapi/v2 has an ETag and answers If-None-Match with 304', async () => {
    const first = await fetch(`${base}/openapi/v2`);
    await first.arrayBuffer();
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[0-9A-F]{128}"$/);
    const again = await fetch(`${base}/openapi/v2`, { headers: { 'If-None-Match': etag ?? '' } });
    assert.equal(again.status, 304);
    assert.equal(again.headers.get('etag'), etag);
    assert.equal((await again.arrayBuffer()).byteLength, 0);
    const pb = await fetch(`${base}/openapi/v2`, { headers: { Accept: PROTOBUF_V2, 'If-None-Match': etag ?? '' } });
    assert.equal(pb.status, 304);
    const other = await fetch(`${base}/openapi/v2`, { headers: { 'If-None-Match': '"0"' } });
    assert.equal(other.status, 200);
    await other.arrayBuffer();
  });

  let index: Json | undefined;
  async function v3Index(): Promise<Json> {
    if (index) return index;
    const res = await fetch(`${base}/openapi/v3`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    index = asObject(asObject(await res.json(), 'index')['paths'], 'index paths');
    return index;
  }

  function urlOf(idx: Json, key: string): string {
    const url = asObject(idx[key], key)['serverRelativeURL'];
    assert.equal(typeof url, 'string');
    return String(url);
  }

  test('GET /openapi/v3 lists every group-version with hashed URLs', async () => {
    const idx = await v3Index();
    for (const key of ['api', 'api/v1', 'apis', 'apis/apps', 'apis/apps/v1', 'apis/batch/v1', 'version']) {
      assert.ok(idx[key], `index lists ${key}`);
    }
    assert.match(urlOf(idx, 'api/v1'), /^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
    assert.match(urlOf(idx, 'apis/apps/v1'), /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
  });

  test('the apps/v1 document is self-contained OpenAPI 3.0 with fieldValidation on writes', async () => {
    const idx = await v3Index();
    const url = urlOf(idx, 'apis/apps/v1');
    const res = await fetch(`${base}${url}`, { headers: { Accept: 'application/json' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'public, immutable');
    assert.ok(res.headers.get('expires'));
    assert.equal(res.headers.get('etag'), `"${new URL(url, base).searchParams.get('hash') ?? ''}"`);
    const doc = asObject(await res.json(), 'v3 document');
    assert.equal(doc['openapi'], '3.0.0');
    const schemas = asObject(asObject(doc['components'], 'components')['schemas'], 'schemas');
    assert.ok(schemas['io.k8s.api.apps.v1.Deployment']);

    // Every reference anywhere in the document resolves inside it.
    const refs = new Set<string>();
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (typeof v === 'object' && v !== null) {
        for (const [k, member] of Object.entries(v)) {
          if (k === '$ref' && typeof member === 'string') refs.add(member);
          else walk(member);
        }
      }
    };
    walk(doc);
    assert.ok(refs.size > 10);
    for (const ref of refs) {
      assert.ok(ref.startsWith('#/components/schemas/'), `v3 ref ${ref}`);
      assert.ok(schemas[ref.slice('#/components/schemas/'.length)], `${ref} resolves`);
    }
    assert.ok(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'], 'transitive refs are included');
    assert.equal(schemas['io.k8s.api.core.v1.Pod'], undefined, 'unreferenced schemas are left out');

    // Only this group-version's paths; every write declares fieldValidation inline.
    const paths = asObject(doc['paths'], 'paths');
    assert.ok(Object.keys(paths).every((p) => p.startsWith('/apis/apps/v1/')));
    let writes = 0;
    for (const [path, item] of Object.entries(paths)) {
      for (const method of ['post', 'put', 'patch']) {
        const op = asObject(item, path)[method];
        if (op === undefined) continue;
        writes++;
        const params = asObject(op, `${method} ${path}`)['parameters'];
        assert.ok(Array.isArray(params));
        assert.ok(
          params.some((p) => asObject(p, 'parameter')['name'] === 'fieldValidation'),
          `${method} ${path} declares fieldValidation`,
        );
        const body = asObject(asObject(op, 'op')['requestBody'], `${method} ${path} requestBody`);
        assert.ok(asObject(body['content'], 'content'));
      }
    }
    assert.ok(writes >= 10);
    const patch = asObject(asObject(paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'], 'item')['patch'], 'patch');
    assert.deepEqual(asObject(patch, 'patch')['x-kubernetes-group-version-kind'], { group: 'apps', kind: 'Deployment', version: 'v1' });
    const patchContent = asObject(asObject(patch['requestBody'], 'body')['content'], 'content');
    assert.ok(patchContent['application/strategic-merge-patch+json']);
    assert.ok(patchContent['application/apply-patch+yaml']);
  });

  test('v3 documents answer If-None-Match, stale hashes and unknown group-versions like kube', async () => {
    const res = await fetch(`${base}/openapi/v3/api/v1`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), null, 'no immutable caching without ?hash');
    const etag = res.headers.get('etag') ?? '';
    const doc = asObject(await res.json(), 'core document');
    assert.ok(asObject(asObject(doc['components'], 'components')['schemas'], 'schemas')['io.k8s.api.core.v1.Pod']);

    const cached = await fetch(`${base}/openapi/v3/api/v1`, { headers: { 'If-None-Match': etag } });
    assert.equal(cached.status, 304);

    const stale = await fetch(`${base}/openapi/v3/api/v1?hash=ABC`, { redirect: 'manual' });
    assert.equal(stale.status, 301);
    assert.equal(stale.headers.get('location'), `/openapi/v3/api/v1?hash=${etag.slice(1, -1)}`);
    await stale.arrayBuffer();

    const missing = await fetch(`${base}/openapi/v3/apis/nope.example.com/v1`);
    assert.equal(missing.status, 404);
    await missing.arrayBuffer();

    const group = await fetch(`${base}/openapi/v3/apis/apps`);
    assert.equal(group.status, 200);
    const groupPaths = asObject(asObject(await group.json(), 'group document')['paths'], 'paths');
    assert.deepEqual(Object.keys(groupPaths), ['/apis/apps/']);

    const index1 = await fetch(`${base}/openapi/v3`);
    const indexEtag = index1.headers.get('etag') ?? '';
    await index1.arrayBuffer();
    const index2 = await fetch(`${base}/openapi/v3`, { headers: { 'If-None-Match': indexEtag } });
    assert.equal(index2.status, 304);
  });

  test('large documents are gzipped for clients that accept it', async () => {
    // fetch decompresses transparently; the header shows what was on the wire.
    const res = await fetch(`${base}/openapi/v2`, { headers: { 'Accept-Encoding': 'gzip' } });
    assert.equal(res.headers.get('content-encoding'), 'gzip');
    const doc = asObject(await res.json(), 'v2');
    assert.equal(doc['swagger'], '2.0');
  });
});
