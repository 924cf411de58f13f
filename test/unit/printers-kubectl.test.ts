/**
 * Server-side Table columns as kubectl prints them: `kubectl get pods,deploy,svc,ns,cm` against a
 * Capstan server shows kube-apiserver's headers, `-o wide` adds the priority-1 columns, and the
 * raw Table carries the type's column definitions (also for empty lists, single objects, watches).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { kubectlFor, type Kubectl } from '../e2e/kubectl.js';

const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

let srv: TestServer;
let k: Kubectl;
let ns: string;

async function post(path: string, body: unknown): Promise<void> {
  const r = await api(srv.url, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(r.status, 201, r.text);
}

before(async () => {
  srv = await startTestServer();
  k = kubectlFor(srv.kubeconfig);
  ns = uniqueName('print');
  await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await post(`/api/v1/namespaces/${ns}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p1' },
    spec: {
      containers: [
        { name: 'c', image: 'busybox' },
        { name: 'd', image: 'nginx' },
      ],
    },
  });
  await post(`/apis/apps/v1/namespaces/${ns}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
    },
  });
  await post(`/api/v1/namespaces/${ns}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'svc' },
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.96.0.77',
      ports: [
        { port: 80, protocol: 'TCP', name: 'http' },
        { port: 53, protocol: 'UDP', name: 'dns' },
      ],
      selector: { app: 'web' },
    },
  });
  await post(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm1' }, data: { a: '1', b: '2' } });
});

after(async () => {
  await srv.stop();
});

describe('kubectl get prints kube-apiserver columns', { concurrency: true }, () => {
  test('pods, deployments, services, namespaces and config maps', async () => {
    const out = await k.ok(['get', 'pods,deploy,svc,ns,cm', '-n', ns]);
    assert.match(out, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m, out);
    assert.match(out, /^pod\/p1\s+0\/2\s+Pending\s+0\s+\d+s$/m, out);
    assert.match(out, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/m, out);
    assert.match(out, /^deployment\.apps\/web\s+0\/2\s+0\s+0\s+\d+s$/m, out);
    assert.match(out, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/m, out);
    assert.match(out, /^service\/svc\s+ClusterIP\s+10\.96\.0\.77\s+<none>\s+80\/TCP,53\/UDP\s+\d+s$/m, out);
    assert.match(out, /^NAME\s+STATUS\s+AGE$/m, out);
    assert.match(out, new RegExp(`^namespace/${ns}\\s+Active\\s+\\d+s$`, 'm'), out);
    assert.match(out, /^NAME\s+DATA\s+AGE$/m, out);
    assert.match(out, /^configmap\/cm1\s+2\s+\d+s$/m, out);
    assert.doesNotMatch(out, /CREATED AT/);
  });

  test('single type: exact pod header line', async () => {
    const out = await k.ok(['get', 'pods', '-n', ns]);
    assert.equal(out.split('\n')[0], 'NAME   READY   STATUS    RESTARTS   AGE');
  });

  test('-o wide adds the priority-1 columns', async () => {
    const pods = await k.ok(['get', 'pods', '-n', ns, '-o', 'wide']);
    assert.match(pods, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/m, pods);
    assert.match(pods, /^p1\s+0\/2\s+Pending\s+0\s+\d+s\s+<none>\s+<none>\s+<none>\s+<none>$/m, pods);
    const deploys = await k.ok(['get', 'deploy', '-n', ns, '-o', 'wide']);
    assert.match(deploys, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m, deploys);
    assert.match(deploys, /^web\s+0\/2\s+0\s+0\s+\d+s\s+nginx\s+nginx:1\.27\s+app=web$/m, deploys);
  });

  test('types without a printer keep NAME and CREATED AT', async () => {
    await post(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r' },
      rules: [],
    });
    const out = await k.ok(['get', 'roles', '-n', ns]);
    assert.match(out.split('\n')[0] ?? '', /^NAME\s+CREATED AT$/);
  });

  test('raw Table: column definitions for an empty list and a single object', async () => {
    const empty = uniqueName('empty');
    await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: empty } });
    const list = await api(srv.url, `/api/v1/namespaces/${empty}/pods`, { headers: { accept: TABLE } });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.kind, 'Table');
    assert.deepEqual(
      list.body.columnDefinitions.map((c: { name: string; priority: number }) => `${c.name}:${c.priority}`),
      ['Name:0', 'Ready:0', 'Status:0', 'Restarts:0', 'Age:0', 'IP:1', 'Node:1', 'Nominated Node:1', 'Readiness Gates:1'],
    );
    assert.deepEqual(list.body.rows, []);

    const one = await api(srv.url, `/apis/apps/v1/namespaces/${ns}/deployments/web`, { headers: { accept: TABLE } });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.columnDefinitions[1].name, 'Ready');
    assert.equal(one.body.columnDefinitions[1].type, 'string');
    const cells = one.body.rows[0].cells as unknown[];
    assert.deepEqual([cells[0], cells[1], cells[2], cells[3]], ['web', '0/2', 0, 0]);
    assert.match(String(cells[4]), /^\d+s$/);
    assert.equal(one.body.rows[0].object.kind, 'PartialObjectMetadata');
  });

  test('kubectl get -w prints the pod columns', async () => {
    const w = k.spawn(['get', 'pods', '-n', ns, '-w']);
    try {
      const lines = await w.waitForLines(2);
      assert.match(lines[0] ?? '', /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/);
      assert.match(lines[1] ?? '', /^p1\s+0\/2\s+Pending\s+0\s+\d+s$/);
    } finally {
      await w.stop();
    }
  });
});
