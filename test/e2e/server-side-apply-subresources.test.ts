/**
 * Server-side apply to subresources and to custom resources over HTTP. The custom resource
 * sequence (a CRD with set, list-map with two keys, atomic map, preserve-unknown-fields,
 * embedded-resource and int-or-string fields, status and scale subresources) is compared step by
 * step with what kube-apiserver 1.36 answered to the same requests
 * (test/golden/server-side-apply/custom-resource-subresources.json; uids, resourceVersions and
 * creation times left out, entry times as "T"). The Deployment checks are the reference's answers
 * to the same writes (recorded by hand: its controllers write the same object there).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { eventually } from './rest.js';

type Obj = Record<string, any>;

let srv: TestServer;
const ns = uniqueName('ssa-sub');
const APPLY = 'application/apply-patch+yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const golden = JSON.parse(readFileSync(join(root, 'test', 'golden', 'server-side-apply', 'custom-resource-subresources.json'), 'utf8')) as {
  crd: Obj;
  steps: { name: string; path: string; method?: string; query?: string; contentType?: string; body?: string; want: Obj }[];
};

before(async () => {
  srv = await startTestServer();
  const r = await api(srv.url, '/api/v1/namespaces', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
  });
  assert.equal(r.status, 201, r.text);
});

after(async () => {
  await srv.stop();
});

/** The object as the golden keeps it: no uid, resourceVersion or creationTimestamp; entry times as "T". */
function normalized(o: Obj): Obj {
  const copy = structuredClone(o);
  if (copy.metadata !== undefined) {
    for (const k of ['creationTimestamp', 'resourceVersion', 'uid']) delete copy.metadata[k];
    for (const e of copy.metadata.managedFields ?? []) if ('time' in e) e.time = 'T';
    if (copy.metadata.namespace === ns) copy.metadata.namespace = 'ssa-ref';
  }
  return copy;
}

