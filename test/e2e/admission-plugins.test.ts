/**
 * kube-apiserver's default admission plugins for resource limits and storage, as Capstan runs them
 * (every expected answer was first taken from kube-apiserver 1.36 with the same objects):
 * LimitRanger (defaults with their annotation, Container/Pod/PersistentVolumeClaim min, max and
 * ratio refusals, several joined as kube joins them), DefaultStorageClass (the newest default class,
 * an explicit class kept), and `--enable-admission-plugins` / `--disable-admission-plugins`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from '../../src/cli/flags.js';
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
const post = (url: string, path: string, body: Obj) => api(url, path, { method: 'POST', headers: json, body: JSON.stringify(body) });

async function namespace(url: string, name: string): Promise<void> {
  const created = await post(url, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  assert.equal(created.status, 201, created.text);
}

const LIMIT_RANGE = {
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: { name: 'lr' },
  spec: {
    limits: [
      {
        type: 'Container',
        default: { cpu: '500m', memory: '256Mi' },
        defaultRequest: { cpu: '250m' },
        max: { cpu: '1', memory: '1Gi' },
        min: { cpu: '100m' },
        maxLimitRequestRatio: { cpu: '4' },
      },
      { type: 'Pod', max: { memory: '2Gi' } },
      { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '5Gi' } },
    ],
  },
};

const pod = (name: string, spec: Obj): Obj => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
const claim = (name: string, storage: string, extra: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } }, ...extra },
});

test('LimitRanger fills container defaults and says so in an annotation', async () => {
  await namespace(srv.url, 'lr-defaults');
  assert.equal((await post(srv.url, '/api/v1/namespaces/lr-defaults/limitranges', LIMIT_RANGE)).status, 201);
  const created = await post(
    srv.url,
    '/api/v1/namespaces/lr-defaults/pods',
    pod('p1', {
      initContainers: [{ name: 'i', image: 'busybox', resources: { limits: { memory: '100Mi' } } }],
      containers: [
        { name: 'c', image: 'nginx' },
        { name: 'd', image: 'nginx', resources: { requests: { cpu: '300m' } } },
      ],
    }),
  );
  assert.equal(created.status, 201, created.text);
  assert.equal(
    created.body.metadata.annotations['kubernetes.io/limit-ranger'],
    'LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c; memory request for container d; ' +
      'cpu, memory limit for container d; cpu request for init container i; cpu limit for init container i',
  );
  assert.deepEqual(
    created.body.spec.containers.map((c: Obj) => c.resources),
    [
      { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '250m', memory: '256Mi' } },
      { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '300m', memory: '256Mi' } },
    ],
  );
  assert.deepEqual(created.body.spec.initContainers[0].resources, { limits: { cpu: '500m', memory: '100Mi' }, requests: { cpu: '250m', memory: '100Mi' } });
});

test('LimitRanger refuses pods and claims outside the ranges with kube messages', async () => {
  await namespace(srv.url, 'lr-limits');
  assert.equal((await post(srv.url, '/api/v1/namespaces/lr-limits/limitranges', LIMIT_RANGE)).status, 201);
  const cases: [Obj, string][] = [
    [{ containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '2' } } }] }, 'maximum cpu usage per Container is 1, but limit is 2'],
    [
      { containers: [{ name: 'c', image: 'nginx', resources: { limits: { cpu: '800m' }, requests: { cpu: '100m' } } }] },
      'cpu max limit to request ratio per Container is 4, but provided ratio is 8.000000',
    ],
    [
      {
        containers: [
          { name: 'c', image: 'nginx', resources: { limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '0.05' } } },
          { name: 'd', image: 'nginx', resources: { limits: { memory: '1500Mi' } } },
        ],
      },
      '[minimum cpu usage per Container is 100m, but request is 50m, cpu max limit to request ratio per Container is 4, but provided ratio is 20.000000, ' +
        'maximum memory usage per Container is 1Gi, but limit is 1500Mi, maximum memory usage per Pod is 2Gi, but limit is 2524Mi]',
    ],
  ];
  for (const [i, [spec, message]] of cases.entries()) {
    const refused = await post(srv.url, '/api/v1/namespaces/lr-limits/pods', pod(`x${i}`, spec));
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.reason, 'Forbidden');
    assert.equal(refused.body.message, `pods "x${i}" is forbidden: ${message}`);
  }
  const small = await post(srv.url, '/api/v1/namespaces/lr-limits/persistentvolumeclaims', claim('c-500mi', '500Mi'));
  assert.equal(small.status, 403, small.text);
  assert.equal(
    small.body.message,
    'persistentvolumeclaims "c-500mi" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
  );
  const big = await post(srv.url, '/api/v1/namespaces/lr-limits/persistentvolumeclaims', claim('c-10gi', '10Gi'));
  assert.equal(big.body.message, 'persistentvolumeclaims "c-10gi" is forbidden: maximum storage usage per PersistentVolumeClaim is 5Gi, but request is 10Gi');
  assert.equal((await post(srv.url, '/api/v1/namespaces/lr-limits/persistentvolumeclaims', claim('c-2gi', '2Gi'))).status, 201);
  const listed = await api(srv.url, '/api/v1/namespaces/lr-limits/pods');
  assert.deepEqual(listed.body.items, [], 'refused pods were not stored');
});

test('DefaultStorageClass gives a claim without a class the newest default class', async () => {
  await namespace(srv.url, 'dsc');
  const claims = '/api/v1/namespaces/dsc/persistentvolumeclaims';
  const none = await post(srv.url, claims, claim('none', '1Gi'));
  assert.equal(none.body.spec.storageClassName, undefined, 'no default class: the claim is left alone');
  const storageClass = (name: string, isDefault: boolean): Obj => ({
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, annotations: isDefault ? { 'storageclass.kubernetes.io/is-default-class': 'true' } : {} },
    provisioner: 'example.com/disk',
  });
  for (const [name, isDefault] of [
    ['dsc-b', true],
    ['dsc-a', true],
    ['dsc-plain', false],
  ] as const) {
    assert.equal((await post(srv.url, '/apis/storage.k8s.io/v1/storageclasses', storageClass(name, isDefault))).status, 201);
  }
  // Created within the same second, the two defaults tie on age: the first by name wins.
  assert.equal((await post(srv.url, claims, claim('defaulted', '1Gi'))).body.spec.storageClassName, 'dsc-a');
  assert.equal((await post(srv.url, claims, claim('explicit', '1Gi', { storageClassName: 'dsc-plain' }))).body.spec.storageClassName, 'dsc-plain');
  assert.equal((await post(srv.url, claims, claim('empty', '1Gi', { storageClassName: '' }))).body.spec.storageClassName, '');
  const beta = claim('beta', '1Gi');
  beta.metadata.annotations = { 'volume.beta.kubernetes.io/storage-class': 'dsc-plain' };
  assert.equal((await post(srv.url, claims, beta)).body.spec.storageClassName, undefined);
});

test('admission plugin flags: kube names, kube order, kube errors', async () => {
  const error = (argv: string[]): string => {
    try {
      parseArgs(argv);
      return '';
    } catch (err) {
      return (err as Error).message;
    }
  };
  assert.equal(error(['--enable-admission-plugins=Nope']), 'enable-admission-plugins plugin "Nope" is unknown');
  assert.equal(error(['--disable-admission-plugins=Nope']), 'disable-admission-plugins plugin "Nope" is unknown');
  assert.equal(
    error(['--enable-admission-plugins=AlwaysDeny,LimitRanger', '--disable-admission-plugins=LimitRanger,AlwaysDeny']),
    '[AlwaysDeny LimitRanger] in enable-admission-plugins and disable-admission-plugins overlapped',
  );
  assert.equal(error(['--enable-admission-plugins=AlwaysPullImages']), 'admission plugin "AlwaysPullImages" is not supported by Capstan');

  const denying = await startTestServer({ enableAdmissionPlugins: ['AlwaysDeny'] });
  try {
    const refused = await post(denying.url, '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'configmaps "x" is forbidden: admission control is denying all modifications');
  } finally {
    await denying.stop();
  }

  const plain = await startTestServer({ disableAdmissionPlugins: ['LimitRanger', 'ServiceAccount'] });
  try {
    await namespace(plain.url, 'lr-off');
    assert.equal((await post(plain.url, '/api/v1/namespaces/lr-off/limitranges', LIMIT_RANGE)).status, 201);
    const created = await post(plain.url, '/api/v1/namespaces/lr-off/pods', pod('p', { containers: [{ name: 'c', image: 'nginx' }] }));
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.metadata.annotations, undefined, 'LimitRanger off: no defaults');
    assert.equal(created.body.spec.serviceAccountName, undefined, 'ServiceAccount off: no account');
  } finally {
    await plain.stop();
  }
});
