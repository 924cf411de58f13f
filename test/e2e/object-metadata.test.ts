/**
 * System metadata (generateName, uid, creationTimestamp, resourceVersion, generation), the status
 * subresource's spec/status split, and metadata validation (names, labels, annotations).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { assertStatus, restFor, type Rest } from './rest.js';

let srv: TestServer;
let rest: Rest;
let ns: string;

before(async () => {
  srv = await startTestServer();
  rest = restFor(srv.url);
  ns = await rest.namespace('meta');
});

after(async () => {
  await srv.stop();
});

const cm = (metadata: Record<string, unknown>): unknown => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { a: 'b' } });
const deployment = (name: string, replicas = 1): any => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  },
});

describe('system metadata', { concurrency: true }, () => {
  test('generateName gives a 5-character random suffix; uid and creationTimestamp are set by the server', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const a = await rest.create(path, cm({ generateName: 'gen-', uid: 'client-uid', creationTimestamp: '2000-01-01T00:00:00Z' }));
    const b = await rest.create(path, cm({ generateName: 'gen-' }));
    assert.match(a.metadata.name, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.notEqual(a.metadata.name, b.metadata.name);
    assert.equal(a.metadata.generateName, 'gen-');
    assert.match(a.metadata.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.notEqual(a.metadata.uid, 'client-uid');
    assert.notEqual(a.metadata.creationTimestamp, '2000-01-01T00:00:00Z');
    assert.ok(Math.abs(Date.parse(a.metadata.creationTimestamp as string) - Date.now()) < 60_000);
    assert.equal(a.metadata.namespace, ns);
    const got = await rest.get(`${path}/${a.metadata.name as string}`);
    assert.deepEqual(got.body, a);
  });

  test('neither name nor generateName is 422 with a metadata.name cause', async () => {
    const r = await rest.post(`/api/v1/namespaces/${ns}/configmaps`, cm({}));
    assertStatus(r, 422, 'Invalid', 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required');
    assert.deepEqual(r.body.details.causes, [
      { reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' },
    ]);
  });

  test('resourceVersion increases with every write of a type and is decimal', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const versions: bigint[] = [];
    const a = await rest.create(path, cm({ name: 'rv-a' }));
    versions.push(BigInt(a.metadata.resourceVersion));
    const b = await rest.create(path, cm({ name: 'rv-b' }));
    versions.push(BigInt(b.metadata.resourceVersion));
    const u = await rest.patch(`${path}/rv-a`, { data: { x: 'y' } });
    versions.push(BigInt(u.body.metadata.resourceVersion));
    const list = await rest.get(path);
    versions.push(BigInt(list.body.metadata.resourceVersion));
    for (let i = 1; i < versions.length; i++) assert.ok(versions[i] >= versions[i - 1], String(versions));
    assert.ok(versions[2] > versions[1]);
    assert.match(list.body.metadata.resourceVersion, /^[1-9]\d*$/);
  });

  test('an update that changes nothing keeps the resourceVersion', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const a = await rest.create(path, cm({ name: 'noop' }));
    const r = await rest.put(`${path}/noop`, a);
    assert.equal(r.status, 200);
    assert.equal(r.body.metadata.resourceVersion, a.metadata.resourceVersion);
  });

  test('generation: 1 on create, bumped by spec changes only (not by metadata or status)', async () => {
    const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const created = await rest.create(path, { ...deployment('gen'), metadata: { name: 'gen', generation: 42 } });
    assert.equal(created.metadata.generation, 1);
    const labelled = await rest.patch(`${path}/gen`, { metadata: { labels: { x: 'y' }, annotations: { a: 'b' } } });
    assert.equal(labelled.body.metadata.generation, 1);
    const status = await rest.patch(`${path}/gen/status`, { status: { observedGeneration: 1, replicas: 1 } });
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.metadata.generation, 1);
    const scaled = await rest.patch(`${path}/gen`, { spec: { replicas: 3 } });
    assert.equal(scaled.body.metadata.generation, 2);
    const image = await rest.patch(`${path}/gen`, { spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:2' }] } } } });
    assert.equal(image.body.metadata.generation, 3);
    // A client cannot set generation.
    const put = await rest.put(`${path}/gen`, { ...image.body, metadata: { ...image.body.metadata, generation: 100 } });
    assert.equal(put.body.metadata.generation, 3);
    // ConfigMaps have no generation.
    const c = await rest.create(`/api/v1/namespaces/${ns}/configmaps`, cm({ name: 'nogen', generation: 5 }));
    assert.equal(c.metadata.generation, undefined);
  });

  test('uid and creationTimestamp cannot be changed by an update', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const a = await rest.create(path, cm({ name: 'immut' }));
    const r = await rest.put(`${path}/immut`, { ...a, metadata: { ...a.metadata, creationTimestamp: '2001-01-01T00:00:00Z' }, data: { c: 'd' } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.metadata.creationTimestamp, a.metadata.creationTimestamp);
    const badUid = await rest.put(`${path}/immut`, { ...r.body, metadata: { ...r.body.metadata, uid: '6f1d7f3e-0000-0000-0000-000000000000' } });
    assert.equal(badUid.status, 409, badUid.text);
    assert.equal(badUid.body.reason, 'Conflict');
  });
});

describe('status subresource', { concurrency: true }, () => {
  test('PUT /status keeps the stored spec; PUT on the main resource keeps the stored status', async () => {
    const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const created = await rest.create(path, { ...deployment('split', 2), status: { replicas: 99 } });
    assert.deepEqual(created.status, {}, 'status set on create is reset to the empty status kube writes');

    const statusPut = await rest.put(`${path}/split/status`, { ...created, spec: { ...created.spec, replicas: 7 }, status: { replicas: 2, readyReplicas: 1 } });
    assert.equal(statusPut.status, 200, statusPut.text);
    assert.equal(statusPut.body.spec.replicas, 2);
    assert.deepEqual(statusPut.body.status, { replicas: 2, readyReplicas: 1 });

    const mainPut = await rest.put(`${path}/split`, { ...statusPut.body, spec: { ...statusPut.body.spec, replicas: 5 }, status: { replicas: 0 } });
    assert.equal(mainPut.status, 200, mainPut.text);
    assert.equal(mainPut.body.spec.replicas, 5);
    assert.deepEqual(mainPut.body.status, { replicas: 2, readyReplicas: 1 });

    const got = await rest.get(`${path}/split/status`);
    assert.equal(got.status, 200);
    assert.equal(got.body.kind, 'Deployment');
    assert.equal(got.body.spec.replicas, 5);
  });

  test('status writes keep labels and annotations of a deployment; a pod status write may change them', async () => {
    const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const created = await rest.create(path, deployment('meta-keep'));
    const r = await rest.put(`${path}/meta-keep/status`, {
      ...created,
      metadata: { ...created.metadata, labels: { changed: 'yes' } },
      status: { replicas: 1 },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.metadata.labels, undefined);

    const pod = await rest.create(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    const podStatus = await rest.put(`/api/v1/namespaces/${ns}/pods/p/status`, {
      ...pod,
      metadata: { ...pod.metadata, labels: { changed: 'yes' } },
      status: { ...pod.status, phase: 'Running' },
    });
    assert.equal(podStatus.status, 200, podStatus.text);
    assert.equal(podStatus.body.status.phase, 'Running');
    assert.deepEqual(podStatus.body.metadata.labels, { changed: 'yes' });
  });

  test('a stale resourceVersion on /status is 409', async () => {
    const path = `/apis/apps/v1/namespaces/${ns}/deployments`;
    const created = await rest.create(path, deployment('stale-status'));
    await rest.patch(`${path}/stale-status`, { metadata: { labels: { a: 'b' } } });
    const r = await rest.put(`${path}/stale-status/status`, { ...created, status: { replicas: 1 } });
    assertStatus(
      r,
      409,
      'Conflict',
      'Operation cannot be fulfilled on deployments.apps "stale-status": the object has been modified; please apply your changes to the latest version and try again',
    );
  });
});

describe('metadata validation', { concurrency: true }, () => {
  test('an invalid name is 422 Invalid with a metadata.name cause', async () => {
    const r = await rest.post(`/api/v1/namespaces/${ns}/configmaps`, cm({ name: 'Bad_Name' }));
    assertStatus(r, 422, 'Invalid');
    assert.match(
      r.body.message,
      /^ConfigMap "Bad_Name" is invalid: metadata\.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '\.', and must start and end with an alphanumeric character/,
    );
    assert.equal(r.body.details.name, 'Bad_Name');
    assert.equal(r.body.details.kind, 'ConfigMap');
    assert.equal(r.body.details.causes.length, 1);
    assert.equal(r.body.details.causes[0].field, 'metadata.name');
    assert.equal(r.body.details.causes[0].reason, 'FieldValueInvalid');
  });

  test('namespace names follow DNS label rules (no dots)', async () => {
    const r = await rest.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a.b' } });
    assertStatus(r, 422, 'Invalid');
    assert.match(r.body.message, /^Namespace "a\.b" is invalid: metadata\.name: Invalid value: "a\.b": must not contain dots$/);
  });

  test('a name of 254 characters is too long', async () => {
    const name = 'a'.repeat(254);
    const r = await rest.post(`/api/v1/namespaces/${ns}/configmaps`, cm({ name }));
    assertStatus(r, 422, 'Invalid');
    assert.ok(
      r.body.details.causes.some(
        (c: { field: string; message: string }) => c.field === 'metadata.name' && /must be no more than 253 (bytes|characters)/.test(c.message),
      ),
      r.text,
    );
  });

  test('a group resource uses its qualified kind in the message', async () => {
    const r = await rest.post(`/apis/apps/v1/namespaces/${ns}/deployments`, { ...deployment('x'), metadata: { name: '-bad-' } });
    assertStatus(r, 422, 'Invalid', /^Deployment\.apps "-bad-" is invalid: metadata\.name: Invalid value: "-bad-"/);
    assert.equal(r.body.details.group, 'apps');
  });

  test('invalid label keys and values are 422 with metadata.labels causes', async () => {
    const r = await rest.post(
      `/api/v1/namespaces/${ns}/configmaps`,
      cm({ name: 'badlabels', labels: { 'a/b/c': 'x', ok: 'not valid!', long: 'v'.repeat(64) } }),
    );
    assertStatus(r, 422, 'Invalid');
    const causes = r.body.details.causes as Array<{ field: string; message: string; reason: string }>;
    assert.equal(causes.length, 3, r.text);
    assert.ok(
      causes.every((c) => c.field === 'metadata.labels' && c.reason === 'FieldValueInvalid'),
      r.text,
    );
    assert.ok(
      causes.some((c) => /^Invalid value: "a\/b\/c": a (valid label key|qualified name) must consist of/.test(c.message)),
      r.text,
    );
    assert.ok(
      causes.some((c) => c.message.startsWith('Invalid value: "not valid!": a valid label must be an empty string or consist of')),
      r.text,
    );
    assert.ok(
      causes.some((c) => new RegExp(`^Invalid value: "v{64}": must be no more than 63 (bytes|characters)$`).test(c.message)),
      r.text,
    );
    assert.match(r.body.message, /^ConfigMap "badlabels" is invalid: \[metadata\.labels: /);
  });

  test('invalid annotation keys are 422 with metadata.annotations causes', async () => {
    const r = await rest.post(`/api/v1/namespaces/${ns}/configmaps`, cm({ name: 'badann', annotations: { 'not valid': 'x' } }));
    assertStatus(r, 422, 'Invalid');
    assert.equal(r.body.details.causes[0].field, 'metadata.annotations');
    assert.match(r.body.details.causes[0].message, /^Invalid value: "not valid": name part must consist of alphanumeric characters/);
  });

  test('annotations may total 256 KiB, not more', async () => {
    const limit = 256 * 1024;
    const key = 'big';
    const atLimit = await rest.post(`/api/v1/namespaces/${ns}/configmaps`, cm({ name: 'ann-ok', annotations: { [key]: 'x'.repeat(limit - key.length) } }));
    assert.equal(atLimit.status, 201, atLimit.text.slice(0, 300));
    const over = await rest.post(`/api/v1/namespaces/${ns}/configmaps`, cm({ name: 'ann-big', annotations: { [key]: 'x'.repeat(limit - key.length + 1) } }));
    assertStatus(over, 422, 'Invalid', `ConfigMap "ann-big" is invalid: metadata.annotations: Too long: may not be more than ${limit} bytes`);
    assert.deepEqual(over.body.details.causes, [
      { reason: 'FieldValueTooLong', message: `Too long: may not be more than ${limit} bytes`, field: 'metadata.annotations' },
    ]);
  });

  test('the name cannot change on update', async () => {
    const path = `/api/v1/namespaces/${ns}/configmaps`;
    const a = await rest.create(path, cm({ name: 'fixed' }));
    const r = await rest.put(`${path}/fixed`, { ...a, metadata: { ...a.metadata, name: 'other' } });
    assertStatus(r, 400, 'BadRequest', 'the name of the object (other) does not match the name on the URL (fixed)');
  });

  test('a namespace in the body that differs from the path is 400', async () => {
    const r = await rest.post(`/api/v1/namespaces/${ns}/configmaps`, cm({ name: 'nsmismatch', namespace: 'default' }));
    assertStatus(r, 400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
  });
});
