/**
 * API Priority and Fairness classification over real HTTPS with real credentials (static tokens,
 * service account JWTs, the administrator's plain port, anonymous): each bootstrap FlowSchema's
 * traffic lands on its FlowSchema and priority level, named by UID in kube's
 * X-Kubernetes-PF-FlowSchema-UID / X-Kubernetes-PF-PriorityLevel-UID headers (also on 404s: flow
 * control runs before the handler); a FlowSchema naming a missing level is Dangling and skipped;
 * requests no FlowSchema matches land on catch-all. The seats of each level are kube-apiserver
 * 1.36's (the nominal, lower and upper limits were read from its /metrics with the same objects).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, createLevel, flowControlUids, sampleValue, scrape, startApfServer, until, type ApfServer } from './apf-helpers.js';

const TOKENS = [
  'tok-alice,alice,alice-uid,"team"',
  'tok-kcm,system:kube-controller-manager,kcm-uid',
  'tok-sched,system:kube-scheduler,sched-uid',
  'tok-node,system:node:n1,node-uid,"system:nodes"',
];

describe('APF classification of the bootstrap FlowSchemas', () => {
  let s: ApfServer;
  let uids: Awaited<ReturnType<typeof flowControlUids>>;
  const tokens = new Map<string, string>();

  /** The FlowSchema and level names a request was classified to, read back from the UID headers. */
  async function classify(token: string | undefined, path: string, method = 'GET'): Promise<[string, string]> {
    const r = await s.client.send(token, path, { method, body: method === 'GET' ? undefined : {} });
    const fsUid = r.headers['x-kubernetes-pf-flowschema-uid'];
    const plUid = r.headers['x-kubernetes-pf-prioritylevel-uid'];
    const name = (m: Map<string, string>, uid: unknown): string => [...m].find(([, u]) => u === uid)?.[0] ?? `<uid ${String(uid)}>`;
    return [name(uids.schemas, fsUid), name(uids.levels, plUid)];
  }

  async function serviceAccountToken(namespace: string, name: string): Promise<string> {
    assert.equal((await admin(s.adminUrl, `/api/v1/namespaces/${namespace}/serviceaccounts`, 'POST', { metadata: { name } })).status, 201);
    const tr = await admin(s.adminUrl, `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, 'POST', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    assert.equal(tr.status, 201, JSON.stringify(tr.body));
    return tr.body.status.token as string;
  }

  before(async () => {
    // RBAC, so that anonymous requests are authenticated (AlwaysAllow refuses them, as kube does) and classified;
    // alice may read ConfigMaps, so that a missing one answers 404.
    s = await startApfServer(TOKENS, { authorizationMode: 'RBAC' });
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'alice-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    };
    assert.equal((await admin(s.adminUrl, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', 'POST', binding)).status, 201);
    await until('the binding to reach the authorizer', async () =>
      (await s.client.send('tok-alice', '/api/v1/namespaces/default/configmaps/none')).status === 404 ? true : undefined,
    );
    // The bootstrap objects exist once the server started; the APF configuration follows them through the change stream.
    uids = await until('the bootstrap FlowSchemas', async () => {
      const u = await flowControlUids(s.adminUrl);
      return u.schemas.has('global-default') && u.levels.has('workload-low') ? u : undefined;
    });
    await until('global-default to be in force', async () => {
      const r = await s.client.send('tok-alice', '/api/v1/namespaces/default/configmaps');
      return r.headers['x-kubernetes-pf-flowschema-uid'] === uids.schemas.get('global-default') ? true : undefined;
    });
    tokens.set('sa-system', await serviceAccountToken('kube-system', 'apf-sa'));
    tokens.set('sa-default', await serviceAccountToken('default', 'apf-sa'));
  });
  after(async () => {
    await s?.stop();
  });

  test('system:masters is exempt; probes are exempt for everyone', async () => {
    const r = await fetch(`${s.adminUrl}/api/v1/namespaces`);
    assert.equal(r.headers.get('x-kubernetes-pf-flowschema-uid'), uids.schemas.get('exempt'));
    assert.equal(r.headers.get('x-kubernetes-pf-prioritylevel-uid'), uids.levels.get('exempt'));
    for (const path of ['/readyz', '/livez', '/healthz']) {
      assert.deepEqual(await classify('tok-alice', path), ['probes', 'exempt'], path);
      assert.deepEqual(await classify(undefined, path), ['probes', 'exempt'], `${path} anonymous`);
    }
    // Only GETs of the probe paths: anything else of an ordinary user is global-default.
    assert.deepEqual(await classify('tok-alice', '/readyz/ping', 'POST'), ['global-default', 'global-default']);
  });

  test('controllers: leader election, then the kube-controller-manager and kube-scheduler schemas', async () => {
    const lease = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-controller-manager';
    assert.deepEqual(await classify('tok-kcm', lease), ['system-leader-election', 'leader-election']);
    assert.deepEqual(await classify('tok-kcm', lease, 'PUT'), ['system-leader-election', 'leader-election']);
    // Deleting a lease is not a leader-election verb.
    assert.deepEqual(await classify('tok-kcm', lease, 'DELETE'), ['kube-controller-manager', 'workload-high']);
    assert.deepEqual(await classify('tok-kcm', '/api/v1/namespaces/kube-system/configmaps'), ['kube-controller-manager', 'workload-high']);
    assert.deepEqual(await classify('tok-kcm', '/version'), ['kube-controller-manager', 'workload-high']);
    assert.deepEqual(await classify('tok-sched', '/api/v1/pods'), ['kube-scheduler', 'workload-high']);
    assert.deepEqual(await classify('tok-sched', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler'), [
      'system-leader-election',
      'leader-election',
    ]);
  });

  test('nodes: their Node, status and leases are node-high, the rest system', async () => {
    assert.deepEqual(await classify('tok-node', '/api/v1/nodes/n1'), ['system-node-high', 'node-high']);
    assert.deepEqual(await classify('tok-node', '/api/v1/nodes/n1/status', 'PATCH'), ['system-node-high', 'node-high']);
    assert.deepEqual(await classify('tok-node', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1'), ['system-node-high', 'node-high']);
    assert.deepEqual(await classify('tok-node', '/api/v1/pods'), ['system-nodes', 'system']);
    assert.deepEqual(await classify('tok-node', '/api/v1/namespaces/default/configmaps/x'), ['system-nodes', 'system']);
  });

  test('service accounts: kube-system ones are workload-high (and elect leaders), others workload-low', async () => {
    const system = tokens.get('sa-system');
    const other = tokens.get('sa-default');
    assert.deepEqual(await classify(system, '/api/v1/namespaces/kube-system/configmaps'), ['kube-system-service-accounts', 'workload-high']);
    assert.deepEqual(await classify(system, '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/x'), ['system-leader-election', 'leader-election']);
    assert.deepEqual(await classify(other, '/api/v1/namespaces/default/configmaps'), ['service-accounts', 'workload-low']);
    assert.deepEqual(await classify(other, '/apis/coordination.k8s.io/v1/namespaces/default/leases/x'), ['service-accounts', 'workload-low']);
  });

  test('ordinary users are global-default, and a 404 still names its classification', async () => {
    const r = await s.client.send('tok-alice', '/api/v1/namespaces/default/configmaps/nothing-here');
    assert.equal(r.status, 404);
    assert.equal(r.headers['x-kubernetes-pf-flowschema-uid'], uids.schemas.get('global-default'));
    assert.equal(r.headers['x-kubernetes-pf-prioritylevel-uid'], uids.levels.get('global-default'));
    assert.deepEqual(await classify('tok-alice', '/apis'), ['global-default', 'global-default']);
  });

  test("seats per level are kube-apiserver 1.36's", async () => {
    await createLevel(
      s.adminUrl,
      'tiny',
      { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } },
      ['nobody'],
      50,
    );
    // Read from kube-apiserver 1.36.4's /metrics with the bootstrap objects and this level (600 seats in all).
    const want: Record<string, [number, number, number]> = {
      'catch-all': [13, 13, 613],
      exempt: [0, 0, 600],
      'global-default': [49, 24, 649],
      'leader-election': [25, 25, 625],
      'node-high': [98, 73, 698],
      system: [74, 50, 674],
      tiny: [3, 3, 3],
      'workload-high': [98, 49, 698],
      'workload-low': [244, 24, 844],
    };
    const samples = await until('the new level in the metrics', async () => {
      const m = await scrape(s.adminUrl);
      return sampleValue(m, 'apiserver_flowcontrol_nominal_limit_seats', { priority_level: 'tiny' }) === undefined ? undefined : m;
    });
    for (const [level, [nominal, lower, upper]] of Object.entries(want)) {
      const labels = { priority_level: level };
      assert.deepEqual(
        [
          sampleValue(samples, 'apiserver_flowcontrol_nominal_limit_seats', labels),
          sampleValue(samples, 'apiserver_flowcontrol_lower_limit_seats', labels),
          sampleValue(samples, 'apiserver_flowcontrol_upper_limit_seats', labels),
        ],
        [nominal, lower, upper],
        level,
      );
    }
    // At rest the lendable seats are shared out as kube shares them (the reference's current limits).
    assert.equal(sampleValue(samples, 'apiserver_flowcontrol_current_limit_seats', { priority_level: 'global-default' }), 56);
    assert.equal(sampleValue(samples, 'apiserver_flowcontrol_current_limit_seats', { priority_level: 'node-high' }), 170);
    assert.equal(sampleValue(samples, 'apiserver_flowcontrol_current_limit_seats', { priority_level: 'tiny' }), 3);
  });

  test('a FlowSchema naming a missing level is Dangling and skipped', async () => {
    const fs = await admin(s.adminUrl, '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', 'POST', {
      metadata: { name: 'apf-dangling' },
      spec: {
        matchingPrecedence: 10,
        priorityLevelConfiguration: { name: 'apf-missing' },
        rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }],
      },
    });
    assert.equal(fs.status, 201);
    const condition = await until('the Dangling condition', async () => {
      const got = await admin(s.adminUrl, '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/apf-dangling');
      return (got.body.status?.conditions as any[] | undefined)?.find((c) => c.type === 'Dangling');
    });
    assert.equal(condition.status, 'True');
    assert.equal(condition.reason, 'NotFound');
    assert.equal(condition.message, 'This FlowSchema references the PriorityLevelConfiguration object named "apf-missing" but there is no such object');
    assert.deepEqual(await classify('tok-alice', '/version'), ['global-default', 'global-default']);
  });

  test('a request no FlowSchema matches is catch-all', async () => {
    // An administrator takes global-default over (autoupdate off) and narrows it to a group nobody is in.
    const path = '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/global-default';
    const current = (await admin(s.adminUrl, path)).body;
    current.metadata.annotations['apf.kubernetes.io/autoupdate-spec'] = 'false';
    current.spec.rules[0].subjects = [{ kind: 'Group', group: { name: 'nobody' } }];
    assert.equal((await admin(s.adminUrl, path, 'PUT', current)).status, 200);
    const got = await until('catch-all', async () => {
      const c = await classify('tok-alice', '/api/v1/namespaces/default/configmaps');
      return c[0] === 'catch-all' ? c : undefined;
    });
    assert.deepEqual(got, ['catch-all', 'catch-all']);
  });
});
