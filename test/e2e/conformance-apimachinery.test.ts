/**
 * What the [sig-api-machinery] conformance tests of kube's e2e.test found different in Capstan, each
 * reproduced over HTTP (scripts/run-conformance.sh runs the tests themselves where e2e.test exists).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { restFor, type Rest } from './rest.js';

let srv: TestServer;
let rest: Rest;

before(async () => {
  srv = await startTestServer();
  rest = restFor(srv.url);
});

after(async () => {
  await srv.stop();
});

describe('Namespaces: should apply changes to a namespace status', { concurrency: true }, () => {
  test('a merge patch of /status keeps the metadata it sends (annotations, labels, finalizers) and not the spec', async () => {
    const name = uniqueName('nsstatus');
    const created = await rest.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    const condition = { type: 'StatusPatch', status: 'True', reason: 'E2E', message: 'Patched by an e2e test' };
    const r = await rest.patch(
      `/api/v1/namespaces/${name}/status`,
      {
        metadata: { annotations: { 'e2e-patched-ns-status': name }, labels: { l: 'v' }, finalizers: ['example.com/hold'] },
        spec: { finalizers: ['example.com/not-through-status'] },
        status: { conditions: [condition] },
      },
      'application/merge-patch+json',
    );
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.metadata.annotations, { 'e2e-patched-ns-status': name });
    assert.deepEqual(r.body.metadata.labels, { 'kubernetes.io/metadata.name': name, l: 'v' });
    assert.deepEqual(r.body.metadata.finalizers, ['example.com/hold']);
    assert.equal(r.body.metadata.uid, created.metadata.uid);
    assert.equal(r.body.metadata.creationTimestamp, created.metadata.creationTimestamp);
    assert.deepEqual(r.body.spec, { finalizers: ['kubernetes'] });
    assert.equal(r.body.status.phase, 'Active');
    // kube also writes `lastTransitionTime: null` (a zero metav1.Time); Capstan's Go shape leaves times as sent.
    const { lastTransitionTime: _, ...written } = r.body.status.conditions[0];
    assert.deepEqual(written, condition);
    assert.equal(r.body.status.conditions.length, 1);

    // What the patch stored reads back; a creationTimestamp sent through /status is not taken.
    const got = await rest.get(`/api/v1/namespaces/${name}/status`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.metadata.annotations, { 'e2e-patched-ns-status': name });
    const sent = structuredClone(got.body);
    sent.metadata.creationTimestamp = '2000-01-01T00:00:00Z';
    sent.metadata.finalizers = [];
    sent.status.conditions.push({ type: 'StatusUpdate', status: 'True', reason: 'E2E', message: 'Updated by an e2e test' });
    const put = await rest.put(`/api/v1/namespaces/${name}/status`, sent);
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.metadata.uid, created.metadata.uid);
    assert.equal(put.body.metadata.creationTimestamp, created.metadata.creationTimestamp);
    assert.equal(put.body.metadata.finalizers, undefined);
    assert.deepEqual(
      put.body.status.conditions.map((c: { type: string }) => c.type),
      ['StatusPatch', 'StatusUpdate'],
    );

    // The name label is the namespace's, whatever a status write sends (kube's Canonicalize).
    const unlabelled = await rest.patch(`/api/v1/namespaces/${name}/status`, { metadata: { labels: null } }, 'application/merge-patch+json');
    assert.equal(unlabelled.status, 200, unlabelled.text);
    assert.deepEqual(unlabelled.body.metadata.labels, { 'kubernetes.io/metadata.name': name });
    assert.equal((await rest.del(`/api/v1/namespaces/${name}`)).status, 200);
  });
});
