/**
 * The admission plugins kube-apiserver runs on Pods by default, as Capstan runs them (answers checked
 * on the reference): ServiceAccount (the `default` account, created with every namespace, and the
 * `kube-api-access-*` token volume), Priority (priority 0 or the class's value; unknown classes and
 * contradicting values refused; one global default class) and DefaultTolerationSeconds.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

type Obj = Record<string, any>;
let srv: TestServer;
before(async () => {
  srv = await startTestServer();
});
after(async () => {
  await srv?.stop();
});

const json = { 'content-type': 'application/json' };
const post = (path: string, body: Obj) => api(srv.url, path, { method: 'POST', headers: json, body: JSON.stringify(body) });
const pod = (name: string, spec: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

async function namespace(name: string): Promise<string> {
  const created = await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.equal(created.status, 201, created.text);
  return `/api/v1/namespaces/${name}/pods`;
}

test('a Pod in a new namespace runs as the default account with a token volume in every container', async () => {
  const pods = await namespace('adm-sa');
  const created = await post(pods, pod('p', { initContainers: [{ name: 'i', image: 'busybox' }] }));
  assert.equal(created.status, 201, created.text);
  const spec = created.body.spec;
  assert.equal(spec.serviceAccountName, 'default');
  assert.equal(spec.serviceAccount, 'default');
  const volume = spec.volumes.find((v: Obj) => v.name.startsWith('kube-api-access-'));
  assert.match(volume.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  assert.deepEqual(volume.projected, {
    defaultMode: 420,
    sources: [
      { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  });
  for (const c of [...spec.containers, ...spec.initContainers]) {
    assert.deepEqual(c.volumeMounts, [{ name: volume.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
  }
  const account = await api(srv.url, '/api/v1/namespaces/adm-sa/serviceaccounts/default');
  assert.equal(account.status, 200, account.text);
});

test('automountServiceAccountToken false on the pod or the account mounts nothing', async () => {
  const pods = await namespace('adm-automount');
  const off = await post(pods, pod('p1', { automountServiceAccountToken: false }));
  assert.equal(off.status, 201, off.text);
  assert.equal(off.body.spec.volumes, undefined);
  const account = await post('/api/v1/namespaces/adm-automount/serviceaccounts', {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'quiet' },
    automountServiceAccountToken: false,
    imagePullSecrets: [{ name: 'regcred' }],
  });
  assert.equal(account.status, 201, account.text);
  const quiet = await post(pods, pod('p2', { serviceAccountName: 'quiet' }));
  assert.equal(quiet.status, 201, quiet.text);
  assert.equal(quiet.body.spec.volumes, undefined);
  assert.deepEqual(quiet.body.spec.imagePullSecrets, [{ name: 'regcred' }]);
});

test('a missing service account is refused as kube refuses it', async () => {
  const pods = await namespace('adm-missing');
  const refused = await post(pods, pod('pa', { serviceAccountName: 'nope' }));
  assert.equal(refused.status, 403);
  assert.equal(refused.body.reason, 'Forbidden');
  assert.equal(refused.body.message, 'pods "pa" is forbidden: error looking up service account adm-missing/nope: serviceaccount "nope" not found');
});

test('priority comes from the class; unknown classes and contradicting values are refused', async () => {
  const pods = await namespace('adm-priority');
  const plain = await post(pods, pod('p0'));
  assert.equal(plain.body.spec.priority, 0);
  assert.equal(plain.body.spec.preemptionPolicy, 'PreemptLowerPriority');
  const critical = await post(pods, pod('p1', { priorityClassName: 'system-node-critical' }));
  assert.equal(critical.status, 201, critical.text);
  assert.equal(critical.body.spec.priority, 2000001000);
  const unknown = await post(pods, pod('pb', { priorityClassName: 'nope' }));
  assert.equal(unknown.status, 403);
  assert.equal(unknown.body.message, 'pods "pb" is forbidden: no PriorityClass with name nope was found');
  const stated = await post(pods, pod('pc', { priority: 5 }));
  assert.equal(stated.status, 403);
  assert.equal(
    stated.body.message,
    'pods "pc" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
  );
});

test('a global default PriorityClass gives its value to pods; a second default is refused', async () => {
  const classes = '/apis/scheduling.k8s.io/v1/priorityclasses';
  const first = await post(classes, {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'adm-d1' },
    value: 7,
    globalDefault: true,
    preemptionPolicy: 'Never',
  });
  assert.equal(first.status, 201, first.text);
  try {
    const second = await post(classes, {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name: 'adm-d2' },
      value: 6,
      globalDefault: true,
    });
    assert.equal(second.status, 403);
    assert.equal(
      second.body.message,
      'priorityclasses.scheduling.k8s.io "adm-d2" is forbidden: PriorityClass adm-d1 is already marked as default. Only one default can exist',
    );
    const pods = await namespace('adm-default-class');
    const created = await post(pods, pod('p'));
    assert.equal(created.body.spec.priorityClassName, 'adm-d1');
    assert.equal(created.body.spec.priority, 7);
    assert.equal(created.body.spec.preemptionPolicy, 'Never');
    // Once the default class is gone, a new pod gets priority 0 again.
    assert.equal((await api(srv.url, `${classes}/adm-d1`, { method: 'DELETE' })).status, 200);
    const after = await post(pods, pod('q'));
    assert.equal(after.status, 201, after.text);
    assert.equal(after.body.spec.priorityClassName, undefined);
    assert.equal(after.body.spec.priority, 0);
    assert.equal(after.body.spec.preemptionPolicy, 'PreemptLowerPriority');
  } finally {
    await api(srv.url, `${classes}/adm-d1`, { method: 'DELETE' });
  }
});

test('pods tolerate not-ready and unreachable nodes for 300 s unless they say otherwise', async () => {
  const pods = await namespace('adm-tolerations');
  const created = await post(
    pods,
    pod('p', { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 }] }),
  );
  assert.deepEqual(created.body.spec.tolerations, [
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 },
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  ]);
  const everything = await post(pods, pod('q', { tolerations: [{ operator: 'Exists' }] }));
  assert.deepEqual(everything.body.spec.tolerations, [{ operator: 'Exists' }]);
});
