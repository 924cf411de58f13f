/**
 * `kill -9` of the worker that leads the controller manager of `capstan --storage=redis --workers 2`
 * while the garbage collector is deleting the dependents of an owner: another worker (or the
 * restarted one) takes the Lease over once it expires, lists every type and finishes the work.
 * Nothing is left behind (every dependent of the deleted owner is gone, the orphaning of a second
 * owner completes, a foreground deletion with blockOwnerDeletion dependents and a dependency cycle
 * complete, a dependent naming its owner with a stale uid and one owned across scopes go) and
 * nothing is deleted that should stay (dependents with another live owner, the orphaned dependents,
 * a cluster-scoped object naming a namespaced owner).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createNamespace, eventually, fresh, startRedisWorkers, type RedisWorkers } from '../helpers/redis-workers.js';

let env: RedisWorkers;

before(async () => {
  env = await startRedisWorkers();
});

after(async () => {
  await env?.stop();
});

const LEASE = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/capstan-controller-manager';

interface LeaseSpec {
  holderIdentity?: string;
  leaseTransitions?: number;
  leaseDurationSeconds?: number;
}

async function leaseSpec(url: string): Promise<LeaseSpec | undefined> {
  const r = await fresh(url, LEASE);
  if (r.status !== 200) return undefined;
  const body = JSON.parse(r.text) as { spec?: LeaseSpec };
  return body.spec;
}

/** The pid of the worker whose log says it acquired the lease as `identity`. */
function pidOf(stderr: string, identity: string): number | undefined {
  for (const line of stderr.split('\n')) {
    if (!line.includes('leader election: acquired the lease')) continue;
    try {
      const entry = JSON.parse(line) as { identity?: string; pid?: number };
      if (entry.identity === identity) return entry.pid;
    } catch {
      // not a JSON log line
    }
  }
  return undefined;
}

/** Runs `make(i)` for i in [0, n) with `parallel` requests in flight. */
async function inParallel(n: number, parallel: number, make: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) await make(next++);
    }),
  );
}

async function names(url: string, ns: string, selector: string): Promise<Array<{ name: string; ownerUids: string[]; terminating: boolean }>> {
  const r = await fresh(url, `/api/v1/namespaces/${ns}/configmaps?labelSelector=${encodeURIComponent(selector)}`);
  assert.equal(r.status, 200, r.text);
  const items = (JSON.parse(r.text) as { items: Array<{ metadata: { name: string; deletionTimestamp?: string; ownerReferences?: Array<{ uid: string }> } }> })
    .items;
  return items.map((i) => ({
    name: i.metadata.name,
    ownerUids: (i.metadata.ownerReferences ?? []).map((o) => o.uid),
    terminating: i.metadata.deletionTimestamp !== undefined,
  }));
}

