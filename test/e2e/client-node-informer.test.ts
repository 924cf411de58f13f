/**
 * @kubernetes/client-node against Capstan: typed CRUD through CoreV1Api and AppsV1Api, a raw Watch
 * from a list's resourceVersion, and an informer that lists then watches and sees every change.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';

let srv: TestServer;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let apps: k8s.AppsV1Api;

before(async () => {
  srv = await startTestServer();
  // client-node refuses plain http unless the cluster sets skipTLSVerify; the kubeconfig-as-is case
  // is its own test below, the rest uses an explicit configuration.
  kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'capstan', server: srv.url, skipTLSVerify: true }],
    users: [{ name: 'capstan' }],
    contexts: [{ name: 'capstan', cluster: 'capstan', user: 'capstan' }],
    currentContext: 'capstan',
  });
  core = kc.makeApiClient(k8s.CoreV1Api);
  apps = kc.makeApiClient(k8s.AppsV1Api);
});

test('the kubeconfig Capstan writes works with client-node as is', async () => {
  const fromFile = new k8s.KubeConfig();
  fromFile.loadFromFile(srv.kubeconfig);
  const ns = await fromFile.makeApiClient(k8s.CoreV1Api).readNamespace({ name: 'default' });
  assert.equal(ns.metadata?.name, 'default');
});

after(async () => {
  await srv.stop();
});

async function newNamespace(prefix: string): Promise<string> {
  const name = uniqueName(prefix);
  await core.createNamespace({ body: { metadata: { name } } });
  return name;
}

/** The HTTP status of a failed client-node call. */
async function statusOf(p: Promise<unknown>): Promise<{ code: number; body: any }> {
  try {
    await p;
  } catch (err) {
    if (err instanceof k8s.ApiException) return { code: err.code, body: typeof err.body === 'string' ? (JSON.parse(err.body) as unknown) : err.body };
    throw err;
  }
  throw new Error('expected the call to fail');
}

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('typed CRUD', { concurrency: true }, () => {
  test('CoreV1Api: ConfigMap create, read, list, replace, patch, delete', async () => {
    const namespace = await newNamespace('core');
    const created = await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'c1', labels: { app: 'x' } }, data: { a: '1' } } });
    assert.equal(created.metadata?.name, 'c1');
    assert.ok(created.metadata?.uid);
    assert.ok(created.metadata?.creationTimestamp instanceof Date);

    const read = await core.readNamespacedConfigMap({ name: 'c1', namespace });
    assert.deepEqual(read.data, { a: '1' });

    const list = await core.listNamespacedConfigMap({ namespace, labelSelector: 'app=x' });
    assert.deepEqual(
      list.items.map((i) => i.metadata?.name),
      ['c1'],
    );
    assert.ok(list.metadata?.resourceVersion);

    const replaced = await core.replaceNamespacedConfigMap({ name: 'c1', namespace, body: { ...read, data: { a: '2' } } });
    assert.deepEqual(replaced.data, { a: '2' });
    assert.notEqual(replaced.metadata?.resourceVersion, read.metadata?.resourceVersion);

    const stale = await statusOf(core.replaceNamespacedConfigMap({ name: 'c1', namespace, body: { ...read, data: { a: '3' } } }));
    assert.equal(stale.code, 409);
    assert.equal(stale.body.reason, 'Conflict');

    const patched = await core.patchNamespacedConfigMap(
      { name: 'c1', namespace, body: { data: { b: 'x' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    assert.deepEqual(patched.data, { a: '2', b: 'x' });
    const jsonPatched = await core.patchNamespacedConfigMap(
      { name: 'c1', namespace, body: [{ op: 'remove', path: '/data/a' }] },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
    );
    assert.deepEqual(jsonPatched.data, { b: 'x' });

    const exists = await statusOf(core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'c1' } } }));
    assert.equal(exists.code, 409);
    assert.equal(exists.body.reason, 'AlreadyExists');

    const status = await core.deleteNamespacedConfigMap({ name: 'c1', namespace });
    assert.equal(status.status, 'Success');
    const missing = await statusOf(core.readNamespacedConfigMap({ name: 'c1', namespace }));
    assert.equal(missing.code, 404);
    assert.equal(missing.body.message, 'configmaps "c1" not found');
  });

  test('AppsV1Api: Deployment create, scale subresource, status, delete', async () => {
    const namespace = await newNamespace('apps');
    const body: k8s.V1Deployment = {
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    };
    const created = await apps.createNamespacedDeployment({ namespace, body });
    assert.equal(created.metadata?.generation, 1);
    assert.equal(created.spec?.template.spec?.containers[0]?.image, 'nginx');

    const scale = await apps.readNamespacedDeploymentScale({ name: 'web', namespace });
    assert.equal(scale.spec?.replicas, 1);
    const scaled = await apps.replaceNamespacedDeploymentScale({ name: 'web', namespace, body: { ...scale, spec: { replicas: 4 } } });
    assert.equal(scaled.spec?.replicas, 4);
    const afterScale = await apps.readNamespacedDeployment({ name: 'web', namespace });
    assert.equal(afterScale.spec?.replicas, 4);
    assert.equal(afterScale.metadata?.generation, 2);

    const withStatus = await apps.replaceNamespacedDeploymentStatus({
      name: 'web',
      namespace,
      body: { ...afterScale, status: { replicas: 4, readyReplicas: 2 } },
    });
    assert.equal(withStatus.status?.readyReplicas, 2);
    assert.equal(withStatus.metadata?.generation, 2);

    const listAll = await apps.listDeploymentForAllNamespaces({ fieldSelector: `metadata.namespace=${namespace}` });
    assert.deepEqual(
      listAll.items.map((d) => d.metadata?.name),
      ['web'],
    );

    await apps.deleteNamespacedDeployment({ name: 'web', namespace });
    assert.equal((await statusOf(apps.readNamespacedDeployment({ name: 'web', namespace }))).code, 404);
  });

  test('CoreV1Api: namespaces are cluster-scoped, default exists, creating in a missing namespace fails', async () => {
    const ns = await core.readNamespace({ name: 'default' });
    assert.equal(ns.status?.phase, 'Active');
    const missing = await statusOf(core.createNamespacedConfigMap({ namespace: uniqueName('nope'), body: { metadata: { name: 'x' } } }));
    assert.equal(missing.code, 404);
    const invalid = await statusOf(core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'Not_Valid' } } }));
    assert.equal(invalid.code, 422);
    assert.equal(invalid.body.details.causes[0].field, 'metadata.name');
  });
});

