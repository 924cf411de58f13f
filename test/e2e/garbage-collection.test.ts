/**
 * Garbage collection in the server, on the embedded store and on Redis: the finalizers a DELETE
 * adds for each propagation policy (and each type's default), background deletion of dependents
 * whose owners are gone, foreground deletion held by blockOwnerDeletion, orphaning, a dependency
 * cycle, a new object under an old owner's name (uid mismatch), owner references across scopes,
 * the Lease of the elected controller manager, and `--controllers=-garbage-collector`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultConfig, parseArgs } from '../../src/cli/flags.js';
import { RedisStorage } from '../../src/storage/redis/redis-storage.js';
import { allBackends } from '../helpers/backends.js';
import { startRedis } from '../helpers/redis-process.js';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { kubectlFor } from './kubectl.js';
import { eventually, restFor, type Rest } from './rest.js';

interface Meta {
  name: string;
  uid: string;
  namespace?: string;
}

const ref = (owner: { metadata: Meta; kind: string; apiVersion: string }, block?: boolean): Record<string, unknown> => ({
  apiVersion: owner.apiVersion,
  kind: owner.kind,
  name: owner.metadata.name,
  uid: owner.metadata.uid,
  ...(block === undefined ? {} : { blockOwnerDeletion: block }),
});

const cm = (name: string, owners: unknown[] = [], extra: Record<string, unknown> = {}): unknown => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ownerReferences: owners, ...extra },
  data: { a: 'b' },
});

for (const backend of allBackends()) {
  describe(`garbage collection on ${backend.name}`, { concurrency: true }, () => {
    let srv: TestServer;
    let rest: Rest;
    let ns: string;

    before(async () => {
      srv = await startTestServer({}, await backend.open());
      rest = restFor(srv.url);
      ns = await rest.namespace('gc');
    });

    after(async () => {
      await srv.stop();
      await backend.stop();
    });

    const path = (name = ''): string => `/api/v1/namespaces/${ns}/configmaps${name === '' ? '' : `/${name}`}`;
    const create = (body: unknown): Promise<any> => rest.create(path(), body);
    const gone = (name: string, timeoutMs = 15_000): Promise<true> =>
      eventually(`${name} to be deleted`, async () => ((await rest.get(path(name))).status === 404 ? true : undefined), timeoutMs);
    /** Asserts that `name` exists and returns it. */
    const exists = async (name: string): Promise<any> => {
      const r = await rest.get(path(name));
      assert.equal(r.status, 200, `${name} should still exist: ${r.text}`);
      return r.body;
    };

    test('DELETE with propagationPolicy Foreground and Orphan adds the finalizer and keeps the object (200)', async () => {
      for (const [policy, finalizer] of [
        ['Foreground', 'foregroundDeletion'],
        ['Orphan', 'orphan'],
      ]) {
        const name = uniqueName('pol');
        // A finalizer of someone else's holds the object, so what DELETE wrote stays observable.
        await create(cm(name, [], { finalizers: ['example.com/hold'] }));
        const r = await rest.del(`${path(name)}?propagationPolicy=${policy}`);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.kind, 'ConfigMap');
        assert.ok(r.body.metadata.deletionTimestamp);
        assert.equal(r.body.metadata.deletionGracePeriodSeconds, 0);
        assert.deepEqual(r.body.metadata.finalizers, ['example.com/hold', finalizer]);
        // Background on an object being deleted drops the GC finalizers again, as kube does.
        const back = await rest.del(`${path(name)}?propagationPolicy=Background`);
        assert.deepEqual(back.body.metadata.finalizers, ['example.com/hold']);
        const released = await rest.patch(path(name), { metadata: { finalizers: null } });
        assert.equal(released.status, 200, released.text);
        await gone(name);
      }
    });

    test('orphanDependents: true in the body means Orphan; ReplicationControllers and batch/v1 Jobs orphan by default', async () => {
      const name = uniqueName('od');
      await create(cm(name, [], { finalizers: ['example.com/hold'] }));
      const r = await rest.del(path(name), { kind: 'DeleteOptions', apiVersion: 'v1', orphanDependents: true });
      assert.deepEqual(r.body.metadata.finalizers, ['example.com/hold', 'orphan']);
      await rest.patch(path(name), { metadata: { finalizers: null } });

      const rc = uniqueName('rc');
      await rest.create(`/api/v1/namespaces/${ns}/replicationcontrollers`, {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: rc, finalizers: ['example.com/hold'] },
        spec: { replicas: 0, selector: { a: rc }, template: { metadata: { labels: { a: rc } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
      });
      const rcDel = await rest.del(`/api/v1/namespaces/${ns}/replicationcontrollers/${rc}`);
      assert.deepEqual(rcDel.body.metadata.finalizers, ['example.com/hold', 'orphan']);
      assert.equal(rcDel.body.metadata.generation, 2, 'generation is bumped when deletion starts');
      await rest.patch(`/api/v1/namespaces/${ns}/replicationcontrollers/${rc}`, { metadata: { finalizers: null } });

      const job = uniqueName('job');
      await rest.create(`/apis/batch/v1/namespaces/${ns}/jobs`, {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: job, finalizers: ['example.com/hold'] },
        spec: { suspend: true, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } },
      });
      const jobDel = await rest.del(`/apis/batch/v1/namespaces/${ns}/jobs/${job}`);
      assert.ok(jobDel.body.metadata.finalizers.includes('orphan'), JSON.stringify(jobDel.body.metadata));
      await rest.patch(`/apis/batch/v1/namespaces/${ns}/jobs/${job}`, { metadata: { finalizers: null } });
    });

    test('Background: dependents whose owners are all gone are deleted; one with a remaining owner stays and loses the dangling reference', async () => {
      const owner = await create(cm(uniqueName('owner')));
      const other = await create(cm(uniqueName('other')));
      const dep1 = await create(cm(uniqueName('dep'), [ref(owner)]));
      const dep2 = await create(cm(uniqueName('dep'), [ref(owner)]));
      const shared = await create(cm(uniqueName('shared'), [ref(owner), ref(other)]));
      const r = await rest.del(path(owner.metadata.name));
      assert.equal(r.status, 200);
      assert.equal(r.body.kind, 'Status');
      await gone(dep1.metadata.name);
      await gone(dep2.metadata.name);
      const left = await eventually('the dangling reference to be removed', async () => {
        const s = await exists(shared.metadata.name);
        return s.metadata.ownerReferences?.length === 1 ? s : undefined;
      });
      assert.equal(left.metadata.ownerReferences[0].uid, other.metadata.uid);
    });

    test('Foreground: the owner stays in foregroundDeletion until its blocking dependents are gone, then goes', async () => {
      const owner = await create(cm(uniqueName('fg-owner')));
      const blocker = await create(cm(uniqueName('fg-block'), [ref(owner, true)], { finalizers: ['example.com/hold'] }));
      const plain = await create(cm(uniqueName('fg-plain'), [ref(owner, false)]));
      const r = await rest.del(`${path(owner.metadata.name)}?propagationPolicy=Foreground`);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body.metadata.finalizers, ['foregroundDeletion']);
      await gone(plain.metadata.name);
      // The blocker is being deleted (in foreground, as kube's collector does) but its own finalizer holds it.
      const held = await eventually('the blocking dependent to be terminating', async () => {
        const b = await exists(blocker.metadata.name);
        return b.metadata.deletionTimestamp ? b : undefined;
      });
      assert.ok(held.metadata.finalizers.includes('example.com/hold'));
      const waiting = await exists(owner.metadata.name);
      assert.deepEqual(waiting.metadata.finalizers, ['foregroundDeletion']);
      await rest.patch(path(blocker.metadata.name), { metadata: { finalizers: null } });
      await gone(blocker.metadata.name);
      await gone(owner.metadata.name);
    });

    test('Orphan: dependents lose the reference to the owner and stay; the owner goes', async () => {
      const owner = await create(cm(uniqueName('or-owner')));
      const keep = await create(cm(uniqueName('or-dep'), [ref(owner, true)]));
      const r = await rest.del(`${path(owner.metadata.name)}?propagationPolicy=Orphan`);
      assert.deepEqual(r.body.metadata.finalizers, ['orphan']);
      await gone(owner.metadata.name);
      const d = await exists(keep.metadata.name);
      assert.equal(d.metadata.ownerReferences, undefined);
      assert.equal(d.metadata.deletionTimestamp, undefined);
    });

    test('a dependency cycle deleted in foreground does not block (kube e2e "should not be blocked by dependency circle")', async () => {
      const a = await create(cm(uniqueName('cyc1')));
      const b = await create(cm(uniqueName('cyc2'), [ref(a, true)]));
      const c = await create(cm(uniqueName('cyc3'), [ref(b, true)]));
      const patched = await rest.patch(path(a.metadata.name), { metadata: { ownerReferences: [ref(c, true)] } });
      assert.equal(patched.status, 200, patched.text);
      const r = await rest.del(`${path(a.metadata.name)}?propagationPolicy=Foreground`);
      assert.equal(r.status, 200);
      await Promise.all([gone(a.metadata.name, 30_000), gone(b.metadata.name, 30_000), gone(c.metadata.name, 30_000)]);
    });

    test('an owner reference whose uid is not the current object of that name is dangling: the dependent goes, the new object stays', async () => {
      const old = await create(cm(uniqueName('reuse')));
      await rest.del(path(old.metadata.name));
      const fresh = await create(cm(old.metadata.name));
      assert.notEqual(fresh.metadata.uid, old.metadata.uid);
      const dep = await create(cm(uniqueName('stale'), [ref(old)]));
      await gone(dep.metadata.name);
      const still = await exists(old.metadata.name);
      assert.equal(still.metadata.uid, fresh.metadata.uid);
    });

    test('an owner reference to a kind no server resolves keeps the dependent', async () => {
      const dep = await create(
        cm(uniqueName('unres'), [{ apiVersion: 'example.com/v1', kind: 'Nothing', name: 'x', uid: '00000000-0000-0000-0000-000000000001' }]),
      );
      // A dependent with a live owner and the unresolvable reference: deleting the live owner must
      // not take it either while its other reference cannot be resolved.
      const owner = await create(cm(uniqueName('res-owner')));
      const both = await create(
        cm(uniqueName('unres2'), [ref(owner), { apiVersion: 'example.com/v1', kind: 'Nothing', name: 'x', uid: '00000000-0000-0000-0000-000000000002' }]),
      );
      // A sibling in the same state as a witness that the collector has processed the owner's deletion.
      const witness = await create(cm(uniqueName('witness'), [ref(owner)]));
      await rest.del(path(owner.metadata.name));
      await gone(witness.metadata.name);
      await exists(dep.metadata.name);
      await exists(both.metadata.name);
    });

    test('a namespaced dependent may have a cluster-scoped owner; a cluster-scoped dependent of a namespaced owner gets OwnerRefInvalidNamespace', async () => {
      const nsOwner = await rest.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: uniqueName('gc-owner-ns') } });
      const dep = await create(cm(uniqueName('by-ns'), [ref(nsOwner)]));
      // The cluster-scoped owner exists: the dependent stays (checked after a witness is collected).
      const owner = await create(cm(uniqueName('ns-owner')));
      const witness = await create(cm(uniqueName('witness'), [ref(owner)]));
      const pc = await rest.create('/apis/scheduling.k8s.io/v1/priorityclasses', {
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name: uniqueName('gc-pc'), ownerReferences: [ref(owner)] },
        value: 1000,
      });
      await rest.del(path(owner.metadata.name));
      await gone(witness.metadata.name);
      await exists(dep.metadata.name);
      // kube never deletes a cluster-scoped object for a namespaced owner.
      assert.equal((await rest.get(`/apis/scheduling.k8s.io/v1/priorityclasses/${pc.metadata.name}`)).status, 200);

      // Both observed, in different scopes: the Event names the reference.
      const owner2 = await create(cm(uniqueName('ns-owner2')));
      const pc2 = await rest.create('/apis/scheduling.k8s.io/v1/priorityclasses', {
        apiVersion: 'scheduling.k8s.io/v1',
        kind: 'PriorityClass',
        metadata: { name: uniqueName('gc-pc2'), ownerReferences: [ref(owner2)] },
        value: 1001,
      });
      const event = await eventually('an OwnerRefInvalidNamespace event', async () => {
        const list = await rest.get(`/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${pc2.metadata.name}`);
        return (list.body.items as any[]).find((e) => e.reason === 'OwnerRefInvalidNamespace');
      });
      assert.equal(event.type, 'Warning');
      assert.equal(event.source.component, 'garbage-collector-controller');
      assert.equal(event.involvedObject.uid, pc2.metadata.uid);
      assert.equal(
        event.message,
        `ownerRef [v1/ConfigMap, namespace: , name: ${owner2.metadata.name}, uid: ${owner2.metadata.uid}] does not exist in namespace ""`,
      );
      assert.equal((await rest.get(`/apis/scheduling.k8s.io/v1/priorityclasses/${pc2.metadata.name}`)).status, 200);

      // A namespaced dependent naming an owner in another namespace: not found there, so collected.
      const otherNs = await rest.namespace('gc-other');
      const foreign = await rest.create(`/api/v1/namespaces/${otherNs}/configmaps`, cm(uniqueName('foreign')));
      const cross = await create(cm(uniqueName('cross'), [ref(foreign)]));
      await gone(cross.metadata.name);
      const crossEvent = await eventually('an OwnerRefInvalidNamespace event for the cross-namespace reference', async () => {
        const list = await rest.get(`/api/v1/namespaces/${ns}/events?fieldSelector=involvedObject.name=${cross.metadata.name}`);
        return (list.body.items as any[]).find((e) => e.reason === 'OwnerRefInvalidNamespace');
      });
      assert.equal(
        crossEvent.message,
        `ownerRef [v1/ConfigMap, namespace: ${ns}, name: ${foreign.metadata.name}, uid: ${foreign.metadata.uid}] does not exist in namespace "${ns}"`,
      );
      await rest.del(`/apis/scheduling.k8s.io/v1/priorityclasses/${pc.metadata.name}`);
      await rest.del(`/apis/scheduling.k8s.io/v1/priorityclasses/${pc2.metadata.name}`);
      await rest.del(`/api/v1/namespaces/${nsOwner.metadata.name}`);
      await gone(dep.metadata.name);
    });

    test('kubectl delete --cascade=foreground and orphan', async () => {
      const k = kubectlFor(srv.kubeconfig);
      const owner = await create(cm(uniqueName('k-owner')));
      const dep = await create(cm(uniqueName('k-dep'), [ref(owner, true)]));
      const r = await k.run(['delete', 'configmap', owner.metadata.name, '-n', ns, '--cascade=foreground', '--wait=true']);
      assert.equal(r.code, 0, r.stderr);
      await gone(dep.metadata.name);
      const owner2 = await create(cm(uniqueName('k-owner')));
      const dep2 = await create(cm(uniqueName('k-dep'), [ref(owner2, true)]));
      const r2 = await k.run(['delete', 'configmap', owner2.metadata.name, '-n', ns, '--cascade=orphan']);
      assert.equal(r2.code, 0, r2.stderr);
      await gone(owner2.metadata.name);
      assert.equal((await exists(dep2.metadata.name)).metadata.ownerReferences, undefined);
    });

    test('deletecollection applies the propagation policy to every object', async () => {
      const label = uniqueName('coll');
      const owner = await create(cm(uniqueName('dc-owner'), [], { labels: { set: label } }));
      const dep = await create(cm(uniqueName('dc-dep'), [ref(owner)]));
      const r = await rest.del(`${path()}?labelSelector=set%3D${label}&propagationPolicy=Orphan`);
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.items[0].metadata.finalizers, ['orphan']);
      await gone(owner.metadata.name);
      assert.equal((await exists(dep.metadata.name)).metadata.ownerReferences, undefined);
    });

    test('a namespace deleted with Foreground or Orphan goes once its content is gone and the collector released it', async () => {
      for (const policy of ['Foreground', 'Orphan']) {
        const other = await rest.namespace('gc-nsdel');
        await rest.create(`/api/v1/namespaces/${other}/configmaps`, cm('x'));
        const r = await rest.del(`/api/v1/namespaces/${other}?propagationPolicy=${policy}`);
        assert.equal(r.status, 200, r.text);
        assert.ok(r.body.metadata.finalizers.includes(policy === 'Foreground' ? 'foregroundDeletion' : 'orphan'), JSON.stringify(r.body.metadata));
        await eventually(
          `namespace ${other} to be deleted`,
          async () => ((await rest.get(`/api/v1/namespaces/${other}`)).status === 404 ? true : undefined),
          20_000,
        );
      }
    });

    test('the elected controller manager holds a coordination.k8s.io/v1 Lease in kube-system', async () => {
      const lease = await eventually('the lease to be held', async () => {
        const r = await rest.get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/capstan-controller-manager');
        return r.status === 200 && r.body.spec.holderIdentity ? r.body : undefined;
      });
      assert.equal(lease.spec.leaseDurationSeconds, 15);
      assert.match(lease.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      assert.ok(lease.spec.acquireTime);
      assert.equal(typeof lease.spec.leaseTransitions, 'number');
      const renewed = await eventually(
        'the lease to be renewed',
        async () => {
          const r = await rest.get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/capstan-controller-manager');
          return r.body.spec.renewTime !== lease.spec.renewTime ? r.body : undefined;
        },
        6000,
      );
      assert.equal(renewed.spec.holderIdentity, lease.spec.holderIdentity);
    });
  });
}

