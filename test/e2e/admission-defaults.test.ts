/**
 * The default admission plugins RuntimeClass, PersistentVolumeClaimResize and DefaultIngressClass
 * answer as kube-apiserver 1.36 answered the same corpus (test/e2e/admission-defaults-replay.ts,
 * recorded by scripts/capture-admission-defaults-goldens.mjs into test/golden/admission-defaults/),
 * and the pvc-protection and pv-protection controllers let protected claims and volumes go once unused.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { eventually } from '../helpers/redis-workers.js';
import { replay, type ReplayResult } from './admission-defaults-replay.js';

let srv: TestServer;
before(async () => {
  srv = await startTestServer();
});
after(async () => {
  await srv?.stop();
});

const golden = JSON.parse(readFileSync(join(process.cwd(), 'test', 'golden', 'admission-defaults', 'reference.json'), 'utf8')) as ReplayResult[];

test('every default admission plugin case answers as kube-apiserver 1.36 answered it', async () => {
  const results = await replay(async (method, path, headers, body) => {
    const res = await fetch(srv.url + path, { method, headers, body });
    return { status: res.status, text: await res.text() };
  }, 'plugins-');
  assert.equal(results.length, golden.length);
  const mismatches = results.filter((r, i) => JSON.stringify(r) !== JSON.stringify(golden[i]));
  assert.deepEqual(
    mismatches.map((m) => ({ got: m, want: golden.find((g) => g.name === m.name) })),
    [],
  );
});

type Obj = Record<string, any>;
const send = (method: string, path: string, body?: Obj, type = 'application/json') =>
  api(srv.url, path, { method, headers: { 'content-type': type }, body: body === undefined ? undefined : JSON.stringify(body) });
const exists = async (path: string): Promise<boolean> => (await send('GET', path)).status === 200;

test('a deleted claim stays while a scheduled pod uses it, and goes when the pod does', async () => {
  assert.equal((await send('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'protect' } })).status, 201);
  const claims = '/api/v1/namespaces/protect/persistentvolumeclaims';
  const claim = (name: string): Obj => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  for (const name of ['held', 'free']) assert.equal((await send('POST', claims, claim(name))).status, 201);
  const pod = await send('POST', '/api/v1/namespaces/protect/pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'user' },
    spec: {
      nodeName: 'n1',
      containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'held' } }],
    },
  });
  assert.equal(pod.status, 201, pod.text);
  const deleted = await send('DELETE', `${claims}/held`);
  assert.equal(deleted.status, 200);
  assert.ok(deleted.body.metadata.deletionTimestamp);
  assert.equal((await send('DELETE', `${claims}/free`)).status, 200);
  // The controller handles one claim at a time, in order: once the unused one is gone, it has seen the used one.
  await eventually(async () => !(await exists(`${claims}/free`)), 'the unused claim is deleted');
  assert.ok(await exists(`${claims}/held`), 'the used claim stays');
  assert.equal((await send('DELETE', '/api/v1/namespaces/protect/pods/user?gracePeriodSeconds=0')).status, 200);
  await eventually(async () => !(await exists(`${claims}/held`)), 'the claim is deleted once its pod is');
});

test('a deleted volume stays while Bound, and goes when it is released', async () => {
  const volume = (name: string): Obj => ({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${name}` } },
  });
  for (const name of ['bound-pv', 'free-pv']) assert.equal((await send('POST', '/api/v1/persistentvolumes', volume(name))).status, 201);
  const bound = await send('PATCH', '/api/v1/persistentvolumes/bound-pv/status', { status: { phase: 'Bound' } }, 'application/merge-patch+json');
  assert.equal(bound.status, 200, bound.text);
  assert.equal((await send('DELETE', '/api/v1/persistentvolumes/bound-pv')).status, 200);
  assert.equal((await send('DELETE', '/api/v1/persistentvolumes/free-pv')).status, 200);
  await eventually(async () => !(await exists('/api/v1/persistentvolumes/free-pv')), 'the unbound volume is deleted');
  assert.ok(await exists('/api/v1/persistentvolumes/bound-pv'), 'the bound volume stays');
  const released = await send('PATCH', '/api/v1/persistentvolumes/bound-pv/status', { status: { phase: 'Released' } }, 'application/merge-patch+json');
  assert.equal(released.status, 200, released.text);
  await eventually(async () => !(await exists('/api/v1/persistentvolumes/bound-pv')), 'the volume is deleted once released');
});
