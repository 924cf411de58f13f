import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/api/errors.js';
import { compileSelectors } from '../../src/selectors/compile-selectors.js';
import { compileFieldSelector, parseFieldSelector } from '../../src/selectors/field-selector.js';
import { customResourceFieldSelector } from '../../src/strategy/field-selectors.js';
import { fieldSelectorsOf } from '../../src/strategy/strategies.js';

const CLUSTER_SCOPED = new Set(['nodes', 'namespaces', 'storageclasses', 'certificatesigningrequests', 'resourceslices']);
/** The field selectors of a built-in resource (in v1, or `version`), as the server resolves them. */
const specOf = (group: string, resource: string, version = 'v1') => fieldSelectorsOf({ group, version, resource, namespaced: !CLUSTER_SCOPED.has(resource) });

function rejects(fn: () => unknown, message: string): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 400);
    assert.equal(err.reason, 'BadRequest');
    assert.equal(err.message, message);
    return true;
  });
}

const pod = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', labels: { app: name } },
  ...extra,
});

describe('field selector syntax', () => {
  test('operators and escapes', () => {
    assert.deepEqual(parseFieldSelector('a=b,c==d,e!=f'), [
      { field: 'a', operator: '=', value: 'b' },
      { field: 'c', operator: '=', value: 'd' },
      { field: 'e', operator: '!=', value: 'f' },
    ]);
    assert.deepEqual(parseFieldSelector('a=x\\,y\\=z\\\\'), [{ field: 'a', operator: '=', value: 'x,y=z\\' }]);
    assert.deepEqual(parseFieldSelector('a='), [{ field: 'a', operator: '=', value: '' }]);
    assert.deepEqual(parseFieldSelector(''), []);
    assert.deepEqual(parseFieldSelector('a=b,,'), [{ field: 'a', operator: '=', value: 'b' }]);
  });

  test('syntax errors', () => {
    rejects(() => parseFieldSelector('abc'), "invalid selector: 'abc'; can't understand 'abc'");
    rejects(() => parseFieldSelector('a=b, '), "invalid selector: 'a=b, '; can't understand ' '");
    rejects(() => parseFieldSelector('a===b'), 'invalid field selector: unescaped character in value: 61');
    rejects(() => parseFieldSelector('a=b\\'), 'invalid field selector: invalid escape sequence: \\');
    rejects(() => parseFieldSelector('a=b\\n'), 'invalid field selector: invalid escape sequence: \\n');
  });
});

