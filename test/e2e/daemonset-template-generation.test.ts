/**
 * DaemonSets carry kube's `deprecated.daemonset.template.generation` annotation (the internal
 * spec.templateGeneration) as kube-apiserver 1.36 keeps it; every expected answer below was
 * recorded from the reference (creates with each kind of value, a template change, a PUT sending
 * another value, patches removing or breaking it, a status write). Also: a PUT of the same spec
 * without the defaulted fields is no spec change (kube keeps the generation; Capstan bumped it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';

const ANNOTATION = 'deprecated.daemonset.template.generation';

describe('DaemonSet template generation annotation', () => {
  let srv: TestServer;
  let ns: string;
  const path = (name = ''): string => `/apis/apps/v1/namespaces/${ns}/daemonsets${name === '' ? '' : `/${name}`}`;
  const daemonSet = (name: string, image: string, annotations?: Record<string, string>, resourceVersion?: string): object => ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, ...(annotations !== undefined ? { annotations } : {}), ...(resourceVersion !== undefined ? { resourceVersion } : {}) },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image }] } },
    },
  });
  const send = (method: string, p: string, body: unknown, type = 'application/json'): ReturnType<typeof api> =>
    api(srv.url, p, { method, headers: { 'content-type': type }, body: JSON.stringify(body) });

  before(async () => {
    srv = await startTestServer();
    ns = uniqueName('ds');
    assert.equal((await send('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  });
  after(() => srv.stop());

  test('create: 1 unless a higher value is sent; the creating manager owns the annotation', async () => {
    const created = await send('POST', `${path()}?fieldManager=mgr`, daemonSet('d1', 'img'));
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.metadata.annotations, { [ANNOTATION]: '1' });
    assert.equal(created.body.metadata.generation, 1);
    assert.deepEqual(created.body.metadata.managedFields[0].fieldsV1['f:metadata'], { 'f:annotations': { '.': {}, [`f:${ANNOTATION}`]: {} } });
    // Sent value -> stored value, as the reference answered.
    for (const [sent, stored] of [
      ['5', '5'],
      ['0', '1'],
      ['-3', '1'],
      ['+5', '5'],
      ['007', '7'],
    ]) {
      const r = await send('POST', path(), daemonSet(uniqueName('d'), 'img', { [ANNOTATION]: sent, z: '1' }));
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.body.metadata.annotations, { [ANNOTATION]: stored, z: '1' }, `sent ${sent}`);
    }
  });

  test('a value that is no int64 fails the create with the converter error, as kube decodes it', async () => {
    for (const [sent, why] of [
      ['x', 'invalid syntax'],
      ['', 'invalid syntax'],
      ['99999999999999999999', 'value out of range'],
    ]) {
      const r = await send('POST', path(), daemonSet(uniqueName('d'), 'img', { [ANNOTATION]: sent }));
      assert.equal(r.status, 400);
      assert.deepEqual(r.body, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: `DaemonSet in version "v1" cannot be handled as a DaemonSet: strconv.ParseInt: parsing "${sent}": ${why}`,
        reason: 'BadRequest',
        code: 400,
      });
    }
  });

  test('update: a template change adds one, another value sent or none keeps the stored one, a status write keeps it', async () => {
    const current = await api(srv.url, path('d1'));
    const changed = await send('PUT', `${path('d1')}?fieldManager=mgr2`, daemonSet('d1', 'img2', undefined, current.body.metadata.resourceVersion));
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.body.metadata.annotations, { [ANNOTATION]: '2' });
    assert.equal(changed.body.metadata.generation, 2);
    // The value changed under mgr2's write: kube gives it to mgr2.
    assert.deepEqual(
      changed.body.metadata.managedFields.map((m: any) => [m.manager, m.fieldsV1['f:metadata']]),
      [
        ['mgr', { 'f:annotations': {} }],
        ['mgr2', { 'f:annotations': { [`f:${ANNOTATION}`]: {} } }],
      ],
    );
    const other = await send('PUT', path('d1'), daemonSet('d1', 'img2', { [ANNOTATION]: '9' }, changed.body.metadata.resourceVersion));
    assert.equal(other.status, 200, other.text);
    assert.deepEqual(other.body.metadata.annotations, { [ANNOTATION]: '2' });
    assert.equal(other.body.metadata.generation, 2);
    const removed = await send('PATCH', path('d1'), { metadata: { annotations: { [ANNOTATION]: null } } }, 'application/merge-patch+json');
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.body.metadata.annotations, { [ANNOTATION]: '2' });
    const status = structuredClone(removed.body);
    status.metadata.annotations[ANNOTATION] = '7';
    status.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 1, numberReady: 0 };
    const statusWrite = await send('PUT', path('d1/status'), status);
    assert.equal(statusWrite.status, 200, statusWrite.text);
    assert.deepEqual(statusWrite.body.metadata.annotations, { [ANNOTATION]: '2' });
    assert.equal(statusWrite.body.status.desiredNumberScheduled, 1);
  });

  test("patches to a value that is no int64: kube's 422 naming the patch (merge), 400 with the converter's message (strategic: kube 500)", async () => {
    const merge = await send('PATCH', path('d1'), { metadata: { annotations: { [ANNOTATION]: 'x' } } }, 'application/merge-patch+json');
    assert.equal(merge.status, 422);
    assert.equal(merge.body.reason, 'Invalid');
    assert.equal(merge.body.details.causes[0].field, 'patch');
    assert.match(merge.body.message, /^ "" is invalid: patch: Invalid value: "\{.*\}": strconv\.ParseInt: parsing "x": invalid syntax$/);
    const smp = await send('PATCH', path('d1'), { metadata: { annotations: { [ANNOTATION]: 'x' } } }, 'application/strategic-merge-patch+json');
    assert.equal(smp.status, 400);
    assert.equal(smp.body.message, 'strconv.ParseInt: parsing "x": invalid syntax');
  });

  test('a PUT of the same spec without its defaulted fields changes no generation (Deployment and DaemonSet)', async () => {
    for (const [kind, plural] of [
      ['Deployment', 'deployments'],
      ['DaemonSet', 'daemonsets'],
    ]) {
      const name = uniqueName('same');
      const body = { ...daemonSet(name, 'img'), kind };
      const p = `/apis/apps/v1/namespaces/${ns}/${plural}`;
      assert.equal((await send('POST', p, body)).status, 201);
      for (let i = 0; i < 2; i++) {
        const r = await send('PUT', `${p}/${name}`, body);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.body.metadata.generation, 1, `${kind} PUT ${i + 1}`);
      }
    }
  });
});