describe('--controllers', () => {
  test('kube-controller-manager syntax; an unknown name is refused with its message', () => {
    assert.deepEqual(parseArgs(['--controllers=*,-garbage-collector']), {
      help: false,
      config: { ...defaultConfig(), controllers: ['*', '-garbage-collector'] },
    });
    assert.throws(() => parseArgs(['--controllers=*,-nope']), {
      message: 'invalid argument "*,-nope" for "--controllers" flag: "nope" is not in the list of known controllers',
    });
  });

  test('a list without any of the controllers runs none of them: dependents of a deleted owner stay (the in-server controllers still hold the Lease)', async () => {
    const srv = await startTestServer({ controllers: ['-garbage-collector', '-disruption'] });
    try {
      const rest = restFor(srv.url);
      const ns = await rest.namespace('gc-off');
      const owner = await rest.create(`/api/v1/namespaces/${ns}/configmaps`, cm('owner'));
      const dep = await rest.create(`/api/v1/namespaces/${ns}/configmaps`, cm('dep', [ref(owner)]));
      await rest.del(`/api/v1/namespaces/${ns}/configmaps/owner`);
      // The namespace controller and the other in-server controllers are elected whatever the flag says.
      const lease = await rest.get('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/capstan-controller-manager');
      assert.equal(lease.status, 200, 'the in-server controllers are elected');
      assert.notEqual(lease.body.spec.holderIdentity, '');
      const o = await rest.get(`/api/v1/namespaces/${ns}/configmaps/owner`);
      assert.equal(o.status, 404, 'background deletion of the owner itself needs no collector');
      const d = await rest.get(`/api/v1/namespaces/${ns}/configmaps/dep`);
      assert.equal(d.status, 200);
      assert.equal(d.body.metadata.uid, dep.metadata.uid);
    } finally {
      await srv.stop();
    }
  });
});

