/**
 * What a CRD publishes beyond its schema, as kube-apiserver does: write operations declare the
 * `fieldValidation` query parameter (so kubectl leaves validation to the server, which reports
 * unknown fields under Strict), a root that keeps unknown fields is a bare object in Swagger 2.0
 * (kubectl accepts any field), embedded resources list apiVersion, kind and metadata in v2 too,
 * `served: false` versions are absent, and a `deprecated` version warns on every request.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { uniqueName } from '../helpers/capstan.js';
import { startKubectlEnv, type Kubectl } from './kubectl.js';
import { eventually, restFor, type Rest } from './rest.js';
import type { SuiteServer } from '../helpers/suite-target.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
let srv: SuiteServer;
let k: Kubectl;
let ns: string;
let rest: Rest;

before(async () => {
  ({ srv, k, ns } = await startKubectlEnv('crdopts'));
  rest = restFor(srv.url);
});
after(async () => {
  await srv.stop();
});

function crd(group: string, versions: unknown[]): unknown {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gizmos.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' }, versions },
  };
}

const strictSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        size: { type: 'string' },
        inner: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { x: { type: 'string' } } },
      },
    },
  },
};

async function served(group: string, version: string): Promise<void> {
  await eventually('served', async () => ((await rest.get(`/apis/${group}/${version}/gizmos`)).status === 200 ? true : undefined));
}

test('write operations declare fieldValidation; kubectl leaves unknown fields to the server', async () => {
  const g = `${uniqueName('opt')}.example.com`;
  await rest.create(CRDS, crd(g, [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: strictSchema } }]));
  await served(g, 'v1');
  const doc = await eventually('v3 document', async () => {
    const r = await rest.get(`/openapi/v3/apis/${g}/v1`);
    return r.status === 200 ? r.body : undefined;
  });
  const item = doc.paths[`/apis/${g}/v1/namespaces/{namespace}/gizmos/{name}`];
  const names = (op: any): string[] => (op.parameters ?? []).map((p: any) => p.name);
  for (const method of ['put', 'patch']) assert.ok(names(item[method]).includes('fieldValidation'), `${method}: ${names(item[method]).join(',')}`);
  assert.ok(names(doc.paths[`/apis/${g}/v1/namespaces/{namespace}/gizmos`].post).includes('fieldValidation'));
  assert.ok(names(doc.paths[`/apis/${g}/v1/namespaces/{namespace}/gizmos`].get).includes('labelSelector'));
  // Every shared parameter a CRD path refers to exists in the v2 document.
  const v2 = (await rest.get('/openapi/v2')).body;
  const refs = JSON.stringify(v2.paths[`/apis/${g}/v1/namespaces/{namespace}/gizmos/{name}`]).match(/#\/parameters\/[^"]+/g) ?? [];
  assert.ok(refs.length > 0);
  for (const ref of refs) assert.ok(v2.parameters[ref.slice('#/parameters/'.length)], ref);
  // The embedded resource lists apiVersion, kind and metadata in Swagger 2.0 as well.
  const inner = v2.definitions[`${g.split('.').reverse().join('.')}.v1.Gizmo`].properties.spec.properties.inner;
  assert.deepEqual(Object.keys(inner.properties), ['x', 'apiVersion', 'kind', 'metadata']);
  assert.deepEqual(inner.required, ['kind', 'apiVersion']);

  // kubectl sends fieldValidation=Strict and shows the server's answer (not its own client-side error).
  const manifest = JSON.stringify({ apiVersion: `${g}/v1`, kind: 'Gizmo', metadata: { name: 'g1', namespace: ns }, spec: { size: 'L', colour: 'red' } });
  const res = await k.run(['create', '-f', '-'], { input: manifest });
  assert.notEqual(res.code, 0);
  assert.match(res.stderr, /strict decoding error: unknown field "spec.colour"/);
});

test('a root that keeps unknown fields is a bare object in Swagger 2.0, and kubectl creates any field', async () => {
  const g = `${uniqueName('opt')}.example.com`;
  const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  await rest.create(CRDS, crd(g, [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: open } }]));
  await served(g, 'v1');
  const name = `${g.split('.').reverse().join('.')}.v1.Gizmo`;
  const def = await eventually('v2 definition', async () => (await rest.get('/openapi/v2')).body.definitions[name]);
  assert.deepEqual(def, { type: 'object', 'x-kubernetes-group-version-kind': [{ group: g, kind: 'Gizmo', version: 'v1' }] });
  const manifest = JSON.stringify({ apiVersion: `${g}/v1`, kind: 'Gizmo', metadata: { name: 'g1', namespace: ns }, a: { b: [{ c: 'd' }] } });
  await k.ok(['create', '-f', '-'], { input: manifest });
  assert.deepEqual((await rest.get(`/apis/${g}/v1/namespaces/${ns}/gizmos/g1`)).body.a, { b: [{ c: 'd' }] });
});

test('deprecated versions warn on every request; served: false versions are out of OpenAPI', async () => {
  const g = `${uniqueName('opt')}.example.com`;
  const open = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  await rest.create(
    CRDS,
    crd(g, [
      { name: 'v1', served: true, storage: true, schema: open },
      { name: 'v1beta1', served: true, storage: false, deprecated: true, schema: open },
      { name: 'v1alpha1', served: true, storage: false, deprecated: true, deprecationWarning: 'v1alpha1 goes away in 2027', schema: open },
      { name: 'v2alpha1', served: false, storage: false, schema: open },
    ]),
  );
  await served(g, 'v1beta1');
  const warning = async (path: string): Promise<string | null> => (await rest.get(path)).headers.get('warning');
  assert.equal(await warning(`/apis/${g}/v1beta1/gizmos`), `299 - "${g}/v1beta1 Gizmo is deprecated; use ${g}/v1 Gizmo"`);
  assert.equal(await warning(`/apis/${g}/v1beta1/namespaces/${ns}/gizmos/missing`), `299 - "${g}/v1beta1 Gizmo is deprecated; use ${g}/v1 Gizmo"`);
  assert.equal(await warning(`/apis/${g}/v1alpha1/gizmos`), '299 - "v1alpha1 goes away in 2027"');
  assert.equal(await warning(`/apis/${g}/v1/gizmos`), null);
  const kubectl = await k.run(['get', `gizmos.v1beta1.${g}`, '-n', ns]);
  assert.match(kubectl.stderr, new RegExp(`Warning: ${g.replace(/\./g, '\\.')}/v1beta1 Gizmo is deprecated`));
  const index = await eventually('v3 index', async () => {
    const body = (await rest.get('/openapi/v3')).body;
    return body.paths[`apis/${g}/v1alpha1`] !== undefined ? body : undefined;
  });
  assert.equal(index.paths[`apis/${g}/v2alpha1`], undefined);
  assert.equal((await rest.get(`/openapi/v3/apis/${g}/v2alpha1`)).status, 404);
  assert.equal(JSON.stringify((await rest.get('/openapi/v2')).body.paths).includes(`/apis/${g}/v2alpha1/`), false);
});
