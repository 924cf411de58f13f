/**
 * ResourceQuota as kube-apiserver 1.36 and kube-controller-manager enforce and count it (every
 * message below was first taken from the reference with the same requests): the controller fills
 * `status.hard` and `status.used` (zeros included), admission charges creates and refuses what
 * does not fit, pods must state constrained resources, deletions release usage, dry runs charge
 * nothing, scopes select pods, and parallel creates never spend more than the quota holds.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

type Obj = Record<string, any>;
let srv: TestServer;
before(async () => {
  // The quota controller, and the ServiceAccount controller that makes a new namespace's pods admissible.
  srv = await startTestServer({ controllers: ['resourcequota', 'serviceaccount'] });
});
after(async () => {
  await srv?.stop();
});

const json = { 'content-type': 'application/json' };
const post = (path: string, body: Obj) => api(srv.url, path, { method: 'POST', headers: json, body: JSON.stringify(body) });

async function namespace(name: string): Promise<string> {
  assert.equal((await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } })).status, 201);
  // Pods are admitted once the namespace's default ServiceAccount exists (as on a cluster, it is made right after).
  const started = Date.now();
  while ((await api(srv.url, `/api/v1/namespaces/${name}/serviceaccounts/default`)).status !== 200) {
    assert.ok(Date.now() - started < 60_000, `no default ServiceAccount in ${name}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return `/api/v1/namespaces/${name}`;
}

/** Waits (polling the API, as a client would) until the quota's status satisfies `done`. */
async function quotaStatus(path: string, done: (status: Obj) => boolean): Promise<Obj> {
  const started = Date.now();
  for (;;) {
    const got = await api(srv.url, path);
    if (got.status === 200 && got.body.status !== undefined && done(got.body.status)) return got.body.status;
    assert.ok(Date.now() - started < 60_000, `quota status never settled: ${got.text}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const pod = (name: string, resources?: Obj, spec: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'x', ...(resources ? { resources } : {}) }], ...spec },
});

test('the controller counts, admission charges and refuses, deletion releases', async () => {
  const ns = await namespace('rq-life');
  const quota = {
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: 'q' },
    spec: {
      hard: {
        pods: '2',
        'requests.cpu': '1',
        'limits.memory': '1Gi',
        'count/configmaps': '2',
        'services.nodeports': '1',
        'requests.storage': '5Gi',
        'count/deployments.apps': '1',
      },
    },
  };
  assert.equal((await post(`${ns}/resourcequotas`, quota)).status, 201);
  const initial = await quotaStatus(`${ns}/resourcequotas/q`, (s) => s.used !== undefined);
  assert.deepEqual(initial.hard, {
    'count/configmaps': '2',
    'count/deployments.apps': '1',
    'limits.memory': '1Gi',
    pods: '2',
    'requests.cpu': '1',
    'requests.storage': '5Gi',
    'services.nodeports': '1',
  });
  assert.deepEqual(initial.used, {
    'count/configmaps': '0',
    'count/deployments.apps': '0',
    'limits.memory': '0',
    pods: '0',
    'requests.cpu': '0',
    'requests.storage': '0',
    'services.nodeports': '0',
  });

  const bounded = { requests: { cpu: '600m' }, limits: { memory: '512Mi' } };
  const cases: [Obj, number, string?][] = [
    [pod('p0'), 403, 'pods "p0" is forbidden: failed quota: q: must specify limits.memory for: c; requests.cpu for: c'],
    [pod('p1', bounded), 201],
    [pod('p2', bounded), 403, 'pods "p2" is forbidden: exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1'],
    [pod('p3', { requests: { cpu: '300m' }, limits: { memory: '512Mi' } }), 201],
    [
      pod('p4', { requests: { cpu: '100m' }, limits: { memory: '100Mi' } }),
      403,
      'pods "p4" is forbidden: exceeded quota: q, requested: limits.memory=100Mi,pods=1, used: limits.memory=1Gi,pods=2, limited: limits.memory=1Gi,pods=2',
    ],
  ];
  for (const [body, status, message] of cases) {
    const got = await post(`${ns}/pods`, body);
    assert.equal(got.status, status, got.text);
    if (message !== undefined) assert.equal(got.body.message, message);
  }
  const afterPods = await api(srv.url, `${ns}/resourcequotas/q`);
  assert.equal(afterPods.body.status.used['requests.cpu'], '900m');
  assert.equal(afterPods.body.status.used['limits.memory'], '1Gi');

  const dryRun = await api(srv.url, `${ns}/configmaps?dryRun=All`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'dry' } }) });
  assert.equal(dryRun.status, 201);
  for (const name of ['a', 'b']) assert.equal((await post(`${ns}/configmaps`, { metadata: { name } })).status, 201);
  const third = await post(`${ns}/configmaps`, { metadata: { name: 'c' } });
  assert.equal(
    third.body.message,
    'configmaps "c" is forbidden: exceeded quota: q, requested: count/configmaps=1, used: count/configmaps=2, limited: count/configmaps=2',
  );
  const deployment = (name: string): Obj => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
  });
  assert.equal(
    (await api(srv.url, '/apis/apps/v1/namespaces/rq-life/deployments', { method: 'POST', headers: json, body: JSON.stringify(deployment('d')) })).status,
    201,
  );
  const second = await api(srv.url, '/apis/apps/v1/namespaces/rq-life/deployments', { method: 'POST', headers: json, body: JSON.stringify(deployment('e')) });
  assert.equal(
    second.body.message,
    'deployments.apps "e" is forbidden: exceeded quota: q, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1',
  );
  const nodePorts = await post(`${ns}/services`, {
    metadata: { name: 'np' },
    spec: { type: 'NodePort', ports: [{ port: 80 }, { port: 81, name: 'b' }].map((p, i) => ({ ...p, name: `p${i}` })) },
  });
  assert.equal(
    nodePorts.body.message,
    'services "np" is forbidden: exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=0, limited: services.nodeports=1',
  );

  assert.equal((await api(srv.url, `${ns}/pods/p3?gracePeriodSeconds=0`, { method: 'DELETE' })).status, 200);
  const released = await quotaStatus(`${ns}/resourcequotas/q`, (s) => s.used.pods === '1');
  assert.deepEqual(released.used, {
    'count/configmaps': '2',
    'count/deployments.apps': '1',
    'limits.memory': '512Mi',
    pods: '1',
    'requests.cpu': '600m',
    'requests.storage': '0',
    'services.nodeports': '0',
  });
});

test('scoped quotas count only the pods in their scopes', async () => {
  const ns = await namespace('rq-scopes');
  const scoped = (name: string, spec: Obj): Obj => ({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name }, spec: { hard: { pods: '5' }, ...spec } });
  assert.equal((await post(`${ns}/resourcequotas`, scoped('best-effort', { scopes: ['BestEffort'] }))).status, 201);
  assert.equal((await post(`${ns}/resourcequotas`, scoped('terminating', { scopes: ['Terminating'] }))).status, 201);
  const high = { scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['rq-high'] }] } };
  assert.equal((await post(`${ns}/resourcequotas`, scoped('high', high))).status, 201);
  assert.equal(
    (
      await api(srv.url, '/apis/scheduling.k8s.io/v1/priorityclasses', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ metadata: { name: 'rq-high' }, value: 1000 }),
      })
    ).status,
    201,
  );
  for (const name of ['best-effort', 'terminating', 'high']) await quotaStatus(`${ns}/resourcequotas/${name}`, (s) => s.used?.pods === '0');
  assert.equal((await post(`${ns}/pods`, pod('plain'))).status, 201);
  assert.equal((await post(`${ns}/pods`, pod('burstable', { requests: { cpu: '1m' } }, { activeDeadlineSeconds: 30 }))).status, 201);
  assert.equal((await post(`${ns}/pods`, pod('important', { requests: { cpu: '1m' } }, { priorityClassName: 'rq-high' }))).status, 201);
  const usedPods = async (name: string): Promise<string> => (await api(srv.url, `${ns}/resourcequotas/${name}`)).body.status.used.pods;
  assert.equal(await usedPods('best-effort'), '1');
  assert.equal(await usedPods('terminating'), '1');
  assert.equal(await usedPods('high'), '1');
});

test('parallel creates never spend more than the quota holds', async () => {
  const ns = await namespace('rq-race');
  assert.equal((await post(`${ns}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard: { 'count/secrets': '7' } } })).status, 201);
  await quotaStatus(`${ns}/resourcequotas/q`, (s) => s.used?.['count/secrets'] === '0');
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => post(`${ns}/secrets`, { metadata: { name: `s${i}` } })));
  assert.equal(results.filter((r) => r.status === 201).length, 7, results.map((r) => r.status).join(','));
  assert.ok(results.every((r) => r.status === 201 || r.status === 403 || r.status === 409));
  const listed = await api(srv.url, `${ns}/secrets`);
  assert.equal(listed.body.items.length, 7);
  const status = await quotaStatus(`${ns}/resourcequotas/q`, (s) => s.used['count/secrets'] === '7');
  assert.equal(status.used['count/secrets'], '7');
});