describe('restart', () => {
  test('a collector started later over the same Redis finishes what DELETE began (list, then watch)', async () => {
    const redis = await startRedis();
    const open = (): Promise<RedisStorage> => RedisStorage.connect({ url: redis.url, keyPrefix: 'gc-restart:', historyMs: 300_000 });
    try {
      // First server: no collector. Owners are deleted with each policy; nothing more happens.
      const first = await startTestServer({ controllers: ['-garbage-collector'] }, await open());
      const rest = restFor(first.url);
      const ns = await rest.namespace('gc-restart');
      const path = `/api/v1/namespaces/${ns}/configmaps`;
      const bg = await rest.create(path, cm('bg-owner'));
      const fg = await rest.create(path, cm('fg-owner'));
      const or = await rest.create(path, cm('or-owner'));
      await rest.create(path, cm('bg-dep', [ref(bg)]));
      await rest.create(path, cm('fg-dep', [ref(fg, true)]));
      await rest.create(path, cm('or-dep', [ref(or, true)]));
      assert.equal((await rest.del(`${path}/bg-owner`)).status, 200);
      assert.deepEqual((await rest.del(`${path}/fg-owner?propagationPolicy=Foreground`)).body.metadata.finalizers, ['foregroundDeletion']);
      assert.deepEqual((await rest.del(`${path}/or-owner?propagationPolicy=Orphan`)).body.metadata.finalizers, ['orphan']);
      await first.stop();

      // Second server over the same data, with the collector: it lists every type and completes the work.
      const second = await startTestServer({}, await open());
      try {
        const r2 = restFor(second.url);
        const status = async (name: string): Promise<number> => (await r2.get(`${path}/${name}`)).status;
        await eventually('the background dependent to go', async () => ((await status('bg-dep')) === 404 ? true : undefined), 15_000);
        await eventually('the foreground owner and dependent to go', async () =>
          (await status('fg-dep')) === 404 && (await status('fg-owner')) === 404 ? true : undefined,
        );
        await eventually('the orphaning owner to go', async () => ((await status('or-owner')) === 404 ? true : undefined));
        const kept = await r2.get(`${path}/or-dep`);
        assert.equal(kept.status, 200);
        assert.equal(kept.body.metadata.ownerReferences, undefined);
      } finally {
        await second.stop();
      }
    } finally {
      await redis.stop();
    }
  });
});
