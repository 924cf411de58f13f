/**
 * A status write keeps the request's labels, annotations and finalizers for the kinds whose kube
 * status strategy resets only the spec (Service, Ingress, PodDisruptionBudget,
 * HorizontalPodAutoscaler, ResourceQuota, PersistentVolume, PersistentVolumeClaim, Node; Pod but
 * its owner references), as kube-apiserver 1.36 does (compared with the reference by a merge patch of /status per kind). The
 * conformance tests "Services should complete a service status lifecycle" and "Ingress API should
 * support creating Ingress API operations" patch an annotation through /status and wait for it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const NS = '/api/v1/namespaces/default';
const KINDS: { name: string; collection: string; body: object; spec: (o: any) => unknown }[] = [
  { name: 'Service', collection: `${NS}/services`, body: { apiVersion: 'v1', kind: 'Service', spec: { ports: [{ port: 80 }] } }, spec: (o) => o.spec.ports },
  {
    name: 'Ingress',
    collection: '/apis/networking.k8s.io/v1/namespaces/default/ingresses',
    body: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', spec: { defaultBackend: { service: { name: 's', port: { number: 80 } } } } },
    spec: (o) => o.spec.defaultBackend,
  },
  {
    name: 'PodDisruptionBudget',
    collection: '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
    body: { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', spec: { minAvailable: 1, selector: { matchLabels: { a: 'b' } } } },
    spec: (o) => o.spec.minAvailable,
  },
  {
    name: 'HorizontalPodAutoscaler',
    collection: '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers',
    body: {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, minReplicas: 1, maxReplicas: 2 },
    },
    spec: (o) => o.spec.maxReplicas,
  },
  {
    name: 'ResourceQuota',
    collection: `${NS}/resourcequotas`,
    body: { apiVersion: 'v1', kind: 'ResourceQuota', spec: { hard: { pods: '5' } } },
    spec: (o) => o.spec.hard,
  },
  {
    name: 'PersistentVolume',
    collection: '/api/v1/persistentvolumes',
    body: { apiVersion: 'v1', kind: 'PersistentVolume', spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/x' } } },
    spec: (o) => o.spec.capacity,
  },
  {
    name: 'Node',
    collection: '/api/v1/nodes',
    body: { apiVersion: 'v1', kind: 'Node', spec: { podCIDR: '10.1.0.0/24' } },
    spec: (o) => o.spec.podCIDR,
  },
  {
    name: 'Pod',
    collection: `${NS}/pods`,
    body: { apiVersion: 'v1', kind: 'Pod', spec: { containers: [{ name: 'c', image: 'pause' }] } },
    spec: (o) => o.spec.containers,
  },
  {
    name: 'PersistentVolumeClaim',
    collection: `${NS}/persistentvolumeclaims`,
    body: {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'none' },
    },
    spec: (o) => o.spec.resources,
  },
];

describe('status writes keep the request metadata where kube resets only the spec', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer();
  });
  after(async () => {
    await srv?.stop();
  });

  for (const kind of KINDS) {
    test(`a merge patch of ${kind.name} status changes labels, annotations and finalizers but not the spec`, async () => {
      const name = kind.name.toLowerCase();
      const created = await api(srv.url, kind.collection, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...kind.body, metadata: { name } }),
      });
      assert.equal(created.status, 201, created.text);
      const patch = {
        metadata: { annotations: { patchedstatus: 'true' }, labels: { l: 'v' }, finalizers: ['example.com/f'] },
        spec: { changed: true },
      };
      const res = await api(srv.url, `${kind.collection}/${name}/status`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify(patch),
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.metadata.annotations, { patchedstatus: 'true' });
      assert.deepEqual(res.body.metadata.labels, { l: 'v' });
      assert.deepEqual(res.body.metadata.finalizers, ['example.com/f']);
      assert.deepEqual(kind.spec(res.body), kind.spec(created.body));
      assert.equal(res.body.spec.changed, undefined);
      const got = await api(srv.url, `${kind.collection}/${name}`);
      assert.equal(got.body.metadata.annotations.patchedstatus, 'true');
    });
  }

  test('a Pod status write keeps the stored owner references, as kube (old kubelets corrupted them)', async () => {
    // A real owner, or the garbage collector removes the pod.
    const ownerCm = await api(srv.url, `${NS}/configmaps`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pod-owner' } }),
    });
    assert.equal(ownerCm.status, 201, ownerCm.text);
    const owner = { apiVersion: 'v1', kind: 'ConfigMap', name: 'pod-owner', uid: ownerCm.body.metadata.uid };
    const created = await api(srv.url, `${NS}/pods`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'owned', ownerReferences: [owner] },
        spec: { containers: [{ name: 'c', image: 'pause' }] },
      }),
    });
    assert.equal(created.status, 201, created.text);
    const res = await api(srv.url, `${NS}/pods/owned/status`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { ownerReferences: null, labels: { l: 'v' } }, status: { phase: 'Running' } }),
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.metadata.ownerReferences, [owner]);
    assert.deepEqual(res.body.metadata.labels, { l: 'v' });
    assert.equal(res.body.status.phase, 'Running');
  });
});