const deviceClass = async (name: string, spec: Obj = {}): Promise<void> => {
  const created = await post('/apis/resource.k8s.io/v1/deviceclasses', { apiVersion: 'resource.k8s.io/v1', kind: 'DeviceClass', metadata: { name }, spec });
  assert.equal(created.status, 201, created.text);
};

const claim = (name: string, requests: Obj[]): Obj => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaim',
  metadata: { name },
  spec: { devices: { requests } },
});

test('ResourceClaims are charged per DeviceClass, at admission and by the controller', async () => {
  const ns = await namespace('rq-dra');
  const claims = `/apis/resource.k8s.io/v1/namespaces/rq-dra/resourceclaims`;
  await deviceClass('rq-gold');
  const hard = {
    'count/resourceclaims.resource.k8s.io': '3',
    'rq-gold.deviceclass.resource.k8s.io/devices': '4',
    'rq-silver.deviceclass.resource.k8s.io/devices': '40',
    'requests.deviceclass.resource.kubernetes.io/rq-gold': '10',
  };
  assert.equal((await post(`${ns}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard } })).status, 201);
  const zero = {
    'count/resourceclaims.resource.k8s.io': '0',
    'rq-gold.deviceclass.resource.k8s.io/devices': '0',
    'rq-silver.deviceclass.resource.k8s.io/devices': '0',
    'requests.deviceclass.resource.kubernetes.io/rq-gold': '0',
  };
  assert.deepEqual((await quotaStatus(`${ns}/resourcequotas/q`, (s) => s.used !== undefined)).used, zero);
  // An exact request of 2, and a firstAvailable charging each class the most it may get (All: 32).
  const requests = [
    { name: 'a', exactly: { deviceClassName: 'rq-gold', count: 2 } },
    {
      name: 'b',
      firstAvailable: [
        { name: 'x', deviceClassName: 'rq-gold', count: 1 },
        { name: 'y', deviceClassName: 'rq-silver', allocationMode: 'All' },
        { name: 'z', deviceClassName: 'rq-silver', count: 3 },
      ],
    },
  ];
  const created = await post(claims, claim('c1', requests));
  assert.equal(created.status, 201, created.text);
  const charged = {
    'count/resourceclaims.resource.k8s.io': '1',
    'rq-gold.deviceclass.resource.k8s.io/devices': '3',
    'rq-silver.deviceclass.resource.k8s.io/devices': '32',
    'requests.deviceclass.resource.kubernetes.io/rq-gold': '3',
  };
  assert.deepEqual((await api(srv.url, `${ns}/resourcequotas/q`)).body.status.used, charged);
  // A pod asking for the class's implicit extended resource is charged the same quota resource.
  const gold = { 'deviceclass.resource.kubernetes.io/rq-gold': '2' };
  assert.equal((await post(`${ns}/pods`, pod('p1', { requests: gold, limits: gold }))).status, 201);
  assert.equal((await api(srv.url, `${ns}/resourcequotas/q`)).body.status.used['requests.deviceclass.resource.kubernetes.io/rq-gold'], '5');
  const refused = await post(claims, claim('c2', requests));
  assert.equal(refused.status, 403);
  assert.equal(
    refused.body.message,
    'resourceclaims.resource.k8s.io "c2" is forbidden: exceeded quota: q, requested: rq-gold.deviceclass.resource.k8s.io/devices=3,rq-silver.deviceclass.resource.k8s.io/devices=32, ' +
      'used: rq-gold.deviceclass.resource.k8s.io/devices=3,rq-silver.deviceclass.resource.k8s.io/devices=32, ' +
      'limited: rq-gold.deviceclass.resource.k8s.io/devices=4,rq-silver.deviceclass.resource.k8s.io/devices=40',
  );
  assert.equal((await api(srv.url, `${claims}/c1`, { method: 'DELETE' })).status, 200);
  const released = await quotaStatus(`${ns}/resourcequotas/q`, (s) => s.used['count/resourceclaims.resource.k8s.io'] === '0');
  assert.deepEqual(released.used, { ...zero, 'requests.deviceclass.resource.kubernetes.io/rq-gold': '2' });
});

test("a DeviceClass's extendedResourceName is charged for its claims", async () => {
  const ns = await namespace('rq-dra-ext');
  const claims = `/apis/resource.k8s.io/v1/namespaces/rq-dra-ext/resourceclaims`;
  await deviceClass('rq-plat', { extendedResourceName: 'example.com/rq-gpu' });
  const hard = { 'requests.example.com/rq-gpu': '3', 'requests.deviceclass.resource.kubernetes.io/rq-plat': '10' };
  assert.equal((await post(`${ns}/resourcequotas`, { metadata: { name: 'q' }, spec: { hard } })).status, 201);
  await quotaStatus(`${ns}/resourcequotas/q`, (s) => s.used?.['requests.example.com/rq-gpu'] === '0');
  const requests = [{ name: 'a', exactly: { deviceClassName: 'rq-plat', count: 2 } }];
  assert.equal((await post(claims, claim('c3', requests))).status, 201);
  assert.deepEqual((await api(srv.url, `${ns}/resourcequotas/q`)).body.status.used, {
    'requests.deviceclass.resource.kubernetes.io/rq-plat': '2',
    'requests.example.com/rq-gpu': '2',
  });
  const refused = await post(claims, claim('c4', requests));
  assert.equal(refused.status, 403);
  assert.equal(
    refused.body.message,
    'resourceclaims.resource.k8s.io "c4" is forbidden: exceeded quota: q, requested: requests.example.com/rq-gpu=2, used: requests.example.com/rq-gpu=2, limited: requests.example.com/rq-gpu=3',
  );
  // A quota created afterwards is counted by the controller alone: the same usage.
  assert.equal((await post(`${ns}/resourcequotas`, { metadata: { name: 'later' }, spec: { hard } })).status, 201);
  const counted = await quotaStatus(`${ns}/resourcequotas/later`, (s) => s.used !== undefined);
  assert.deepEqual(counted.used, { 'requests.deviceclass.resource.kubernetes.io/rq-plat': '2', 'requests.example.com/rq-gpu': '2' });
});