describe('field selectors per type', () => {
  test("unsupported fields are 400 with the type's message", () => {
    rejects(() => compileFieldSelector('spec.containers=x', specOf('', 'pods')), 'field label not supported: spec.containers');
    rejects(() => compileFieldSelector('metadata.namespace=x', specOf('', 'nodes')), 'field label not supported: metadata.namespace');
    rejects(
      () => compileFieldSelector('spec.replicas=1', specOf('apps', 'deployments')),
      '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    rejects(() => compileFieldSelector('status.failed=1', specOf('batch', 'jobs')), 'field label "status.failed" not supported for batchv1.Job');
    rejects(
      () => compileFieldSelector('spec.pool=x', specOf('resource.k8s.io', 'resourceslices')),
      'field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool',
    );
  });

  test('pods', () => {
    const p = pod('p1', {
      spec: { nodeName: 'n1', restartPolicy: 'Always', schedulerName: 'default-scheduler', serviceAccountName: 'sa', hostNetwork: true },
      status: { phase: 'Running', podIP: '10.0.0.1', podIPs: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], nominatedNodeName: 'n2' },
    });
    const m = (sel: string): boolean => compileFieldSelector(sel, specOf('', 'pods'))(p);
    assert.equal(m('spec.nodeName=n1'), true);
    assert.equal(m('spec.host=n1'), true);
    assert.equal(m('spec.restartPolicy=Always,spec.schedulerName=default-scheduler'), true);
    assert.equal(m('spec.serviceAccountName=sa'), true);
    assert.equal(m('spec.hostNetwork=true'), true);
    assert.equal(m('status.phase!=Running'), false);
    assert.equal(m('status.podIP=10.0.0.1'), true);
    assert.equal(m('status.nominatedNodeName=n2'), true);
    assert.equal(m('metadata.name=p1,metadata.namespace=default'), true);
    // Accepted by kube, but never in the pod's field set: only "" matches.
    assert.equal(m('status.podIPs=10.0.0.1'), false);
    assert.equal(m('status.podIPs='), true);
    // Defaults: hostNetwork false, missing node name is "".
    const bare = pod('p2');
    assert.equal(compileFieldSelector('spec.hostNetwork=false', specOf('', 'pods'))(bare), true);
    assert.equal(compileFieldSelector('spec.nodeName=', specOf('', 'pods'))(bare), true);
    assert.equal(compileFieldSelector('spec.nodeName!=n1', specOf('', 'pods'))(bare), true);
  });

  test('nodes, namespaces, secrets, services, replication controllers', () => {
    assert.equal(compileFieldSelector('spec.unschedulable=false', specOf('', 'nodes'))({ metadata: { name: 'n' }, spec: {} }), true);
    assert.equal(compileFieldSelector('spec.unschedulable=true', specOf('', 'nodes'))({ metadata: { name: 'n' }, spec: { unschedulable: true } }), true);
    assert.equal(compileFieldSelector('status.phase=Active', specOf('', 'namespaces'))({ metadata: { name: 'ns' }, status: { phase: 'Active' } }), true);
    assert.equal(
      compileFieldSelector('type=kubernetes.io/tls', specOf('', 'secrets'))({ metadata: { name: 's', namespace: 'n' }, type: 'kubernetes.io/tls' }),
      true,
    );
    const svc = { metadata: { name: 's', namespace: 'n' }, spec: { type: 'ClusterIP', clusterIP: 'None' } };
    assert.equal(compileFieldSelector('spec.clusterIP=None,spec.type=ClusterIP', specOf('', 'services'))(svc), true);
    assert.equal(compileFieldSelector('status.replicas=0', specOf('', 'replicationcontrollers'))({ metadata: { name: 'r', namespace: 'n' } }), true);
    assert.equal(
      compileFieldSelector('status.replicas=3', specOf('', 'replicationcontrollers'))({ metadata: { name: 'r', namespace: 'n' }, status: { replicas: 3 } }),
      true,
    );
  });

  test('jobs, certificate signing requests, resource slices', () => {
    assert.equal(
      compileFieldSelector('status.successful=2', specOf('batch', 'jobs'))({ metadata: { name: 'j', namespace: 'n' }, status: { succeeded: 2 } }),
      true,
    );
    assert.equal(
      compileFieldSelector(
        'spec.signerName=kubernetes.io/kubelet-serving',
        specOf('certificates.k8s.io', 'certificatesigningrequests'),
      )({ metadata: { name: 'c' }, spec: { signerName: 'kubernetes.io/kubelet-serving' } }),
      true,
    );
    assert.equal(
      compileFieldSelector(
        'spec.nodeName=n1,spec.driver=gpu.example.com',
        specOf('resource.k8s.io', 'resourceslices'),
      )({ metadata: { name: 'rs' }, spec: { nodeName: 'n1', driver: 'gpu.example.com' } }),
      true,
    );
  });

  test('core events and events.k8s.io events', () => {
    const core = {
      metadata: { name: 'e', namespace: 'n' },
      reason: 'Started',
      type: 'Normal',
      source: { component: 'kubelet' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'n', uid: 'u', apiVersion: 'v1', resourceVersion: '7', fieldPath: 'spec.containers{c}' },
    };
    const m = (sel: string): boolean => compileFieldSelector(sel, specOf('', 'events'))(core);
    assert.equal(m('involvedObject.kind=Pod,involvedObject.name=p,involvedObject.namespace=n'), true);
    assert.equal(m('involvedObject.uid=u,involvedObject.apiVersion=v1,involvedObject.resourceVersion=7'), true);
    assert.equal(m('involvedObject.fieldPath=spec.containers{c}'), true);
    assert.equal(m('reason=Started,type=Normal,source=kubelet'), true);
    const modern = {
      metadata: { name: 'e', namespace: 'n' },
      reason: 'Killing',
      type: 'Warning',
      reportingController: 'kubelet',
      regarding: { kind: 'Pod', name: 'p', namespace: 'n' },
    };
    const e = (sel: string): boolean => compileFieldSelector(sel, specOf('events.k8s.io', 'events'))(modern);
    assert.equal(e('regarding.kind=Pod,regarding.name=p'), true);
    assert.equal(e('reportingController=kubelet,type=Warning,reason=Killing'), true);
    rejects(() => compileFieldSelector('source=kubelet', specOf('events.k8s.io', 'events')), 'field label not supported: source');
    rejects(() => compileFieldSelector('involvedObject.name=p', specOf('events.k8s.io', 'events')), 'field label not supported: involvedObject.name');
  });

  test('default types: metadata only; cluster-scoped namespace reads as ""', () => {
    const cm = { metadata: { name: 'c', namespace: 'n' } };
    assert.equal(compileFieldSelector('metadata.name=c,metadata.namespace=n', specOf('', 'configmaps'))(cm), true);
    assert.equal(compileFieldSelector('metadata.name!=c', specOf('', 'configmaps'))(cm), false);
    const sc = { metadata: { name: 'fast' } };
    assert.equal(compileFieldSelector('metadata.namespace=', specOf('storage.k8s.io', 'storageclasses'))(sc), true);
    assert.equal(compileFieldSelector('metadata.namespace=x', specOf('storage.k8s.io', 'storageclasses'))(sc), false);
  });

  test('custom resources', () => {
    const spec = customResourceFieldSelector(true, ['.spec.color', '.spec.size']);
    const obj = { metadata: { name: 'w', namespace: 'n' }, spec: { color: 'blue', size: 3 } };
    assert.equal(compileFieldSelector('spec.color=blue,spec.size=3', spec)(obj), true);
    rejects(() => compileFieldSelector('spec.shape=x', spec), 'field label not supported: spec.shape');
    assert.deepEqual(specOf('', 'pods').supported.includes('spec.host'), true);
  });

  test('the first bad term in sorted order is reported', () => {
    rejects(() => compileFieldSelector('zzz=1,aaa=1', specOf('', 'pods')), 'field label not supported: aaa');
  });
});