describe('watch and informer', () => {
  test("Watch from a list's resourceVersion sees exactly the later changes, in order", async () => {
    const namespace = await newNamespace('watch');
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'before' } } });
    const list = await core.listNamespacedConfigMap({ namespace });
    const rv = list.metadata?.resourceVersion ?? '';
    const events: string[] = [];
    const watch = new k8s.Watch(kc);
    const req = await watch.watch(
      `/api/v1/namespaces/${namespace}/configmaps`,
      { resourceVersion: rv, allowWatchBookmarks: false },
      (type: string, obj: k8s.V1ConfigMap) => {
        events.push(`${type} ${obj.metadata?.name ?? ''} ${obj.data?.v ?? ''}`);
      },
      () => undefined,
    );
    try {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'a' }, data: { v: '1' } } });
      await core.patchNamespacedConfigMap(
        { name: 'a', namespace, body: { data: { v: '2' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await core.deleteNamespacedConfigMap({ name: 'a', namespace });
      await core.deleteNamespacedConfigMap({ name: 'before', namespace });
      await until('four events', () => events.length >= 4);
      assert.deepEqual(events, ['ADDED a 1', 'MODIFIED a 2', 'DELETED a 2', 'DELETED before ']);
    } finally {
      req.abort();
    }
  });

  test('makeInformer over ConfigMaps: initial list, then every add, update and delete', async () => {
    const namespace = await newNamespace('inf');
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'pre-1' }, data: { v: '0' } } });
    await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'pre-2' }, data: { v: '0' } } });
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () => core.listNamespacedConfigMap({ namespace }));
    const events: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o) => events.push(`add ${o.metadata?.name ?? ''}`));
    informer.on('update', (o) => events.push(`update ${o.metadata?.name ?? ''} ${o.data?.v ?? ''}`));
    informer.on('delete', (o) => events.push(`delete ${o.metadata?.name ?? ''}`));
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    try {
      await until('initial list', () => events.length >= 2);
      assert.deepEqual([...events].sort(), ['add pre-1', 'add pre-2']);
      events.length = 0;

      // A burst of writes right after the list: none may be lost between list and watch.
      const n = 20;
      for (let i = 0; i < n; i++) await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: `c-${i}` }, data: { v: '1' } } });
      for (let i = 0; i < n; i += 2) {
        await core.patchNamespacedConfigMap(
          { name: `c-${i}`, namespace, body: { data: { v: '2' } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        );
      }
      for (let i = 0; i < n; i += 4) await core.deleteNamespacedConfigMap({ name: `c-${i}`, namespace });
      await core.deleteNamespacedConfigMap({ name: 'pre-1', namespace });

      const expected: string[] = [];
      for (let i = 0; i < n; i++) expected.push(`add c-${i}`);
      for (let i = 0; i < n; i += 2) expected.push(`update c-${i} 2`);
      for (let i = 0; i < n; i += 4) expected.push(`delete c-${i}`);
      expected.push('delete pre-1');
      await until('every change', () => events.length >= expected.length);
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(events, expected);
      assert.deepEqual(errors, []);

      // The informer's cache reflects the store.
      const cached = informer
        .list(namespace)
        .map((o) => o.metadata?.name ?? '')
        .sort();
      const stored = (await core.listNamespacedConfigMap({ namespace })).items.map((o) => o.metadata?.name ?? '').sort();
      assert.deepEqual(cached, stored);
      assert.equal(informer.get('c-2', namespace)?.data?.v, '2');
    } finally {
      await informer.stop();
    }
  });

  test('an informer with a label selector sees only matching objects', async () => {
    const namespace = await newNamespace('infsel');
    const informer = k8s.makeInformer(
      kc,
      `/api/v1/namespaces/${namespace}/configmaps`,
      () => core.listNamespacedConfigMap({ namespace, labelSelector: 'pick=yes' }),
      'pick=yes',
    );
    const seen: string[] = [];
    informer.on('add', (o) => seen.push(o.metadata?.name ?? ''));
    await informer.start();
    try {
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'no', labels: { pick: 'no' } } } });
      await core.createNamespacedConfigMap({ namespace, body: { metadata: { name: 'yes', labels: { pick: 'yes' } } } });
      await until('the matching add', () => seen.length >= 1);
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(seen, ['yes']);
    } finally {
      await informer.stop();
    }
  });
});
