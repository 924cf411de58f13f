/**
 * Namespace lifecycle (system namespaces, 404/403 admission, Terminating with conditions, content
 * deletion, finalizers holding a namespace) and object deletion (finalizers, preconditions,
 * deletecollection).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { kubectlFor, type Kubectl } from './kubectl.js';
import { assertStatus, eventually, restFor, type Rest } from './rest.js';

let srv: TestServer;
let rest: Rest;
let k: Kubectl;

before(async () => {
  srv = await startTestServer();
  rest = restFor(srv.url);
  k = kubectlFor(srv.kubeconfig);
});

after(async () => {
  await srv.stop();
});

const cm = (name: string, extra: Record<string, unknown> = {}): unknown => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...extra },
  data: { a: 'b' },
});

describe('system namespaces', { concurrency: true }, () => {
  test('default, kube-system, kube-public and kube-node-lease exist and are Active', async () => {
    const r = await rest.get('/api/v1/namespaces');
    assert.equal(r.status, 200);
    assert.equal(r.body.kind, 'NamespaceList');
    const byName = new Map((r.body.items as any[]).map((n) => [n.metadata.name, n]));
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      const n = byName.get(name);
      assert.ok(n, `${name} exists`);
      assert.equal(n.status.phase, 'Active');
      assert.deepEqual(n.spec.finalizers, ['kubernetes']);
      assert.equal(n.metadata.labels['kubernetes.io/metadata.name'], name);
    }
  });

  test('the default/kubernetes Service exists', async () => {
    const r = await rest.get('/api/v1/namespaces/default/services/kubernetes');
    assert.equal(r.status, 200);
    assert.equal(r.body.spec.type, 'ClusterIP');
    assert.equal(r.body.spec.ports[0].port, 443);
  });

  test('kubectl get ns lists them', async () => {
    const out = await k.ok(['get', 'ns', '-o', 'name']);
    for (const name of ['default', 'kube-node-lease', 'kube-public', 'kube-system']) assert.match(out, new RegExp(`^namespace/${name}$`, 'm'));
  });

  for (const name of ['default', 'kube-system', 'kube-public']) {
    test(`${name} cannot be deleted (403)`, async () => {
      const r = await rest.del(`/api/v1/namespaces/${name}`);
      assertStatus(r, 403, 'Forbidden', `namespaces "${name}" is forbidden: this namespace may not be deleted`);
      const still = await rest.get(`/api/v1/namespaces/${name}`);
      assert.equal(still.status, 200);
      assert.equal(still.body.metadata.deletionTimestamp, undefined);
    });
  }

  test('kubectl delete ns default is refused', async () => {
    const r = await k.run(['delete', 'ns', 'default']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(Forbidden\): namespaces "default" is forbidden: this namespace may not be deleted/);
  });
});

describe('namespace lifecycle', { concurrency: true }, () => {
  test('a user namespace gets the metadata.name label, phase Active and the kubernetes finalizer', async () => {
    const name = uniqueName('nsl');
    const created = await rest.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    assert.equal(created.status.phase, 'Active');
    assert.deepEqual(created.spec.finalizers, ['kubernetes']);
    assert.equal(created.metadata.labels['kubernetes.io/metadata.name'], name);
  });

  test('creating in a missing namespace is 404 namespaces "x" not found', async () => {
    const missing = uniqueName('missing');
    const r = await rest.post(`/api/v1/namespaces/${missing}/configmaps`, cm('x'));
    assertStatus(r, 404, 'NotFound', `namespaces "${missing}" not found`);
    assert.equal(r.body.details.name, missing);
    assert.equal(r.body.details.kind, 'namespaces');
  });

  test('kubectl create in a missing namespace reports it', async () => {
    const missing = uniqueName('missing');
    const r = await k.run(['create', '-n', missing, '-f', '-'], { input: JSON.stringify(cm('x')) });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`Error from server \\(NotFound\\).*namespaces "${missing}" not found`));
  });

  test('delete: Terminating, content deleted, namespace removed', async () => {
    const ns = await rest.namespace('del');
    await rest.create(`/api/v1/namespaces/${ns}/configmaps`, cm('one'));
    await rest.create(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } });
    await rest.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    });
    const r = await rest.del(`/api/v1/namespaces/${ns}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.kind, 'Namespace');
    assert.equal(r.body.status.phase, 'Terminating');
    assert.ok(r.body.metadata.deletionTimestamp);
    await eventually('namespace removal', async () => ((await rest.get(`/api/v1/namespaces/${ns}`)).status === 404 ? true : undefined));
    for (const path of [`/api/v1/namespaces/${ns}/configmaps`, `/api/v1/namespaces/${ns}/secrets`, `/apis/apps/v1/namespaces/${ns}/deployments`]) {
      const list = await rest.get(path);
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.items, [], path);
    }
  });

  test('kubectl delete ns waits until the namespace is gone', async () => {
    const ns = await rest.namespace('kdel');
    await rest.create(`/api/v1/namespaces/${ns}/configmaps`, cm('one'));
    const out = await k.ok(['delete', 'ns', ns, '--timeout=30s']);
    assert.equal(out.trim(), `namespace "${ns}" deleted`);
    assert.equal((await rest.get(`/api/v1/namespaces/${ns}`)).status, 404);
  });

  test('an object with a finalizer keeps the namespace Terminating with conditions; create there is 403', async () => {
    const ns = await rest.namespace('hold');
    await rest.create(`/api/v1/namespaces/${ns}/configmaps`, cm('held', { finalizers: ['example.com/hold'] }));
    await rest.create(`/api/v1/namespaces/${ns}/configmaps`, cm('free'));
    const del = await rest.del(`/api/v1/namespaces/${ns}`);
    assert.equal(del.status, 200, del.text);

    const terminating = await eventually('conditions reporting the held object', async () => {
      const n = (await rest.get(`/api/v1/namespaces/${ns}`)).body;
      const conds = (n.status?.conditions ?? []) as Array<{ type: string; status: string; reason: string; message: string }>;
      const remaining = conds.find((c) => c.type === 'NamespaceContentRemaining');
      return remaining?.status === 'True' ? n : undefined;
    });
    assert.equal(terminating.status.phase, 'Terminating');
    const conds = new Map(
      (terminating.status.conditions as Array<{ type: string; status: string; reason: string; message: string; lastTransitionTime: string }>).map((c) => [
        c.type,
        c,
      ]),
    );
    assert.deepEqual(
      conds.get('NamespaceContentRemaining') && {
        status: conds.get('NamespaceContentRemaining')?.status,
        reason: conds.get('NamespaceContentRemaining')?.reason,
        message: conds.get('NamespaceContentRemaining')?.message,
      },
      { status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: configmaps has 1 resource instances' },
    );
    assert.deepEqual(
      conds.get('NamespaceFinalizersRemaining') && {
        status: conds.get('NamespaceFinalizersRemaining')?.status,
        reason: conds.get('NamespaceFinalizersRemaining')?.reason,
        message: conds.get('NamespaceFinalizersRemaining')?.message,
      },
      {
        status: 'True',
        reason: 'SomeFinalizersRemain',
        message: 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
      },
    );
    assert.equal(conds.get('NamespaceDeletionDiscoveryFailure')?.status, 'False');
    assert.equal(conds.get('NamespaceDeletionContentFailure')?.status, 'False');
    assert.match(conds.get('NamespaceContentRemaining')?.lastTransitionTime ?? '', /Z$/);

    // A status write while content remains (kube-controller-manager's namespace controller writes its
    // conditions so) keeps the namespace: its spec still holds the `kubernetes` finalizer.
    const statusWrite = await rest.put(`/api/v1/namespaces/${ns}/status`, {
      ...terminating,
      status: { ...terminating.status, conditions: [...terminating.status.conditions, { type: 'Example', status: 'True', reason: 'R', message: 'm' }] },
    });
    assert.equal(statusWrite.status, 200, statusWrite.text);
    const labelled = await rest.patch(`/api/v1/namespaces/${ns}`, { metadata: { labels: { touched: 'yes' } } });
    assert.equal(labelled.status, 200, labelled.text);
    const still = await rest.get(`/api/v1/namespaces/${ns}`);
    assert.equal(still.status, 200, 'the namespace is still there');
    assert.deepEqual(still.body.spec.finalizers, ['kubernetes']);
    assert.equal(still.body.metadata.labels.touched, 'yes');

    // The free object is gone, the held one is terminating.
    assert.equal((await rest.get(`/api/v1/namespaces/${ns}/configmaps/free`)).status, 404);
    const held = await rest.get(`/api/v1/namespaces/${ns}/configmaps/held`);
    assert.equal(held.status, 200);
    assert.ok(held.body.metadata.deletionTimestamp);

    // New content is refused while terminating.
    const refused = await rest.post(`/api/v1/namespaces/${ns}/configmaps`, cm('late'));
    assertStatus(refused, 403, 'Forbidden', `configmaps "late" is forbidden: unable to create new content in namespace ${ns} because it is being terminated`);
    assert.deepEqual(refused.body.details.causes, [
      { reason: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' },
    ]);
    const kRefused = await k.run(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(cm('late2')) });
    assert.match(kRefused.stderr, /\(Forbidden\).*because it is being terminated/);

    // Removing the finalizer lets the namespace go.
    const unheld = await rest.patch(`/api/v1/namespaces/${ns}/configmaps/held`, { metadata: { finalizers: null } });
    assert.equal(unheld.status, 200, unheld.text);
    await eventually('namespace removal', async () => ((await rest.get(`/api/v1/namespaces/${ns}`)).status === 404 ? true : undefined));
  });

  test('the namespace finalize subresource changes only spec.finalizers', async () => {
    const ns = await rest.namespace('fin');
    const current = (await rest.get(`/api/v1/namespaces/${ns}`)).body;
    const r = await rest.put(`/api/v1/namespaces/${ns}/finalize`, { ...current, spec: { finalizers: [] }, status: { phase: 'Terminating' } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.spec, {});
    assert.equal(r.body.status.phase, 'Active');
    // A plain update cannot change spec.finalizers.
    const after1 = (await rest.get(`/api/v1/namespaces/${ns}`)).body;
    const put = await rest.put(`/api/v1/namespaces/${ns}`, { ...after1, spec: { finalizers: ['kubernetes', 'other'] } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body.spec, {});
  });
});

describe('finalizers and deletion', { concurrency: true }, () => {
  let ns: string;
  before(async () => {
    ns = await rest.namespace('objdel');
  });

  test('an object with finalizers gets deletionTimestamp, stays, and goes with its last finalizer; the name is reusable', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const created = await rest.create(path, cm('f1', { finalizers: ['example.com/a', 'example.com/b'] }));
    const del = await rest.del(`${path}/f1`);
    assert.equal(del.status, 200, del.text);
    assert.equal(del.body.kind, 'ConfigMap');
    assert.ok(del.body.metadata.deletionTimestamp);
    assert.equal(del.body.metadata.deletionGracePeriodSeconds, 0);
    assert.ok(BigInt(del.body.metadata.resourceVersion) > BigInt(created.metadata.resourceVersion));

    // Deleting again changes nothing.
    const again = await rest.del(`${path}/f1`);
    assert.equal(again.status, 200);
    assert.equal(again.body.metadata.resourceVersion, del.body.metadata.resourceVersion);

    // Still there; the name is taken.
    assert.equal((await rest.get(`${path}/f1`)).status, 200);
    assertStatus(await rest.post(path, cm('f1')), 409, 'AlreadyExists', 'configmaps "f1" already exists');

    // New finalizers cannot be added while deleting.
    const add = await rest.patch(`${path}/f1`, { metadata: { finalizers: ['example.com/a', 'example.com/b', 'example.com/c'] } });
    assertStatus(add, 422, 'Invalid', /metadata\.finalizers: Forbidden: no new finalizers can be added if the object is being deleted/);

    const one = await rest.patch(`${path}/f1`, [{ op: 'remove', path: '/metadata/finalizers/0' }], 'application/json-patch+json');
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body.metadata.finalizers, ['example.com/b']);
    assert.equal((await rest.get(`${path}/f1`)).status, 200);

    const last = await rest.patch(`${path}/f1`, { metadata: { finalizers: null } });
    assert.equal(last.status, 200, last.text);
    assertStatus(await rest.get(`${path}/f1`), 404, 'NotFound', 'configmaps "f1" not found');

    const reborn = await rest.create(path, cm('f1'));
    assert.notEqual(reborn.metadata.uid, created.metadata.uid);
    assert.equal(reborn.metadata.deletionTimestamp, undefined);
  });

  test('an object without finalizers is removed at once and DELETE answers a Success Status', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const created = await rest.create(path, cm('plain'));
    const del = await rest.del(`${path}/plain`);
    assert.equal(del.status, 200);
    assert.equal(del.body.kind, 'Status');
    assert.equal(del.body.status, 'Success');
    assert.deepEqual(del.body.details, { name: 'plain', kind: 'configmaps', uid: created.metadata.uid });
    assertStatus(await rest.get(`${path}/plain`), 404, 'NotFound');
    assertStatus(await rest.del(`${path}/plain`), 404, 'NotFound', 'configmaps "plain" not found');
  });

  test('DELETE with preconditions: uid or resourceVersion mismatch is 409, a match deletes', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const created = await rest.create(path, cm('pre'));
    const badUid = await rest.del(`${path}/pre`, { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'not-the-uid' } });
    assertStatus(
      badUid,
      409,
      'Conflict',
      `Operation cannot be fulfilled on configmaps "pre": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${created.metadata.uid}`,
    );
    const badRv = await rest.del(`${path}/pre`, { preconditions: { resourceVersion: '1' } });
    assertStatus(
      badRv,
      409,
      'Conflict',
      `Operation cannot be fulfilled on configmaps "pre": Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${created.metadata.resourceVersion}`,
    );
    assert.equal((await rest.get(`${path}/pre`)).status, 200);
    const ok = await rest.del(`${path}/pre`, { preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal((await rest.get(`${path}/pre`)).status, 404);
  });

  test('deletecollection with a label selector removes only matching objects', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const tag = uniqueName('dc');
    await Promise.all([
      rest.create(path, cm(`${tag}-1`, { labels: { dc: tag, drop: 'yes' } })),
      rest.create(path, cm(`${tag}-2`, { labels: { dc: tag, drop: 'yes' } })),
      rest.create(path, cm(`${tag}-3`, { labels: { dc: tag, drop: 'no' } })),
    ]);
    const r = await rest.del(`${path}?labelSelector=${encodeURIComponent(`dc=${tag},drop=yes`)}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.kind, 'ConfigMapList');
    assert.deepEqual((r.body.items as any[]).map((i) => i.metadata.name).sort(), [`${tag}-1`, `${tag}-2`]);
    const left = await rest.get(`${path}?labelSelector=${encodeURIComponent(`dc=${tag}`)}`);
    assert.deepEqual(
      (left.body.items as any[]).map((i) => i.metadata.name),
      [`${tag}-3`],
    );
  });

  test('deletecollection on a cluster-scoped collection that allows it, and 405 where it does not', async () => {
    const r = await rest.del('/api/v1/namespaces');
    assertStatus(r, 405, 'MethodNotAllowed');
  });

  test('dryRun delete leaves the object in place', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    await rest.create(path, cm('dry'));
    const r = await rest.del(`${path}/dry?dryRun=All`);
    assert.equal(r.status, 200, r.text);
    assert.equal((await rest.get(`${path}/dry`)).status, 200);
  });
});
