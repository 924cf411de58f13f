/**
 * pods/eviction honours PodDisruptionBudgets as kube-apiserver 1.36's eviction REST does (answers
 * checked on the reference), and Capstan's disruption controller keeps PDB status as
 * kube-controller-manager's does. The eviction rules run on a server without controllers (the test
 * writes PDB status itself, as on the reference); the controller runs on a second server. Both
 * storage backends.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { allBackends } from '../helpers/backends.js';
import { openWatch, type WatchEvent } from '../helpers/watch-client.js';
import { assertStatus, restFor, type Rest } from './rest.js';
import { DisruptionController } from '../../src/controllers/disruption-controller.js';
import { kubectlFor } from './kubectl.js';

const TOO_MANY = "Cannot evict pod as it would violate the pod's disruption budget.";

interface Fixture {
  rest: Rest;
  url: string;
  ns: string;
}

const podsPath = (ns: string): string => `/api/v1/namespaces/${ns}/pods`;
const pdbsPath = (ns: string): string => `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`;

async function createPod(
  f: Fixture,
  name: string,
  labels: Record<string, string>,
  opts: { ready?: boolean; phase?: string; node?: string; owner?: unknown } = {},
): Promise<void> {
  await f.rest.create(podsPath(f.ns), {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels, ...(opts.owner !== undefined ? { ownerReferences: [opts.owner] } : {}) },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...(opts.node !== undefined ? { nodeName: opts.node } : {}) },
  });
  const phase = opts.phase ?? 'Running';
  if (phase === 'Pending' && opts.ready === undefined) return;
  const r = await f.rest.patch(`${podsPath(f.ns)}/${name}/status`, {
    status: { phase, conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  });
  assert.equal(r.status, 200, r.text);
}

async function createPdb(f: Fixture, name: string, spec: Record<string, unknown>): Promise<void> {
  await f.rest.create(pdbsPath(f.ns), { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name }, spec });
}

/** Writes a PDB's status through the status subresource, as kube-controller-manager would. */
async function setPdbStatus(f: Fixture, name: string, status: Record<string, unknown>): Promise<void> {
  const r = await f.rest.patch(`${pdbsPath(f.ns)}/${name}/status`, { status: { observedGeneration: 1, expectedPods: 1, ...status } });
  assert.equal(r.status, 200, r.text);
}

function evict(f: Fixture, pod: string, extra: Record<string, unknown> = {}, query = ''): ReturnType<Rest['post']> {
  return f.rest.post(`${podsPath(f.ns)}/${pod}/eviction${query}`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod }, ...extra });
}

function assertRefused(r: Awaited<ReturnType<Rest['post']>>, cause: string, retryAfter?: number): void {
  assertStatus(r, 429, 'TooManyRequests', TOO_MANY);
  const details: Record<string, unknown> = { causes: [{ reason: 'DisruptionBudget', message: cause }] };
  if (retryAfter !== undefined) details.retryAfterSeconds = retryAfter;
  assert.deepEqual(r.body.details, details);
  assert.equal(r.headers.get('retry-after'), retryAfter === undefined ? null : String(retryAfter));
}

function assertEvicted(r: Awaited<ReturnType<Rest['post']>>): void {
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
}

/** A watch of one PDB whose `next` waits for the first status, after those already consumed, that satisfies a check. */
async function watchPdb(
  f: Fixture,
  name: string,
): Promise<{ next(check: (status: Record<string, any>) => boolean): Promise<Record<string, any>>; close(): void }> {
  const watch = await openWatch(f.url, `${pdbsPath(f.ns)}?watch=true&fieldSelector=metadata.name%3D${name}`);
  let consumed = 0;
  return {
    next: async (check) => {
      const at = (es: WatchEvent[]): number => es.findIndex((e, i) => i >= consumed && e.object?.status !== undefined && check(e.object.status));
      const events = await watch.waitFor((es) => at(es) >= 0, 10_000);
      const index = at(events);
      consumed = index + 1;
      return events[index].object.status;
    },
    close: () => watch.close(),
  };
}

/** Waits (on a watch of the PDB) until PDB `name` satisfies `check`; returns its status. */
async function waitForPdb(f: Fixture, name: string, check: (status: Record<string, any>) => boolean): Promise<Record<string, any>> {
  const watch = await watchPdb(f, name);
  try {
    return await watch.next(check);
  } finally {
    watch.close();
  }
}