test(
  'the garbage collector resumes on another worker after its leader is killed: nothing left behind, nothing wrongly deleted',
  { timeout: 240_000 },
  async (t) => {
    const held = await (async () => {
      let spec: LeaseSpec | undefined;
      await eventually(async () => {
        spec = await leaseSpec(env.url);
        return spec?.holderIdentity !== undefined && spec.holderIdentity !== '';
      }, 'the controller-manager lease to be held');
      return spec as LeaseSpec;
    })();
    assert.equal(held.leaseDurationSeconds, 15);
    const leader = held.holderIdentity ?? '';
    const acquisitions = (text: string): number => text.split('\n').filter((l) => l.includes('leader election: acquired the lease')).length;
    assert.equal(acquisitions(env.cap.stderr()), 1, 'both workers are candidates; one wins');
    const leaderPid = pidOf(env.cap.stderr(), leader);
    assert.ok(leaderPid !== undefined && env.cap.workerPids().includes(leaderPid), `the leader ${leader} is a live worker`);

    const ns = 'gc-failover';
    await createNamespace(env.url, ns);
    const post = async (body: unknown): Promise<{ metadata: { name: string; uid: string } }> => {
      const r = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps`, { method: 'POST', body: JSON.stringify(body) });
      assert.equal(r.status, 201, r.text);
      return JSON.parse(r.text) as { metadata: { name: string; uid: string } };
    };
    const ownerRef = (o: { metadata: { name: string; uid: string } }): unknown => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: o.metadata.name,
      uid: o.metadata.uid,
    });
    const owner = await post({ metadata: { name: 'owner' } });
    const anchor = await post({ metadata: { name: 'anchor' } });
    const orphanOwner = await post({ metadata: { name: 'orphan-owner' } });
    const DOOMED = 600;
    const KEPT = 100;
    const ORPHANS = 100;
    await inParallel(DOOMED, 8, async (i) => {
      await post({ metadata: { name: `dep-${i}`, labels: { role: 'doomed' }, ownerReferences: [ownerRef(owner)] } });
    });
    await inParallel(KEPT, 8, async (i) => {
      await post({ metadata: { name: `kept-${i}`, labels: { role: 'kept' }, ownerReferences: [ownerRef(owner), ownerRef(anchor)] } });
    });
    await inParallel(ORPHANS, 8, async (i) => {
      await post({ metadata: { name: `orphan-${i}`, labels: { role: 'orphan' }, ownerReferences: [ownerRef(orphanOwner)] } });
    });

    // Foreground deletion held by dependents with blockOwnerDeletion.
    const fgOwner = await post({ metadata: { name: 'fg-owner' } });
    const FOREGROUND = 50;
    await inParallel(FOREGROUND, 8, async (i) => {
      await post({
        metadata: { name: `fg-dep-${i}`, labels: { role: 'fg' }, ownerReferences: [{ ...(ownerRef(fgOwner) as object), blockOwnerDeletion: true }] },
      });
    });
    // A dependency cycle: each owns the other, both blocking.
    const cycA = await post({ metadata: { name: 'cyc-a' } });
    const cycB = await post({ metadata: { name: 'cyc-b', ownerReferences: [{ ...(ownerRef(cycA) as object), blockOwnerDeletion: true }] } });
    const cycAStored = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps/cyc-a`);
    const cycAObj = JSON.parse(cycAStored.text) as { metadata: Record<string, unknown> };
    cycAObj.metadata.ownerReferences = [{ ...(ownerRef(cycB) as object), blockOwnerDeletion: true }];
    const cycAPut = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps/cyc-a`, { method: 'PUT', body: cycAObj });
    assert.equal(cycAPut.status, 200, cycAPut.text);
    // Owners matched by uid: a reference to the anchor's name with another uid has no owner.
    const stale = await post({
      metadata: { name: 'stale-dep', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'anchor', uid: '00000000-0000-0000-0000-00000000beef' }] },
    });
    // Across scopes: a namespaced dependent of a cluster-scoped owner goes with it; a cluster-scoped
    // object naming a namespaced owner is never collected.
    const clusterRoles = '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    const xsOwnerResp = await fresh(env.url, clusterRoles, { method: 'POST', body: { metadata: { name: 'gc-failover-xs-owner' }, rules: [] } });
    assert.equal(xsOwnerResp.status, 201, xsOwnerResp.text);
    const xsOwner = JSON.parse(xsOwnerResp.text) as { metadata: { name: string; uid: string } };
    await post({
      metadata: {
        name: 'xs-dep',
        ownerReferences: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: xsOwner.metadata.name, uid: xsOwner.metadata.uid }],
      },
    });
    const xsBad = await fresh(env.url, clusterRoles, {
      method: 'POST',
      body: { metadata: { name: 'gc-failover-xs-bad', ownerReferences: [ownerRef(anchor)] }, rules: [] },
    });
    assert.equal(xsBad.status, 201, xsBad.text);

    const del = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps/owner`, { method: 'DELETE' });
    assert.equal(del.status, 200, del.text);
    const orphanDel = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps/orphan-owner?propagationPolicy=Orphan`, { method: 'DELETE' });
    assert.equal(orphanDel.status, 200, orphanDel.text);
    for (const [path, policy] of [
      [`/api/v1/namespaces/${ns}/configmaps/fg-owner`, 'Foreground'],
      [`/api/v1/namespaces/${ns}/configmaps/cyc-a`, 'Foreground'],
      [`${clusterRoles}/gc-failover-xs-owner`, 'Background'],
    ]) {
      const r = await fresh(env.url, `${path}?propagationPolicy=${policy}`, { method: 'DELETE' });
      assert.equal(r.status, 200, r.text);
    }

    // Kill the leader as soon as the collector is visibly at work.
    let remainingAtKill = DOOMED;
    await eventually(async () => {
      remainingAtKill = (await names(env.url, ns, 'role=doomed')).length;
      return remainingAtKill < DOOMED;
    }, 'the collector to start deleting dependents');
    const mark = env.cap.stderr().length;
    process.kill(leaderPid, 'SIGKILL');
    const killedAt = Date.now();
    t.diagnostic(`killed the leader (pid ${leaderPid}) with ${remainingAtKill} of ${DOOMED} dependents left`);
    await env.cap.waitForLog(/"msg":"worker restarted"/, 15_000, mark);

    await eventually(
      async () => {
        const spec = await leaseSpec(env.url);
        return spec?.holderIdentity !== undefined && spec.holderIdentity !== '' && spec.holderIdentity !== leader;
      },
      'another candidate to take the lease over',
      40_000,
    );
    const after = (await leaseSpec(env.url)) ?? {};
    t.diagnostic(`lease taken over after ${Date.now() - killedAt} ms by ${String(after.holderIdentity)}`);
    assert.equal(after.leaseTransitions, (held.leaseTransitions ?? 0) + 1);
    assert.equal(acquisitions(env.cap.stderr().slice(mark)), 1, 'one candidate took over');

    await eventually(async () => (await names(env.url, ns, 'role=doomed')).length === 0, 'every dependent of the deleted owner to be gone', 60_000);
    await eventually(
      async () => (await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps/orphan-owner`)).status === 404,
      'the orphaning owner to be gone',
      60_000,
    );
    await eventually(
      async () => (await names(env.url, ns, 'role=kept')).every((k) => k.ownerUids.length === 1),
      'the references to the deleted owner to be removed from the kept dependents',
      60_000,
    );
    await eventually(async () => (await names(env.url, ns, 'role=fg')).length === 0, 'the blocking dependents of the foreground owner to be gone', 60_000);
    const goneAll = async (paths: string[]): Promise<boolean> => (await Promise.all(paths.map((p) => fresh(env.url, p)))).every((r) => r.status === 404);
    await eventually(
      () =>
        goneAll([
          `/api/v1/namespaces/${ns}/configmaps/fg-owner`,
          `/api/v1/namespaces/${ns}/configmaps/cyc-a`,
          `/api/v1/namespaces/${ns}/configmaps/cyc-b`,
          `/api/v1/namespaces/${ns}/configmaps/${stale.metadata.name}`,
          `/api/v1/namespaces/${ns}/configmaps/xs-dep`,
          `${clusterRoles}/gc-failover-xs-owner`,
        ]),
      'the foreground owner, the cycle, the stale-uid dependent and the cross-scope dependent to be gone',
      60_000,
    );
    assert.equal((await fresh(env.url, `${clusterRoles}/gc-failover-xs-bad`)).status, 200, 'a cluster-scoped object naming a namespaced owner stays');
    const kept = await names(env.url, ns, 'role=kept');
    assert.equal(kept.length, KEPT, 'dependents with another live owner stay');
    assert.ok(kept.every((k) => k.ownerUids[0] === anchor.metadata.uid && !k.terminating));
    const orphans = await names(env.url, ns, 'role=orphan');
    assert.equal(orphans.length, ORPHANS, 'orphaned dependents stay');
    assert.ok(
      orphans.every((o) => o.ownerUids.length === 0 && !o.terminating),
      'orphaned dependents lost the reference',
    );
    assert.equal((await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps/anchor`)).status, 200);
  },
);