describe('compileSelectors', () => {
  const pods = [
    pod('a', { spec: { nodeName: 'n1' } }),
    pod('b', { spec: { nodeName: 'n2' } }),
    { metadata: { name: 'c', namespace: 'default' }, spec: { nodeName: 'n1' } },
  ];

  test('labels and fields are ANDed', () => {
    const m = compileSelectors(specOf('', 'pods'), 'app in (a,b,c)', 'spec.nodeName=n1');
    assert.deepEqual(
      pods.filter(m).map((p) => (p['metadata'] as { name: string }).name),
      ['a'],
    );
  });

  test('label != matches objects without labels', () => {
    const m = compileSelectors(specOf('', 'pods'), 'app!=a');
    assert.deepEqual(
      pods.filter(m).map((p) => (p['metadata'] as { name: string }).name),
      ['b', 'c'],
    );
  });

  test('no selectors match everything', () => {
    assert.equal(pods.filter(compileSelectors(specOf('', 'pods'))).length, 3);
    assert.equal(pods.filter(compileSelectors(specOf('', 'pods'), '', '')).length, 3);
  });

  test('bad selectors throw 400 before matching', () => {
    rejects(() => compileSelectors(specOf('', 'pods'), 'a b', 'nope=1'), "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
    rejects(() => compileSelectors(specOf('', 'pods'), 'a=b', 'nope=1'), 'field label not supported: nope');
  });
});