function apply(path: string, body: string | Obj, query: string): ReturnType<typeof api> {
  return api(srv.url, `${path}?${query}`, {
    method: 'PATCH',
    headers: { 'content-type': APPLY },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('apply to a custom resource and its status and scale, as kube-apiserver 1.36', () => {
  before(async () => {
    const r = await api(srv.url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(golden.crd),
    });
    assert.equal(r.status, 201, r.text);
    await eventually('CRD served', async () => {
      const list = await api(srv.url, `/apis/ssa.capstan.example/v1/namespaces/${ns}/ssawidgets`);
      return list.status === 200 ? true : undefined;
    });
  });

  const base = (): string => `/apis/ssa.capstan.example/v1/namespaces/${ns}/ssawidgets/w1`;
  for (const step of golden.steps) {
    test(step.name, async () => {
      const r =
        step.method === 'GET'
          ? await api(srv.url, base())
          : await api(srv.url, `${base()}${step.path}?${step.query ?? ''}`, {
              method: 'PATCH',
              headers: { 'content-type': step.contentType ?? APPLY },
              body: step.body,
            });
      assert.deepEqual(normalized(r.body as Obj), step.want, r.text);
    });
  }

  test('an undeclared field is not typed (kube: 500, Capstan: 400, same message)', async () => {
    const r = await apply(
      `/apis/ssa.capstan.example/v1/namespaces/${ns}/ssawidgets/w2`,
      { apiVersion: 'ssa.capstan.example/v1', kind: 'SsaWidget', metadata: { name: 'w2' }, spec: { color: 'red', bogus: 1 } },
      'fieldManager=m1',
    );
    assert.equal(r.status, 400, r.text);
    assert.equal(
      r.body.message,
      'failed to create typed patch object (/w2; ssa.capstan.example/v1, Kind=SsaWidget): .spec.bogus: field not declared in schema',
    );
  });

  test('status and scale of an absent object answer 404', async () => {
    const r = await apply(
      `/apis/ssa.capstan.example/v1/namespaces/${ns}/ssawidgets/absent/status`,
      { apiVersion: 'ssa.capstan.example/v1', kind: 'SsaWidget', metadata: { name: 'absent' }, status: { phase: 'x' } },
      'fieldManager=m1',
    );
    assert.equal(r.status, 404, r.text);
  });
});

describe('apply to a Deployment status and scale', () => {
  const name = 'd1';
  const path = (): string => `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { a: 'b' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'x' } },
      template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  };
  const statusApply = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { st: 'x' } },
    spec: { replicas: 7 },
    status: { replicas: 5, observedGeneration: 1, conditions: [{ type: 'Custom', status: 'True' }] },
  };
  const scaleApply = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name }, spec: { replicas: 4 } };

  const entry = (o: Obj, manager: string): Obj | undefined => (o.metadata.managedFields as Obj[]).find((e) => e.manager === manager);

  test('a status writer owns what it wrote under its subresource; apply to status conflicts name it so', async () => {
    assert.equal((await apply(path(), deployment, 'fieldManager=m1')).status, 201);
    const w = await api(srv.url, `${path()}/status`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json', 'user-agent': 'kube-controller-manager/v1.36.0' },
      body: JSON.stringify({ status: { replicas: 2, observedGeneration: 1 } }),
    });
    assert.equal(w.status, 200, w.text);
    const r = await apply(`${path()}/status`, statusApply, 'fieldManager=st');
    assert.equal(r.status, 409, r.text);
    assert.equal(
      r.body.message,
      'Apply failed with 1 conflict: conflict with "kube-controller-manager" with subresource "status" using apps/v1: .status.replicas',
    );
    assert.deepEqual(r.body.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "kube-controller-manager" with subresource "status" using apps/v1', field: '.status.replicas' },
    ]);
  });

  test('forced apply to status changes only status; the entry records the subresource and leaves out spec and labels', async () => {
    const r = await apply(`${path()}/status`, statusApply, 'fieldManager=st&force=true');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.metadata.labels, { a: 'b' });
    assert.equal(r.body.spec.replicas, 2);
    assert.equal(r.body.status.replicas, 5);
    const st = entry(r.body, 'st');
    assert.ok(st);
    assert.equal(st.subresource, 'status');
    assert.equal(st.operation, 'Apply');
    assert.deepEqual(st.fieldsV1, {
      'f:status': { 'f:conditions': { 'k:{"type":"Custom"}': { '.': {}, 'f:status': {}, 'f:type': {} } }, 'f:observedGeneration': {}, 'f:replicas': {} },
    });
    assert.deepEqual(entry(r.body, 'kube-controller-manager')?.fieldsV1, { 'f:status': { 'f:observedGeneration': {} } });
  });

  test('apply to scale conflicts with the replicas owner as an Apply manager (no "using")', async () => {
    const r = await apply(`${path()}/scale`, scaleApply, 'fieldManager=sc');
    assert.equal(r.status, 409, r.text);
    assert.equal(r.body.message, 'Apply failed with 1 conflict: conflict with "m1": .spec.replicas');
  });

  test('forced apply to scale moves replicas to an entry of the parent version without a time, as kube records it', async () => {
    const r = await apply(`${path()}/scale`, scaleApply, 'fieldManager=sc&force=true');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.kind, 'Scale');
    assert.equal(r.body.spec.replicas, 4);
    const d = (await api(srv.url, path())).body as Obj;
    assert.equal(d.spec.replicas, 4);
    assert.deepEqual(entry(d, 'sc'), {
      manager: 'sc',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      subresource: 'scale',
    });
    assert.equal(entry(d, 'm1')?.fieldsV1['f:spec']['f:replicas'], undefined);
  });

  test('an update of scale takes replicas from the applier, recorded the same way', async () => {
    const r = await api(srv.url, `${path()}/scale?fieldManager=upd`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { replicas: 3 } }),
    });
    assert.equal(r.status, 200, r.text);
    const d = (await api(srv.url, path())).body as Obj;
    assert.equal(entry(d, 'sc'), undefined);
    assert.deepEqual(entry(d, 'upd'), {
      manager: 'upd',
      operation: 'Update',
      apiVersion: 'apps/v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      subresource: 'scale',
    });
  });
});

describe("kubectl's server-side apply over client-side apply's last-applied configuration", () => {
  const path = (): string => `/api/v1/namespaces/${ns}/configmaps/lf`;
  const lastApplied = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'lf', namespace: ns }, data: { a: '1', b: '2' } };

  test('conflicts on fields last applied and unchanged since are forgiven; the others are reported (as kube-apiserver 1.36)', async () => {
    const created = await api(srv.url, `/api/v1/namespaces/${ns}/configmaps?fieldManager=kubectl-client-side-apply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'lf', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `${JSON.stringify(lastApplied)}\n` } },
        data: { a: '1', b: '2' },
      }),
    });
    assert.equal(created.status, 201, created.text);
    const patched = await api(srv.url, `${path()}?fieldManager=other`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ data: { b: 'X' } }),
    });
    assert.equal(patched.status, 200, patched.text);
    const conflicting = await apply(path(), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lf}\ndata: {a: "9", b: "9"}\n', 'fieldManager=kubectl');
    assert.equal(conflicting.status, 409, conflicting.text);
    assert.equal(conflicting.body.message, 'Apply failed with 1 conflict: conflict with "other" using v1: .data.b');
    const r = await apply(path(), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lf}\ndata: {a: "9", b: "X"}\n', 'fieldManager=kubectl');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.data, { a: '9', b: 'X' });
    assert.deepEqual(r.body.metadata.annotations, {
      'kubectl.kubernetes.io/last-applied-configuration': '{"apiVersion":"v1","data":{"a":"9","b":"X"},"kind":"ConfigMap","metadata":{"name":"lf"}}\n',
    });
    assert.deepEqual(
      (r.body.metadata.managedFields as Obj[]).map((e) => [e.manager, e.operation, e.fieldsV1]),
      [
        ['kubectl', 'Apply', { 'f:data': { 'f:a': {}, 'f:b': {} } }],
        [
          'kubectl-client-side-apply',
          'Update',
          { 'f:data': {}, 'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } } },
        ],
        ['other', 'Update', { 'f:data': { 'f:b': {} } }],
      ],
    );
  });
});
