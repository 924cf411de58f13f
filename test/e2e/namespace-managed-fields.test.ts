/**
 * A Namespace created by POST records its manager and the `kubernetes.io/metadata.name` label it
 * owns, as kube-apiserver 1.36 records them (every expected entry below was recorded from the
 * reference): the label is added by defaulting, before managedFields are computed, except for a
 * generated name, which comes later (then only `f:generateName` is the manager's).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';

describe('managedFields of a created Namespace', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(() => srv.stop());

  const create = async (metadata: object, query = '', headers: Record<string, string> = {}): Promise<any> => {
    const r = await api(srv.url, `/api/v1/namespaces${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ metadata }),
    });
    assert.equal(r.status, 201, r.text);
    return r.body;
  };
  const entries = (ns: any): unknown[] => ns.metadata.managedFields.map((e: any) => [e.manager, e.operation, e.apiVersion, e.fieldsType, e.fieldsV1]);

  test('the manager (the user agent without fieldManager) owns the name label', async () => {
    const name = uniqueName('mf');
    const ns = await create({ name }, '', { 'user-agent': 'my-agent/1.0 (linux/amd64)' });
    assert.deepEqual(ns.metadata.labels, { 'kubernetes.io/metadata.name': name });
    assert.deepEqual(entries(ns), [
      ['my-agent', 'Update', 'v1', 'FieldsV1', { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } }],
    ]);
    assert.match(ns.metadata.managedFields[0].time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('with labels of its own, and with a wrong name label (replaced), the manager owns them all', async () => {
    const name = uniqueName('mf');
    const withLabels = await create({ name, labels: { x: 'y' } }, '?fieldManager=fm');
    assert.deepEqual(entries(withLabels), [
      ['fm', 'Update', 'v1', 'FieldsV1', { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {}, 'f:x': {} } } }],
    ]);
    const other = uniqueName('mf');
    const wrong = await create({ name: other, labels: { 'kubernetes.io/metadata.name': 'other' } }, '?fieldManager=fm');
    assert.deepEqual(wrong.metadata.labels, { 'kubernetes.io/metadata.name': other });
    assert.deepEqual(entries(wrong), [['fm', 'Update', 'v1', 'FieldsV1', { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } }]]);
  });

  test('a generated name is labelled, but the label is not the manager’s', async () => {
    const ns = await create({ generateName: 'gen-' }, '?fieldManager=fm');
    assert.match(ns.metadata.name, /^gen-[a-z0-9]{5}$/);
    assert.deepEqual(ns.metadata.labels, { 'kubernetes.io/metadata.name': ns.metadata.name });
    assert.deepEqual(entries(ns), [['fm', 'Update', 'v1', 'FieldsV1', { 'f:metadata': { 'f:generateName': {} } }]]);
  });
});
