import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { load } from 'js-yaml';
import { ResourceCatalog } from '../../src/catalog/resource-catalog.js';
import { DEFAULT_VERSION_INFO, discoveryRouter } from '../../src/discovery/discovery-router.js';
import { storageVersionHash } from '../../src/discovery/discovery-documents.js';

const V2 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const V2BETA1 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList';
const V2_NOPEER = `${V2};profile=nopeer`;
/** What kubectl / client-go 1.36 sends. */
const KUBECTL_ACCEPT = `${V2_NOPEER},${V2},application/json`;

type Json = Record<string, unknown>;

interface Server0 {
  base: string;
  port: number;
  close: () => Promise<void>;
}

async function start(catalog: ResourceCatalog): Promise<Server0> {
  const app = express();
  app.use(discoveryRouter(catalog, { version: DEFAULT_VERSION_INFO }));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

async function getJson(url: string, accept?: string): Promise<{ res: Response; body: Json }> {
  const res = await fetch(url, { headers: accept ? { accept } : {} });
  const body = JSON.parse(await res.text()) as Json;
  return { res, body };
}

function asArray(v: unknown): Json[] {
  assert.ok(Array.isArray(v), 'expected an array');
  return v as Json[];
}

function find(list: Json[], key: string, value: unknown): Json {
  const hit = list.find((x) => x[key] === value);
  assert.ok(hit, `no entry with ${key}=${String(value)}`);
  return hit;
}

describe('discovery', () => {
  let srv: Server0;
  before(async () => {
    srv = await start(ResourceCatalog.builtIn());
  });
  after(async () => {
    await srv.close();
  });

  test('GET /version reports 1.36 with kube field order, indented JSON', async () => {
    const res = await fetch(`${srv.base}/version`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const text = await res.text();
    assert.ok(text.startsWith('{\n  "major": "1",\n  "minor": "36",'));
    const body = JSON.parse(text) as Json;
    assert.deepEqual(Object.keys(body), [
      'major',
      'minor',
      'emulationMajor',
      'emulationMinor',
      'minCompatibilityMajor',
      'minCompatibilityMinor',
      'gitVersion',
      'gitCommit',
      'gitTreeState',
      'buildDate',
      'goVersion',
      'compiler',
      'platform',
    ]);
    assert.match(String(body.gitVersion), /^v1\.36\.0\+[0-9A-Za-z.-]+$/);
    assert.equal(body.emulationMinor, '36');
  });

  test('GET /api is an unversioned APIVersions with the server address', async () => {
    const { res, body } = await getJson(`${srv.base}/api`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.equal(res.headers.get('etag'), null);
    assert.deepEqual(body, {
      kind: 'APIVersions',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${srv.port}` }],
    });
  });

  test('GET /api/v1 lists resources and subresources sorted by name, without apiVersion', async () => {
    const { res, body } = await getJson(`${srv.base}/api/v1`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(body), ['kind', 'groupVersion', 'resources']);
    assert.equal(body.kind, 'APIResourceList');
    assert.equal(body.groupVersion, 'v1');
    const resources = asArray(body.resources);
    const names = resources.map((r) => String(r.name));
    assert.deepEqual(names, [...names].sort());
    assert.ok(names.indexOf('pods') < names.indexOf('pods/status'));
    assert.ok(names.indexOf('pods/status') < names.indexOf('podtemplates'));

    const pods = find(resources, 'name', 'pods');
    assert.deepEqual(Object.keys(pods), ['name', 'singularName', 'namespaced', 'kind', 'verbs', 'shortNames', 'categories', 'storageVersionHash']);
    assert.equal(pods.storageVersionHash, 'xPOwRZ+Yhw8='); // kube-apiserver's value for /v1/Pod
    assert.deepEqual(pods.shortNames, ['po']);
    assert.deepEqual(pods.categories, ['all']);

    assert.deepEqual(find(resources, 'name', 'pods/status'), {
      name: 'pods/status',
      singularName: '',
      namespaced: true,
      kind: 'Pod',
      verbs: ['get', 'patch', 'update'],
    });
    assert.deepEqual(find(resources, 'name', 'pods/eviction'), {
      name: 'pods/eviction',
      singularName: '',
      namespaced: true,
      group: 'policy',
      version: 'v1',
      kind: 'Eviction',
      verbs: ['create'],
    });
    // Virtual, create-only types: no storage hash, no empty arrays.
    assert.deepEqual(find(resources, 'name', 'bindings'), {
      name: 'bindings',
      singularName: 'binding',
      namespaced: true,
      kind: 'Binding',
      verbs: ['create'],
    });
    assert.equal(find(resources, 'name', 'namespaces').namespaced, false);
  });

  test('GET /apis lists named groups, preferred version first', async () => {
    const { res, body } = await getJson(`${srv.base}/apis`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(body), ['kind', 'apiVersion', 'groups']);
    assert.equal(body.kind, 'APIGroupList');
    assert.equal(body.apiVersion, 'v1');
    const groups = asArray(body.groups);
    assert.equal(groups[0]?.name, 'apiregistration.k8s.io');
    assert.ok(!groups.some((g) => g.name === ''));
    const autoscaling = find(groups, 'name', 'autoscaling');
    assert.deepEqual(autoscaling, {
      name: 'autoscaling',
      versions: [
        { groupVersion: 'autoscaling/v2', version: 'v2' },
        { groupVersion: 'autoscaling/v1', version: 'v1' },
      ],
      preferredVersion: { groupVersion: 'autoscaling/v2', version: 'v2' },
    });
  });

  test('GET /apis/apps and /apis/apps/v1', async () => {
    const group = await getJson(`${srv.base}/apis/apps`);
    assert.deepEqual(group.body, {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'apps',
      versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    });
    const list = await getJson(`${srv.base}/apis/apps/v1`);
    assert.deepEqual(Object.keys(list.body), ['kind', 'apiVersion', 'groupVersion', 'resources']);
    const resources = asArray(list.body.resources);
    assert.equal(find(resources, 'name', 'deployments').storageVersionHash, '8aSe+NMegvE=');
    const scale = find(resources, 'name', 'deployments/scale');
    assert.deepEqual(Object.keys(scale), ['name', 'singularName', 'namespaced', 'group', 'version', 'kind', 'verbs']);
    assert.deepEqual(scale, {
      name: 'deployments/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
  });

  test('unknown groups and versions are 404 page not found', async () => {
    for (const path of ['/apis/nope.example.com', '/apis/apps/v9', '/apis/nope.example.com/v1', '/api/v2']) {
      const res = await fetch(`${srv.base}${path}`);
      assert.equal(res.status, 404, path);
      assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
      assert.equal(await res.text(), '404 page not found\n');
    }
  });

  test('aggregated /apis: v2 document, scopes, subresources, content type', async () => {
    const { res, body } = await getJson(`${srv.base}/apis`, KUBECTL_ACCEPT);
    assert.equal(res.status, 200);
    // profile=nopeer is honoured and not echoed, as kube does.
    assert.equal(res.headers.get('content-type'), V2);
    assert.equal(res.headers.get('vary'), 'Accept');
    assert.equal(res.headers.get('cache-control'), 'public');
    assert.match(res.headers.get('etag') ?? '', /^"[0-9A-F]{128}"$/);
    assert.equal(body.kind, 'APIGroupDiscoveryList');
    assert.equal(body.apiVersion, 'apidiscovery.k8s.io/v2');
    assert.deepEqual(body.metadata, {});
    const items = asArray(body.items);
    assert.ok(items.every((i) => (i.metadata as Json).name !== undefined));
    const apps = items.find((i) => (i.metadata as Json).name === 'apps');
    assert.ok(apps);
    const v1 = asArray(apps.versions)[0];
    assert.ok(v1);
    assert.deepEqual(Object.keys(v1), ['version', 'resources', 'freshness']);
    assert.equal(v1.freshness, 'Current');
    const deployments = find(asArray(v1.resources), 'resource', 'deployments');
    assert.deepEqual(deployments, {
      resource: 'deployments',
      responseKind: { group: '', version: '', kind: 'Deployment' },
      scope: 'Namespaced',
      singularResource: 'deployment',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['deploy'],
      categories: ['all'],
      subresources: [
        { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get', 'patch', 'update'] },
        { subresource: 'status', responseKind: { group: '', version: '', kind: 'Deployment' }, verbs: ['get', 'patch', 'update'] },
      ],
    });
    const autoscaling = items.find((i) => (i.metadata as Json).name === 'autoscaling');
    assert.deepEqual(
      asArray(autoscaling?.versions).map((v) => v.version),
      ['v2', 'v1'],
    );
  });

  test('aggregated /api: the core group with pods and cluster-scoped namespaces', async () => {
    const { res, body } = await getJson(`${srv.base}/api`, V2);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), V2);
    const items = asArray(body.items);
    assert.equal(items.length, 1);
    assert.deepEqual(items[0]?.metadata, {});
    const resources = asArray(asArray(items[0]?.versions)[0]?.resources);
    const pods = find(resources, 'resource', 'pods');
    assert.equal(pods.scope, 'Namespaced');
    const subs = asArray(pods.subresources);
    assert.deepEqual(
      subs.map((s) => s.subresource),
      [...subs.map((s) => String(s.subresource))].sort(),
    );
    assert.deepEqual(find(subs, 'subresource', 'status'), {
      subresource: 'status',
      responseKind: { group: '', version: '', kind: 'Pod' },
      verbs: ['get', 'patch', 'update'],
    });
    assert.deepEqual(find(subs, 'subresource', 'eviction').responseKind, { group: 'policy', version: 'v1', kind: 'Eviction' });
    assert.equal(find(resources, 'resource', 'namespaces').scope, 'Cluster');
    const bindings = find(resources, 'resource', 'bindings');
    assert.equal(bindings.shortNames, undefined);
    assert.equal(bindings.subresources, undefined);
  });

  test('ETag and If-None-Match give 304 for /api and /apis', async () => {
    for (const path of ['/api', '/apis']) {
      const first = await fetch(`${srv.base}${path}`, { headers: { accept: V2 } });
      await first.arrayBuffer();
      const etag = first.headers.get('etag');
      assert.ok(etag);
      const again = await fetch(`${srv.base}${path}`, { headers: { accept: V2, 'if-none-match': etag } });
      assert.equal(again.status, 304, path);
      assert.equal(again.headers.get('etag'), etag);
      assert.equal(await again.text(), '');
      const stale = await fetch(`${srv.base}${path}`, { headers: { accept: V2, 'if-none-match': '"0"' } });
      assert.equal(stale.status, 200);
      await stale.arrayBuffer();
    }
  });

  test('content negotiation follows Accept order and quality', async () => {
    const plainFirst = await getJson(`${srv.base}/apis`, `application/json,${V2}`);
    assert.equal(plainFirst.body.kind, 'APIGroupList');
    assert.equal(plainFirst.res.headers.get('content-type'), 'application/json');

    const byQuality = await getJson(`${srv.base}/apis`, `application/json;q=0.5,${V2}`);
    assert.equal(byQuality.body.kind, 'APIGroupDiscoveryList');

    // v2beta1 is no longer served (removed in 1.33): with a fallback the plain document comes back...
    const beta = await getJson(`${srv.base}/apis`, `${V2BETA1},application/json`);
    assert.equal(beta.body.kind, 'APIGroupList');

    // ...and alone it is 406 with a Status.
    const only = await getJson(`${srv.base}/apis`, V2BETA1);
    assert.equal(only.res.status, 406);
    assert.equal(only.body.kind, 'Status');
    assert.equal(only.body.reason, 'NotAcceptable');
    assert.equal(only.body.code, 406);

    // Aggregated discovery is only for /api and /apis.
    const gv = await fetch(`${srv.base}/apis/apps/v1`, { headers: { accept: V2 } });
    assert.equal(gv.status, 406);
    await gv.arrayBuffer();

    const wildcard = await getJson(`${srv.base}/apis/apps`, '*/*');
    assert.equal(wildcard.body.kind, 'APIGroup');
  });

  test('YAML and pretty output', async () => {
    const y = await fetch(`${srv.base}/apis/apps`, { headers: { accept: 'application/yaml' } });
    assert.equal(y.headers.get('content-type'), 'application/yaml');
    const doc = load(await y.text()) as Json;
    assert.equal(doc.kind, 'APIGroup');

    const aggYaml = await fetch(`${srv.base}/apis`, { headers: { accept: 'application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
    assert.equal(aggYaml.headers.get('content-type'), 'application/yaml;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    assert.equal((load(await aggYaml.text()) as Json).kind, 'APIGroupDiscoveryList');

    const pretty = await fetch(`${srv.base}/apis/apps?pretty=true`);
    assert.ok((await pretty.text()).startsWith('{\n  "kind": "APIGroup",'));
    const compact = await fetch(`${srv.base}/apis/apps`);
    assert.ok((await compact.text()).endsWith('}\n'));
  });
});

describe('discovery follows registry changes', () => {
  test('an added custom resource appears in every document and changes the ETag', async () => {
    const catalog = ResourceCatalog.builtIn();
    const srv = await start(catalog);
    try {
      const before = await fetch(`${srv.base}/apis`, { headers: { accept: V2 } });
      await before.arrayBuffer();
      const oldTag = before.headers.get('etag');
      assert.ok(oldTag);
      const plainBefore = await getJson(`${srv.base}/apis`);
      assert.ok(!asArray(plainBefore.body.groups).some((g) => g.name === 'stable.example.com'));

      catalog.add({
        group: 'stable.example.com',
        version: 'v1',
        resource: 'crontabs',
        kind: 'CronTab',
        namespaced: true,
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        singularName: 'crontab',
        shortNames: ['ct'],
        categories: [],
        definition: '',
        subresources: { status: { kind: 'CronTab', group: 'stable.example.com', version: 'v1', verbs: ['get', 'patch', 'update'] } },
      });

      const afterRes = await fetch(`${srv.base}/apis`, { headers: { accept: V2, 'if-none-match': oldTag } });
      assert.equal(afterRes.status, 200);
      assert.notEqual(afterRes.headers.get('etag'), oldTag);
      const items = asArray((JSON.parse(await afterRes.text()) as Json).items);
      assert.ok(items.some((i) => (i.metadata as Json).name === 'stable.example.com'));

      const plain = await getJson(`${srv.base}/apis`);
      assert.ok(asArray(plain.body.groups).some((g) => g.name === 'stable.example.com'));
      const list = await getJson(`${srv.base}/apis/stable.example.com/v1`);
      const crontabs = find(asArray(list.body.resources), 'name', 'crontabs');
      assert.equal(crontabs.storageVersionHash, storageVersionHash('stable.example.com', 'v1', 'CronTab'));
      assert.equal(crontabs.categories, undefined);

      catalog.remove('stable.example.com', 'v1', 'crontabs');
      const gone = await fetch(`${srv.base}/apis/stable.example.com`);
      assert.equal(gone.status, 404);
      await gone.arrayBuffer();
    } finally {
      await srv.close();
    }
  });
});
