/**
 * Fields named `description` are part of their kinds (PriorityClass, CRD printer columns): strict
 * field validation accepts them and they are stored, as on kube-apiserver.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';

let srv: TestServer;
before(async () => {
  srv = await startTestServer();
});
after(async () => {
  await srv?.stop();
});

test('a PriorityClass keeps its description under strict field validation', async () => {
  const name = uniqueName('pc');
  const body = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name }, value: 1000, description: 'batch work' };
  const created = await api(srv.url, '/apis/scheduling.k8s.io/v1/priorityclasses?fieldValidation=Strict', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.headers.get('warning'), null);
  const read = await api(srv.url, `/apis/scheduling.k8s.io/v1/priorityclasses/${name}`);
  assert.equal(read.body.description, 'batch work');
});
