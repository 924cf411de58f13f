/**
 * The pods/binding subresource, as a scheduler uses it (answers checked on the reference): a binding
 * sets spec.nodeName and the PodScheduled condition; a second binding is refused with kube's 409
 * naming `pods/binding`; a dry-run binding changes nothing.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

let srv: TestServer;
before(async () => {
  srv = await startTestServer();
});
after(async () => {
  await srv?.stop();
});

const json = { 'content-type': 'application/json' };
const pods = '/api/v1/namespaces/default/pods';
const bind = (pod: string, node: string, query = '') =>
  api(srv.url, `${pods}/${pod}/binding${query}`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: pod }, target: { apiVersion: 'v1', kind: 'Node', name: node } }),
  });

test('a binding assigns the pod once; a second is refused as kube refuses it', async () => {
  const created = await api(srv.url, pods, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bindme' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }),
  });
  assert.equal(created.status, 201, created.text);
  const dry = await bind('bindme', 'node-0', '?dryRun=All');
  assert.equal(dry.status, 201, dry.text);
  assert.equal((await api(srv.url, `${pods}/bindme`)).body.spec.nodeName, undefined);
  const first = await bind('bindme', 'node-1');
  assert.equal(first.status, 201, first.text);
  assert.deepEqual(first.body, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  const pod = (await api(srv.url, `${pods}/bindme`)).body;
  assert.equal(pod.spec.nodeName, 'node-1');
  assert.deepEqual(
    pod.status.conditions.map((c: Record<string, unknown>) => [c.type, c.status]),
    [['PodScheduled', 'True']],
  );
  const second = await bind('bindme', 'node-2');
  assert.equal(second.status, 409);
  assert.equal(second.body.message, 'Operation cannot be fulfilled on pods/binding "bindme": pod bindme is already assigned to node "node-1"');
  assert.deepEqual(second.body.details, { name: 'bindme', kind: 'pods/binding' });
});