for (const backend of allBackends()) {
  describe(`eviction on ${backend.name} storage`, () => {
    let srv: TestServer;
    let f: Fixture;
    before(async () => {
      srv = await startTestServer({ controllers: ['-disruption'] }, await backend.open(), { runControllers: false });
      const rest = restFor(srv.url);
      const ns = await rest.namespace('evict');
      await rest.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
      f = { rest, url: srv.url, ns };
    });
    after(async () => {
      await srv?.stop();
    });

    test('without a PDB a running pod is deleted; a bound one gets DisruptionTarget and terminates', async () => {
      const app = uniqueName('app');
      await createPod(f, 'free', { app });
      assertEvicted(await evict(f, 'free'));
      assert.equal((await f.rest.get(`${podsPath(f.ns)}/free`)).status, 404);
      await createPod(f, 'bound', { app }, { node: 'n1' });
      assertEvicted(await evict(f, 'bound'));
      const pod = (await f.rest.get(`${podsPath(f.ns)}/bound`)).body;
      assert.ok(pod.metadata.deletionTimestamp, 'the bound pod terminates gracefully');
      const cond = pod.status.conditions.find((c: { type: string }) => c.type === 'DisruptionTarget');
      assert.equal(cond.status, 'True');
      assert.equal(cond.reason, 'EvictionByEvictionAPI');
      assert.equal(cond.message, 'Eviction API: evicting');
      assert.match(cond.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    });

    test('a pending pod is deleted whatever its PDB says', async () => {
      const app = uniqueName('app');
      await createPod(f, 'pending', { app }, { phase: 'Pending' });
      await createPdb(f, `${app}-pdb`, { minAvailable: 5, selector: { matchLabels: { app } } });
      assertEvicted(await evict(f, 'pending'));
      assert.equal((await f.rest.get(`${podsPath(f.ns)}/pending`)).status, 404);
    });

    test('a PDB whose status has not observed its generation refuses with 429 and Retry-After 10', async () => {
      const app = uniqueName('app');
      await createPod(f, `${app}-p`, { app });
      await createPdb(f, `${app}-pdb`, { minAvailable: 1, selector: { matchLabels: { app } } });
      assertRefused(await evict(f, `${app}-p`), `The disruption budget ${app}-pdb is still being processed by the server.`, 10);
      assert.equal((await f.rest.get(`${podsPath(f.ns)}/${app}-p`)).status, 200);
    });

    test("no disruption allowed: 429 naming the budget's healthy counts, or kube's other wordings", async () => {
      const app = uniqueName('app');
      const pdb = `${app}-pdb`;
      await createPod(f, `${app}-p`, { app });
      await createPdb(f, pdb, { minAvailable: 1, selector: { matchLabels: { app } } });
      await setPdbStatus(f, pdb, { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 });
      assertRefused(await evict(f, `${app}-p`), `The disruption budget ${pdb} needs 1 healthy pods and has 1 currently`);
      const cond = (status: string, reason: string, message: string) => [
        { type: 'DisruptionAllowed', status, reason, message, lastTransitionTime: '2026-01-01T00:00:00Z' },
      ];
      await setPdbStatus(f, pdb, { disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 1, conditions: cond('False', 'InsufficientPods', '') });
      assertRefused(await evict(f, `${app}-p`), `The disruption budget ${pdb} does not allow evicting pods currently`);
      await setPdbStatus(f, pdb, { disruptionsAllowed: 0, currentHealthy: 3, desiredHealthy: 1, conditions: cond('False', 'Custom', 'held') });
      assertRefused(await evict(f, `${app}-p`), `The disruption budget ${pdb} does not allow evicting pods currently (Custom): held`);
      await setPdbStatus(f, pdb, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, conditions: cond('False', 'SyncFailed', 'boom') });
      assertRefused(await evict(f, `${app}-p`), `The disruption budget ${pdb} does not allow evicting pods currently because it failed sync: boom`);
    });

    test('an allowed eviction consumes the budget (dry run consumes nothing) and records the pod', async () => {
      const app = uniqueName('app');
      const pdb = `${app}-pdb`;
      await createPod(f, `${app}-a`, { app }, { node: 'n1' });
      await createPdb(f, pdb, { minAvailable: 1, selector: { matchLabels: { app } } });
      await setPdbStatus(f, pdb, { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 });
      const before = (await f.rest.get(`${pdbsPath(f.ns)}/${pdb}`)).body;

      assertEvicted(await evict(f, `${app}-a`, {}, '?dryRun=All'));
      assertEvicted(await evict(f, `${app}-a`, { deleteOptions: { dryRun: ['All'] } }));
      const untouched = (await f.rest.get(`${pdbsPath(f.ns)}/${pdb}`)).body;
      assert.equal(untouched.metadata.resourceVersion, before.metadata.resourceVersion);
      const pod = (await f.rest.get(`${podsPath(f.ns)}/${app}-a`)).body;
      assert.equal(pod.metadata.deletionTimestamp, undefined);
      assert.equal(
        pod.status.conditions.some((c: { type: string }) => c.type === 'DisruptionTarget'),
        false,
      );

      assertEvicted(await evict(f, `${app}-a`));
      const after = (await f.rest.get(`${pdbsPath(f.ns)}/${pdb}`)).body;
      assert.equal(after.status.disruptionsAllowed, 0);
      assert.deepEqual(Object.keys(after.status.disruptedPods), [`${app}-a`]);
      assert.match(after.status.disruptedPods[`${app}-a`], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const cond = after.status.conditions.find((c: { type: string }) => c.type === 'DisruptionAllowed');
      assert.deepEqual([cond.status, cond.reason, cond.message, cond.observedGeneration], ['False', 'InsufficientPods', '', 1]);
      assert.ok((await f.rest.get(`${podsPath(f.ns)}/${app}-a`)).body.metadata.deletionTimestamp);
    });

    test('a pod matched by two PDBs is refused with 500 as kube words it', async () => {
      const app = uniqueName('app');
      await createPod(f, `${app}-p`, { app });
      await createPdb(f, `${app}-one`, { minAvailable: 1, selector: { matchLabels: { app } } });
      await createPdb(f, `${app}-two`, { maxUnavailable: 1, selector: { matchExpressions: [{ key: 'app', operator: 'In', values: [app] }] } });
      const r = await evict(f, `${app}-p`);
      assert.equal(r.status, 500, r.text);
      assert.deepEqual(r.body, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.',
        code: 500,
      });
    });

    test('unready pods: AlwaysAllow and a healthy IfHealthyBudget evict without consuming; otherwise the budget decides', async () => {
      const app = uniqueName('app');
      await createPod(f, `${app}-u1`, { app, policy: 'always' }, { ready: false });
      await createPdb(f, `${app}-always`, { minAvailable: 1, selector: { matchLabels: { policy: 'always', app } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
      await setPdbStatus(f, `${app}-always`, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1 });
      assertEvicted(await evict(f, `${app}-u1`));
      assert.equal((await f.rest.get(`${podsPath(f.ns)}/${app}-u1`)).status, 404);

      await createPod(f, `${app}-u2`, { app, policy: 'healthy' }, { ready: false });
      await createPdb(f, `${app}-healthy`, { minAvailable: 1, selector: { matchLabels: { policy: 'healthy', app } } });
      await setPdbStatus(f, `${app}-healthy`, { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1 });
      assertRefused(await evict(f, `${app}-u2`), `The disruption budget ${app}-healthy needs 1 healthy pods and has 0 currently`);
      await setPdbStatus(f, `${app}-healthy`, { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 });
      assertEvicted(await evict(f, `${app}-u2`));
      const pdb = (await f.rest.get(`${pdbsPath(f.ns)}/${app}-healthy`)).body;
      assert.equal(pdb.status.disruptedPods, undefined, 'an unready pod consumes nothing');
    });

    test("the Eviction's name must match and its dry-run must agree with the query's", async () => {
      const app = uniqueName('app');
      await createPod(f, `${app}-p`, { app });
      const mismatch = await f.rest.post(`${podsPath(f.ns)}/${app}-p/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'other' } });
      assertStatus(mismatch, 400, 'BadRequest', 'name in URL does not match name in Eviction object');
      const dry = await evict(f, `${app}-p`, { deleteOptions: { dryRun: ['All', 'All'] } }, '?dryRun=All');
      assert.equal(dry.status, 500);
      assert.equal(dry.body.message, 'Non-matching dry-run options in request and content: [All] and [All All]');
      const ignore = await evict(f, `${app}-p`, { deleteOptions: { ignoreStoreReadErrorWithClusterBreakingPotential: true } });
      assertStatus(
        ignore,
        422,
        'Invalid',
        `Eviction.policy "${app}-p" is invalid: deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: can not be set for pod eviction, try after removing the option`,
      );
    });

    test("the Eviction's preconditions are checked against the latest pod, as kube words the conflict", async () => {
      const app = uniqueName('app');
      const created = await f.rest.create(podsPath(f.ns), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `${app}-p` },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      });
      const rv = await evict(f, `${app}-p`, { deleteOptions: { preconditions: { resourceVersion: '1' } } });
      assertStatus(
        rv,
        409,
        'Conflict',
        `Operation cannot be fulfilled on Pod "${app}-p": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${created.metadata.resourceVersion}). The object might have been modified`,
      );
      assert.deepEqual(rv.body.details, { name: `${app}-p`, kind: 'Pod' });
      const uid = await evict(f, `${app}-p`, { deleteOptions: { preconditions: { uid: 'abc' } } });
      assertStatus(
        uid,
        409,
        'Conflict',
        `Operation cannot be fulfilled on Pod "${app}-p": the UID in the precondition (abc) does not match the UID in record (${created.metadata.uid}). The object might have been deleted and then recreated`,
      );
      assertEvicted(
        await evict(f, `${app}-p`, { deleteOptions: { preconditions: { uid: created.metadata.uid, resourceVersion: created.metadata.resourceVersion } } }),
      );
      assert.equal((await f.rest.get(`${podsPath(f.ns)}/${app}-p`)).status, 404);
    });

    test('the disruption controller drops a disruptedPods entry once the pod outlives the deletion timeout', async () => {
      const controller = new DisruptionController(srv.server.context.storage, { deletionTimeoutMs: 2000 });
      await controller.start();
      try {
        const app = uniqueName('app');
        const pdb = `${app}-pdb`;
        await createPod(f, `${app}-a`, { app });
        await createPod(f, `${app}-b`, { app });
        await createPdb(f, pdb, { minAvailable: 1, selector: { matchLabels: { app } } });
        const watch = await watchPdb(f, pdb);
        try {
          await watch.next((s) => s.disruptionsAllowed === 1);
          const stuck = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
          // An eviction that was approved but whose pod was never deleted.
          const current = (await f.rest.get(`${pdbsPath(f.ns)}/${pdb}`)).body;
          const r = await f.rest.put(`${pdbsPath(f.ns)}/${pdb}/status`, { ...current, status: { ...current.status, disruptedPods: { [`${app}-a`]: stuck } } });
          assert.equal(r.status, 200, r.text);
          const counted = await watch.next((s) => s.disruptedPods !== undefined && s.currentHealthy === 1);
          assert.equal(counted.disruptionsAllowed, 0);
          const cleared = await watch.next((s) => s.disruptedPods === undefined && s.currentHealthy === 2);
          assert.equal(cleared.disruptionsAllowed, 1);
        } finally {
          watch.close();
        }
      } finally {
        controller.stop();
      }
    });

    test('a DisruptionTarget condition not followed by deletion is reset to False after the stale timeout', async () => {
      const controller = new DisruptionController(srv.server.context.storage, { stalePodDisruptionTimeoutMs: 200 });
      const app = uniqueName('app');
      await createPod(f, `${app}-p`, { app });
      const watch = await openWatch(f.url, `${podsPath(f.ns)}?watch=true&fieldSelector=metadata.name%3D${app}-p`);
      await controller.start();
      try {
        const set = await f.rest.patch(
          `${podsPath(f.ns)}/${app}-p/status`,
          {
            status: {
              conditions: [
                { type: 'Ready', status: 'True' },
                {
                  type: 'DisruptionTarget',
                  status: 'True',
                  reason: 'EvictionByEvictionAPI',
                  message: 'Eviction API: evicting',
                  lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
                },
              ],
            },
          },
          'application/strategic-merge-patch+json',
        );
        assert.equal(set.status, 200, set.text);
        const target = (e: WatchEvent): any => (e.object?.status?.conditions ?? []).find((c: { type: string }) => c.type === 'DisruptionTarget');
        const events = await watch.waitFor((es) => es.some((e) => target(e)?.status === 'False'), 10_000);
        const reset = target(events.find((e) => target(e)?.status === 'False') as WatchEvent);
        assert.equal(reset.reason, undefined);
        assert.equal(reset.message, undefined);
      } finally {
        controller.stop();
        watch.close();
      }
    });
  });

  describe(`disruption controller on ${backend.name} storage`, () => {
    let srv: TestServer;
    let f: Fixture;
    before(async () => {
      // No garbage collector: a pod owned by a controller that does not exist must stay for the budget to count it.
      srv = await startTestServer({ controllers: ['*', '-garbage-collector'] }, await backend.open());
      const rest = restFor(srv.url);
      const ns = await rest.namespace('pdb');
      await rest
        .create(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } })
        .catch(() => undefined);
      f = { rest, url: srv.url, ns };
    });
    after(async () => {
      await srv?.stop();
      await backend.stop();
    });

    test('minAvailable 2 over 3 ready pods allows 1 disruption: one eviction passes, the next is refused', async () => {
      const app = uniqueName('app');
      const pdb = `${app}-pdb`;
      for (const n of ['a', 'b', 'c']) await createPod(f, `${app}-${n}`, { app });
      await createPdb(f, pdb, { minAvailable: 2, selector: { matchLabels: { app } } });
      const status = await waitForPdb(f, pdb, (s) => s.disruptionsAllowed === 1);
      assert.deepEqual(
        { ...status, conditions: undefined },
        { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, conditions: undefined },
      );
      assert.deepEqual(
        status.conditions.map((c: Record<string, unknown>) => [c.type, c.status, c.reason, c.message, c.observedGeneration]),
        [['DisruptionAllowed', 'True', 'SufficientPods', '', 1]],
      );
      assertEvicted(await evict(f, `${app}-a`));
      assert.equal((await f.rest.get(`${podsPath(f.ns)}/${app}-a`)).status, 404);
      await waitForPdb(f, pdb, (s) => s.currentHealthy === 2 && s.expectedPods === 2 && s.disruptedPods === undefined);
      assertRefused(await evict(f, `${app}-b`), `The disruption budget ${pdb} needs 2 healthy pods and has 2 currently`);
      // A pod that becomes ready again restores the budget.
      await createPod(f, `${app}-d`, { app });
      await waitForPdb(f, pdb, (s) => s.disruptionsAllowed === 1 && s.currentHealthy === 3);
    });

    test('kubectl drain evicts what the budget allows and reports the refusal for the rest', async () => {
      const app = uniqueName('app');
      const node = uniqueName('node');
      await f.rest.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: node } });
      for (const n of ['a', 'b']) await createPod(f, `${app}-${n}`, { app }, { node });
      await createPdb(f, `${app}-pdb`, { minAvailable: 1, selector: { matchLabels: { app } } });
      await waitForPdb(f, `${app}-pdb`, (s) => s.disruptionsAllowed === 1);
      const kubectl = kubectlFor(srv.kubeconfig);
      const drained = await kubectl.run(['drain', node, '--force', '--grace-period=0', '--timeout=2s']);
      assert.notEqual(drained.code, 0, drained.stdout);
      assert.match(drained.stderr, /Cannot evict pod as it would violate the pod's disruption budget\./);
      const left = (await f.rest.get(`${podsPath(f.ns)}?labelSelector=app%3D${app}`)).body.items;
      assert.equal(left.length, 1, 'one pod was evicted, the budget kept the other');
      assert.equal((await f.rest.get(`/api/v1/nodes/${node}`)).body.spec.unschedulable, true);
    });

    test('maxUnavailable and percentages use the scale of the pods controllers', async () => {
      const app = uniqueName('app');
      const rs = await f.rest.create(`/apis/apps/v1/namespaces/${f.ns}/replicasets`, {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: `${app}-rs` },
        spec: {
          replicas: 4,
          selector: { matchLabels: { app } },
          template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      });
      const owner = { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `${app}-rs`, uid: rs.metadata.uid, controller: true };
      for (const n of ['a', 'b', 'c']) await createPod(f, `${app}-${n}`, { app }, { owner });
      await createPdb(f, `${app}-max`, { maxUnavailable: '50%', selector: { matchLabels: { app } } });
      const max = await waitForPdb(f, `${app}-max`, (s) => s.observedGeneration === 1 && s.expectedPods === 4);
      assert.deepEqual([max.desiredHealthy, max.currentHealthy, max.disruptionsAllowed], [2, 3, 1]);

      const scaled = await f.rest.patch(`/apis/apps/v1/namespaces/${f.ns}/replicasets/${app}-rs/scale`, { spec: { replicas: 6 } });
      assert.equal(scaled.status, 200, scaled.text);
      const grown = await waitForPdb(f, `${app}-max`, (s) => s.expectedPods === 6);
      assert.deepEqual([grown.desiredHealthy, grown.disruptionsAllowed], [3, 0]);

      const other = uniqueName('app');
      const orphanOwner = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'gone', uid: '00000000-0000-0000-0000-000000000000', controller: true };
      await createPod(f, `${other}-a`, { app: other }, { owner: orphanOwner });
      await createPdb(f, `${other}-pct`, { minAvailable: '50%', selector: { matchLabels: { app: other } } });
      const failed = await waitForPdb(f, `${other}-pct`, (s) => Array.isArray(s.conditions) && s.conditions.length > 0);
      assert.equal(failed.disruptionsAllowed, 0);
      assert.deepEqual(
        failed.conditions.map((c: Record<string, unknown>) => [c.type, c.status, c.reason, c.message]),
        [['DisruptionAllowed', 'False', 'SyncFailed', `found no controllers for pod "${other}-a"`]],
      );
    });
  });
}
