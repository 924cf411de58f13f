/**
 * Status writes of workloads keep the request's metadata as kube-apiserver 1.36 does (compared by
 * hand with the reference): its status strategies reset only the spec, and a Deployment's also its
 * labels. The deployment controller records `deployment.kubernetes.io/revision` through
 * deployments/status, which the e2e tests' WaitForDeploymentRevisionAndImage waits for.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const TEMPLATE = { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };

describe('workload status writes and metadata', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(async () => {
    await srv?.stop();
  });

  const statusPut = async (path: string, edit: (obj: any) => void): Promise<any> => {
    const got = await api(srv.url, path);
    assert.equal(got.status, 200, got.text);
    edit(got.body);
    const put = await api(srv.url, `${path}/status`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(got.body) });
    assert.equal(put.status, 200, put.text);
    return put.body;
  };

  const create = async (path: string, kind: string, spec: object): Promise<void> => {
    const res = await api(srv.url, path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'apps/v1', kind, metadata: { name: 'w', labels: { app: 'w' } }, spec }),
    });
    assert.equal(res.status, 201, res.text);
  };

  test('a Deployment status write changes annotations but not labels or spec', async () => {
    const base = '/apis/apps/v1/namespaces/default/deployments';
    await create(base, 'Deployment', { replicas: 0, selector: { matchLabels: { app: 'w' } }, template: TEMPLATE });
    const out = await statusPut(`${base}/w`, (d) => {
      d.metadata.annotations = { 'deployment.kubernetes.io/revision': '1' };
      d.metadata.labels = { app: 'w', extra: 'x' };
      d.spec.replicas = 3;
      d.status = { observedGeneration: 1 };
    });
    assert.deepEqual(out.metadata.annotations, { 'deployment.kubernetes.io/revision': '1' });
    assert.deepEqual(out.metadata.labels, { app: 'w' });
    assert.equal(out.spec.replicas, 0);
    assert.equal(out.status.observedGeneration, 1);
  });

  test('a ReplicaSet status write changes labels and annotations but not the spec', async () => {
    const base = '/apis/apps/v1/namespaces/default/replicasets';
    await create(base, 'ReplicaSet', { replicas: 0, selector: { matchLabels: { app: 'w' } }, template: TEMPLATE });
    const out = await statusPut(`${base}/w`, (rs) => {
      rs.metadata.annotations = { a: 'b' };
      rs.metadata.labels = { app: 'w', extra: 'x' };
      rs.spec.replicas = 3;
    });
    assert.deepEqual(out.metadata.annotations, { a: 'b' });
    assert.deepEqual(out.metadata.labels, { app: 'w', extra: 'x' });
    assert.equal(out.spec.replicas, 0);
  });
});
