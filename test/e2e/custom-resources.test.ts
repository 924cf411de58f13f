/**
 * CustomResourceDefinitions on one Capstan server (embedded store): a created CRD is Established with
 * kube's status and served (CRUD, list, watch, status and scale subresources, generation, Table
 * columns, discovery, OpenAPI), name conflicts are reported as kube reports them, bad CRDs get kube's
 * validation messages, and deleting a CRD deletes its custom resources before it goes.
 * kubectl drives the same flows: apply, get, explain, scale, get all.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { uniqueName } from '../helpers/capstan.js';
import { startKubectlEnv, type Kubectl } from './kubectl.js';
import { assertStatus, eventually, restFor, type Rest } from './rest.js';
import type { SuiteServer } from '../helpers/suite-target.js';

let srv: SuiteServer;
let k: Kubectl;
let ns: string;
let rest: Rest;

before(async () => {
  ({ srv, k, ns } = await startKubectlEnv('crd'));
  rest = restFor(srv.url);
});

after(async () => {
  await srv.stop();
});

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** A Widget CRD in a group of its own, with status and scale subresources and printer columns. */
function widgetCrd(
  group: string,
  extra: { plural?: string; kind?: string; listKind?: string; shortNames?: string[]; columns?: boolean; versions?: unknown[] } = {},
): any {
  const plural = extra.plural ?? 'widgets';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: {
        plural,
        singular: plural.slice(0, -1),
        kind: extra.kind ?? 'Widget',
        ...(extra.listKind === undefined ? {} : { listKind: extra.listKind }),
        shortNames: extra.shortNames ?? ['wg'],
        categories: ['all', 'gadgets'],
      },
      versions: extra.versions ?? [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'A widget.',
              properties: {
                spec: { type: 'object', properties: { replicas: { type: 'integer', description: 'how many' }, size: { type: 'string' } } },
                status: {
                  type: 'object',
                  properties: {
                    replicas: { type: 'integer' },
                    selector: { type: 'string' },
                    // Declared, or pruning drops the conditions the Table's Ready column reads.
                    conditions: { type: 'array', items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
                  },
                },
              },
            },
          },
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
          },
          ...(extra.columns === false
            ? {}
            : {
                additionalPrinterColumns: [
                  { name: 'Size', type: 'string', jsonPath: '.spec.size' },
                  { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', priority: 1 },
                  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
                ],
              }),
        },
        { name: 'v1beta1', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      ],
    },
  };
}

/** Creates CRD and waits until it is Established (and so served); returns the stored CRD. */
async function establish(crd: any): Promise<any> {
  await rest.create(CRDS, crd);
  return eventually(`CRD ${crd.metadata.name} established`, async () => {
    const r = await rest.get(`${CRDS}/${crd.metadata.name}`);
    const established = (r.body.status?.conditions ?? []).some((c: any) => c.type === 'Established' && c.status === 'True');
    return established ? r.body : undefined;
  });
}

function group(): string {
  return `${uniqueName('g')}.example.com`;
}

describe('a created CRD', { concurrency: true }, () => {
  test('is Established at once with kube status: acceptedNames, conditions, storedVersions, and no finalizer until deleted', async (t) => {
    const g = group();
    const started = Date.now();
    const crd = await establish(widgetCrd(g));
    t.diagnostic(`established ${Date.now() - started} ms after the create`);
    // One second is the target on an idle machine; the bound catches a registrar that waits for a resync.
    assert.ok(Date.now() - started < 5000, `established after ${Date.now() - started}ms`);
    assert.equal(crd.metadata.finalizers, undefined);
    assert.equal(crd.metadata.generation, 1);
    assert.deepEqual(crd.spec.conversion, { strategy: 'None' });
    assert.deepEqual(crd.status.acceptedNames, {
      plural: 'widgets',
      singular: 'widget',
      shortNames: ['wg'],
      kind: 'Widget',
      listKind: 'WidgetList',
      categories: ['all', 'gadgets'],
    });
    assert.deepEqual(
      crd.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message]),
      [
        ['NamesAccepted', 'True', 'NoConflicts', 'no conflicts found'],
        ['Established', 'True', 'InitialNamesAccepted', 'the initial names have been accepted'],
      ],
    );
    assert.deepEqual(crd.status.storedVersions, ['v1']);
  });

  test('is served in legacy and aggregated discovery as kube serves it; served: false versions are not', async () => {
    const g = group();
    await establish(widgetCrd(g));
    const list = await rest.get(`/apis/${g}/v1`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.resources.map((r: any) => r.name),
      ['widgets', 'widgets/status', 'widgets/scale'],
    );
    const [top, status, scale] = list.body.resources;
    assert.deepEqual(top.verbs, ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch']);
    assert.deepEqual(top.shortNames, ['wg']);
    assert.deepEqual(top.categories, ['all', 'gadgets']);
    assert.equal(top.kind, 'Widget');
    assert.equal(typeof top.storageVersionHash, 'string');
    assert.deepEqual(status, { name: 'widgets/status', singularName: '', namespaced: true, kind: 'Widget', verbs: ['get', 'patch', 'update'] });
    assert.deepEqual(scale, {
      name: 'widgets/scale',
      singularName: '',
      namespaced: true,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: ['get', 'patch', 'update'],
    });
    assert.equal((await rest.get(`/apis/${g}/v1beta1`)).status, 404);
    const groupDoc = await rest.get(`/apis/${g}`);
    assert.deepEqual(groupDoc.body.preferredVersion, { groupVersion: `${g}/v1`, version: 'v1' });
    const agg = await rest.get('/apis', { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    const item = agg.body.items.find((i: any) => i.metadata.name === g);
    assert.ok(item, 'group in aggregated discovery');
    assert.deepEqual(
      item.versions.map((v: any) => v.version),
      ['v1'],
    );
    const res = item.versions[0].resources[0];
    assert.deepEqual(res.responseKind, { group: g, version: 'v1', kind: 'Widget' });
    assert.deepEqual(
      res.subresources.map((s: any) => [s.subresource, s.responseKind]),
      [
        ['status', { group: g, version: 'v1', kind: 'Widget' }],
        ['scale', { group: 'autoscaling', version: 'v1', kind: 'Scale' }],
      ],
    );
  });

  test('is in OpenAPI v2 and v3 with its schema', async () => {
    const g = group();
    await establish(widgetCrd(g));
    const prefix = g.split('.').reverse().join('.');
    const v3 = await rest.get(`/openapi/v3/apis/${g}/v1`);
    assert.equal(v3.status, 200);
    const schema = v3.body.components.schemas[`${prefix}.v1.Widget`];
    assert.ok(schema, Object.keys(v3.body.components.schemas).join(','));
    assert.equal(schema.description, 'A widget.');
    assert.equal(schema.properties.spec.properties.replicas.description, 'how many');
    assert.deepEqual(schema['x-kubernetes-group-version-kind'], [{ group: g, kind: 'Widget', version: 'v1' }]);
    assert.ok(v3.body.paths[`/apis/${g}/v1/namespaces/{namespace}/widgets/{name}/scale`]);
    const index = await rest.get('/openapi/v3');
    assert.ok(index.body.paths[`apis/${g}/v1`]);
    const v2 = await rest.get('/openapi/v2');
    assert.ok(v2.body.definitions[`${prefix}.v1.WidgetList`]);
  });
});

test('OpenAPI v2 and v3 publish a schema as kube does: v3 as written, v2 without what Swagger 2.0 cannot say', async () => {
  const g = group();
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': [{ rule: 'self.a >= 0', message: 'neg' }],
        properties: {
          a: { type: 'integer', nullable: true, minimum: 0, default: 1 },
          port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          e: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        },
      },
    },
  };
  await establish(widgetCrd(g, { versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }] }));
  const name = `${g.split('.').reverse().join('.')}.v1.Widget`;
  const v2 = (await rest.get('/openapi/v2')).body.definitions[name].properties.spec;
  assert.deepEqual(v2.properties.a, { minimum: 0 });
  assert.deepEqual(v2.properties.port, { 'x-kubernetes-int-or-string': true });
  assert.deepEqual(v2.properties.e, { 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true });
  assert.deepEqual(v2['x-kubernetes-validations'], [{ rule: 'self.a >= 0', message: 'neg' }]);
  // The v3 documents of a group are rebuilt just after its CRDs change.
  const v3 = await eventually('v3 schema as written', async () => {
    const spec = (await rest.get(`/openapi/v3/apis/${g}/v1`)).body.components.schemas[name].properties.spec;
    return spec.properties.a.nullable === true ? spec : undefined;
  });
  assert.deepEqual(v3.properties.a, { type: 'integer', nullable: true, minimum: 0, default: 1 });
  assert.deepEqual(v3.properties.port.anyOf, [{ type: 'integer' }, { type: 'string' }]);
  assert.deepEqual(v3.properties.e.required, ['kind', 'apiVersion']);
  assert.deepEqual(Object.keys(v3.properties.e.properties), ['apiVersion', 'kind', 'metadata']);
});

describe('custom resources', { concurrency: true }, () => {
  test('a multi-version CRD serves each served version, GA first, with the storage version hash', async () => {
    const g = group();
    const open = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    await establish(
      widgetCrd(g, {
        listKind: 'WidgetCollection',
        versions: [
          { name: 'v1alpha1', served: true, storage: false, schema: open },
          { name: 'v1beta1', served: true, storage: true, schema: open },
          { name: 'v1', served: true, storage: false, schema: open },
        ],
      }),
    );
    const groupDoc = await rest.get(`/apis/${g}`);
    assert.deepEqual(
      groupDoc.body.versions.map((v: any) => v.version),
      ['v1', 'v1beta1', 'v1alpha1'],
    );
    const hashes = new Set<string>();
    for (const v of ['v1', 'v1beta1', 'v1alpha1']) hashes.add((await rest.get(`/apis/${g}/${v}`)).body.resources[0].storageVersionHash);
    assert.equal(hashes.size, 1, 'one storage version hash for every served version');
    const created = await rest.create(`/apis/${g}/v1/namespaces/${ns}/widgets`, {
      apiVersion: `${g}/v1`,
      kind: 'Widget',
      metadata: { name: 'm' },
      spec: { x: 1 },
    });
    assert.equal(created.apiVersion, `${g}/v1`);
    const read = await rest.get(`/apis/${g}/v1alpha1/namespaces/${ns}/widgets/m`);
    assert.equal(read.body.apiVersion, `${g}/v1alpha1`);
    assert.equal(read.body.spec.x, 1);
    const list = await rest.get(`/apis/${g}/v1/namespaces/${ns}/widgets`);
    assert.equal(list.body.kind, 'WidgetCollection');
    const table = await rest.get(`/apis/${g}/v1/namespaces/${ns}/widgets`, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.deepEqual(
      table.body.columnDefinitions.map((c: any) => c.name),
      ['Name', 'Age'],
    );
    // A version no longer served goes away; the others stay.
    const stored = await rest.get(`${CRDS}/widgets.${g}`);
    const versions = stored.body.spec.versions.map((v: any) => (v.name === 'v1alpha1' ? { ...v, served: false } : v));
    const updated = await rest.patch(`${CRDS}/widgets.${g}`, { spec: { versions } });
    assert.equal(updated.status, 200, updated.text);
    await eventually('v1alpha1 no longer served', async () =>
      (await rest.get(`/apis/${g}/v1alpha1/namespaces/${ns}/widgets/m`)).status === 404 ? true : undefined,
    );
    assert.deepEqual(
      (await rest.get(`/apis/${g}`)).body.versions.map((v: any) => v.version),
      ['v1', 'v1beta1'],
    );
    assert.equal((await rest.get(`/apis/${g}/v1/namespaces/${ns}/widgets/m`)).status, 200);
  });

  test('CRUD, list, watch, generation and the status subresource', async () => {
    const g = group();
    await establish(widgetCrd(g));
    const base = `/apis/${g}/v1/namespaces/${ns}/widgets`;
    const watch = fetch(`${srv.url}${base}?watch=true&timeoutSeconds=2`);
    const created = await rest.create(base, {
      apiVersion: `${g}/v1`,
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { replicas: 1, size: 's' },
      status: { replicas: 9 },
    });
    assert.equal(created.metadata.generation, 1);
    assert.equal(created.status, undefined, 'status is dropped on create when the status subresource exists');
    const got = await rest.get(`${base}/w1`);
    assert.equal(got.body.spec.size, 's');
    const list = await rest.get(base);
    assert.equal(list.body.kind, 'WidgetList');
    assert.equal(list.body.apiVersion, `${g}/v1`);
    assert.deepEqual(
      list.body.items.map((i: any) => i.metadata.name),
      ['w1'],
    );
    const patched = await rest.patch(`${base}/w1`, { spec: { size: 'm' }, status: { replicas: 5 } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.metadata.generation, 2);
    assert.equal(patched.body.status, undefined);
    const status = await rest.patch(`${base}/w1/status`, { spec: { size: 'xl' }, status: { replicas: 3 } });
    assert.equal(status.status, 200, status.text);
    assert.equal(status.body.status.replicas, 3);
    assert.equal(status.body.spec.size, 'm');
    assert.equal(status.body.metadata.generation, 2);
    const events = (await (await watch).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      events.map((e: any) => e.type),
      ['ADDED', 'MODIFIED', 'MODIFIED'],
    );
    const deleted = await rest.del(`${base}/w1`);
    assert.equal(deleted.status, 200);
    assert.equal(deleted.body.kind, 'Widget', 'DELETE of a custom resource answers with the object');
    assert.equal((await rest.get(`${base}/w1`)).status, 404);
  });

  test('without a status subresource, status is part of the object and counts for generation; /status is a missing object', async () => {
    const g = group();
    const open = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
    await establish(widgetCrd(g, { versions: [{ name: 'v1', served: true, storage: true, schema: open }] }));
    const base = `/apis/${g}/v1/namespaces/${ns}/widgets`;
    const created = await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name: 'p' }, spec: { a: 1 }, status: { s: 1 } });
    assert.deepEqual([created.metadata.generation, created.status], [1, { s: 1 }]);
    const patched = await rest.patch(`${base}/p`, { status: { s: 2 } });
    assert.deepEqual([patched.body.metadata.generation, patched.body.status], [2, { s: 2 }]);
    assertStatus(await rest.get(`${base}/p/status`), 404, 'NotFound', `widgets.${g} "p" not found`);
  });

  test('field selectors: metadata and the selectableFields of the version, other fields refused as kube refuses them', async () => {
    const g = group();
    const schema = {
      openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { color: { type: 'string' }, n: { type: 'integer' } } } } },
    };
    await establish(widgetCrd(g, { versions: [{ name: 'v1', served: true, storage: true, schema, selectableFields: [{ jsonPath: '.spec.color' }] }] }));
    const base = `/apis/${g}/v1/namespaces/${ns}/widgets`;
    for (const name of ['a', 'b']) await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name }, spec: { color: name } });
    const names = async (selector: string): Promise<string[]> =>
      ((await rest.get(`${base}?fieldSelector=${encodeURIComponent(selector)}`)).body.items as any[]).map((i) => i.metadata.name as string);
    assert.deepEqual(await names('spec.color=b'), ['b']);
    assert.deepEqual(await names('metadata.name=a'), ['a']);
    assert.deepEqual(await names('spec.color!=b'), ['a']);
    assertStatus(await rest.get(`${base}?fieldSelector=spec.n%3D1`), 400, 'BadRequest', 'field label not supported: spec.n');
  });

  test('scale subresource reads and writes the CRD paths', async () => {
    const g = group();
    await establish(widgetCrd(g));
    const base = `/apis/${g}/v1/namespaces/${ns}/widgets`;
    await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name: 'w' }, spec: { replicas: 2 } });
    await rest.patch(`${base}/w/status`, { status: { replicas: 1, selector: 'app=w' } });
    const scale = await rest.get(`${base}/w/scale`);
    assert.equal(scale.status, 200);
    assert.equal(scale.body.kind, 'Scale');
    assert.equal(scale.body.apiVersion, 'autoscaling/v1');
    assert.deepEqual(scale.body.spec, { replicas: 2 });
    assert.deepEqual(scale.body.status, { replicas: 1, selector: 'app=w' });
    const patched = await rest.patch(`${base}/w/scale`, { spec: { replicas: 7 } });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.spec.replicas, 7);
    const obj = await rest.get(`${base}/w`);
    assert.equal(obj.body.spec.replicas, 7);
    assert.equal(obj.body.metadata.generation, 2);
  });

  test('Table output has Name, the printer columns (JSONPath filters included), or Name and Age by default', async () => {
    const g = group();
    await establish(widgetCrd(g));
    const base = `/apis/${g}/v1/namespaces/${ns}/widgets`;
    await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name: 't' }, spec: { replicas: 2, size: 'big' } });
    await rest.patch(`${base}/t/status`, {
      status: {
        conditions: [
          { type: 'Other', status: 'False' },
          { type: 'Ready', status: 'True' },
        ],
      },
    });
    const accept = { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' };
    const table = await rest.get(base, accept);
    assert.equal(table.body.kind, 'Table');
    assert.deepEqual(
      table.body.columnDefinitions.map((c: any) => [c.name, c.type, c.priority]),
      [
        ['Name', 'string', 0],
        ['Size', 'string', 0],
        ['Replicas', 'integer', 1],
        ['Ready', 'string', 0],
      ],
    );
    assert.equal(table.body.columnDefinitions[1].description, 'Custom resource definition column (in JSONPath format): .spec.size');
    assert.deepEqual(table.body.rows[0].cells, ['t', 'big', 2, 'True']);

    const g2 = group();
    await establish(widgetCrd(g2, { columns: false }));
    const base2 = `/apis/${g2}/v1/namespaces/${ns}/widgets`;
    await rest.create(base2, { apiVersion: `${g2}/v1`, kind: 'Widget', metadata: { name: 'a' } });
    const plain = await rest.get(base2, accept);
    assert.deepEqual(
      plain.body.columnDefinitions.map((c: any) => [c.name, c.type]),
      [
        ['Name', 'string'],
        ['Age', 'date'],
      ],
    );
    assert.equal(plain.body.rows[0].cells[0], 'a');
    assert.match(String(plain.body.rows[0].cells[1]), /^\d+s$/);
  });

  test('protobuf is refused (406, 415) and strategic merge patch answers 415 with kube message', async () => {
    const g = group();
    await establish(widgetCrd(g));
    const base = `/apis/${g}/v1/namespaces/${ns}/widgets`;
    await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name: 'p' } });
    const pb = await rest.get(`${base}/p`, { accept: 'application/vnd.kubernetes.protobuf' });
    assert.equal(pb.status, 406);
    const post = await rest.post(base, 'k8s\x00', 'application/vnd.kubernetes.protobuf');
    assert.equal(post.status, 415);
    const smp = await rest.patch(`${base}/p`, { spec: { size: 'x' } }, 'application/strategic-merge-patch+json');
    assertStatus(
      smp,
      415,
      'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  });
});

describe('CRD names, validation and deletion', { concurrency: true }, () => {
  test('a CRD whose names another CRD of the group holds is not accepted, as kube reports it', async () => {
    const g = group();
    await establish(widgetCrd(g));
    await rest.create(CRDS, widgetCrd(g, { plural: 'gizmos' }));
    const crd = await eventually('conflict reported', async () => {
      const r = await rest.get(`${CRDS}/gizmos.${g}`);
      return (r.body.status?.conditions ?? []).length > 0 ? r.body : undefined;
    });
    assert.deepEqual(
      crd.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message]),
      [
        ['NamesAccepted', 'False', 'ListKindConflict', '"WidgetList" is already in use'],
        ['Established', 'False', 'NotAccepted', 'not all names are accepted'],
      ],
    );
    assert.deepEqual(crd.status.acceptedNames, { plural: 'gizmos', singular: 'gizmo', kind: '', categories: ['all', 'gadgets'] });
    assert.equal((await rest.get(`/apis/${g}/v1/namespaces/${ns}/gizmos`)).status, 404);
  });

  test('bad CRDs get kube messages', async () => {
    const g = group();
    const empty = await rest.post(CRDS, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `foo.${g}` },
      spec: { group: g, names: {}, versions: [] },
    });
    assertStatus(
      empty,
      422,
      'Invalid',
      `CustomResourceDefinition.apiextensions.k8s.io "foo.${g}" is invalid: [metadata.name: Invalid value: "foo.${g}": must be spec.names.plural+"."+spec.group, spec.scope: Required value, spec.versions: Invalid value: []: must have exactly one version marked as storage version, spec.names.plural: Required value, spec.names.singular: Required value, spec.names.kind: Required value, spec.names.listKind: Required value, status.storedVersions: Invalid value: null: must have at least one stored version]`,
    );
    const dns =
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
    const badNames = await rest.post(CRDS, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `bars.${g}` },
      spec: {
        group: g,
        scope: 'Namespaced',
        names: { plural: 'Bars', kind: 'bar', singular: 'Bar' },
        versions: [{ name: 'V1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
      },
    });
    assertStatus(
      badNames,
      422,
      'Invalid',
      `CustomResourceDefinition.apiextensions.k8s.io "bars.${g}" is invalid: [metadata.name: Invalid value: "bars.${g}": must be spec.names.plural+"."+spec.group, spec.versions[0].name: Invalid value: "V1": ${dns}, spec.version: Invalid value: "V1": ${dns}, spec.names.plural: Invalid value: "Bars": ${dns}, spec.names.singular: Invalid value: "Bar": ${dns}]`,
    );
    const twoStorage = await rest.post(CRDS, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `bars.${g}` },
      spec: {
        group: g,
        scope: 'Namespaced',
        names: { plural: 'bars', kind: 'Bar' },
        versions: [
          { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
          { name: 'v2', served: false, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
        ],
      },
    });
    // kube prints the versions as its internal Go structs; schemas identical in every version move to the spec.
    const dump = (name: string, served: boolean): string =>
      `{"Name":"${name}","Served":${served},"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}`;
    assert.deepEqual(
      twoStorage.body.details.causes.map((c: any) => [c.field, c.message]),
      [
        ['spec.versions', `Invalid value: [${dump('v1', true)},${dump('v2', false)}]: must have exactly one version marked as storage version`],
        ['status.storedVersions', 'Invalid value: ["v1"]: must have the storage version v2'],
      ],
    );
    const noSchema = await rest.post(CRDS, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `bars.${g}` },
      spec: { group: g, scope: 'Weird', names: { plural: 'bars', kind: 'Bar' }, versions: [{ name: 'v1', served: true, storage: true }] },
    });
    assert.equal(noSchema.status, 422);
    assert.deepEqual(
      noSchema.body.details.causes.map((c: any) => [c.field, c.message]),
      [
        ['spec.scope', 'Unsupported value: "Weird": supported values: "Cluster", "Namespaced"'],
        ['spec.versions[0].schema.openAPIV3Schema', 'Required value'],
      ],
    );
  });

  test('deleting a CRD deletes its custom resources, then the CRD, then stops serving it', async () => {
    const g = group();
    await establish(widgetCrd(g));
    const base = `/apis/${g}/v1/namespaces/${ns}/widgets`;
    for (const name of ['a', 'b']) await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name } });
    const held = await rest.create(base, { apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    assert.equal(held.metadata.name, 'held');
    const del = await rest.del(`${CRDS}/widgets.${g}`);
    assert.equal(del.status, 200, del.text);
    // As kube's CRD DELETE: the answer is the marked CRD, with the cleanup finalizer and a pending Terminating condition.
    assert.deepEqual(del.body.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
    const pending = (del.body.status.conditions as { type: string; status: string; reason: string; message: string }[]).find((c) => c.type === 'Terminating');
    assert.deepEqual(pending && [pending.status, pending.reason, pending.message], [
      'True',
      'InstanceDeletionPending',
      'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
    ]);
    const terminating = await eventually('Terminating in progress', async () => {
      const r = await rest.get(`${CRDS}/widgets.${g}`);
      const c = (r.body.status?.conditions ?? []).find((x: any) => x.type === 'Terminating');
      return c?.reason === 'InstanceDeletionInProgress' ? c : undefined;
    });
    assert.equal(terminating.status, 'True');
    assert.equal(terminating.message, 'CustomResource deletion is in progress');
    const refused = await rest.post(base, { apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name: 'late' } });
    assertStatus(refused, 403, 'Forbidden', `widgets.${g} "late" is forbidden: create not allowed while custom resource definition is terminating`);
    // The held instance keeps the CRD (and its resources) until its finalizer goes.
    await eventually('unheld instances deleted', async () => ((await rest.get(base)).body.items?.length === 1 ? true : undefined));
    assert.equal((await rest.get(`${CRDS}/widgets.${g}`)).status, 200);
    const release = await rest.patch(`${base}/held`, { metadata: { finalizers: null } });
    assert.equal(release.status, 200, release.text);
    await eventually('CRD gone', async () => ((await rest.get(`${CRDS}/widgets.${g}`)).status === 404 ? true : undefined));
    await eventually('resources no longer served', async () => ((await rest.get(base)).status === 404 ? true : undefined));
    assert.equal((await rest.get(`/apis/${g}/v1`)).status, 404);
  });
});

describe('kubectl and custom resources', () => {
  test('apply a CRD, then get, explain, scale, get all and categories', async () => {
    const g = group();
    const crd = widgetCrd(g);
    await k.ok(['apply', '-f', '-'], { input: JSON.stringify(crd) });
    await k.ok(['wait', '--for=condition=Established', `crd/widgets.${g}`, '--timeout=10s']);
    await k.ok(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({ apiVersion: `${g}/v1`, kind: 'Widget', metadata: { name: 'kw' }, spec: { replicas: 1, size: 'big' } }),
    });
    const table = await k.ok(['get', `widgets.${g}`, '-n', ns]);
    assert.match(table, /^NAME\s+SIZE\s+READY\n/);
    // A null cell prints empty, as kubectl prints kube's.
    assert.match(table, /\nkw\s+big\s*\n/);
    const wide = await k.ok(['get', `wg.${g}`, '-n', ns, '-o', 'wide']);
    assert.match(wide, /^NAME\s+SIZE\s+REPLICAS\s+READY\n/);
    const explain = await k.ok(['explain', `widgets.${g}.spec`]);
    assert.match(explain, /KIND:\s+Widget/);
    assert.match(explain, /replicas\s+<integer>\n\s+how many/);
    assert.equal((await k.ok(['scale', `widgets.${g}/kw`, '-n', ns, '--replicas=4'])).trim(), `widget.${g}/kw scaled`);
    const obj = await k.json(['get', `widgets.${g}`, 'kw', '-n', ns]);
    assert.equal(obj.spec.replicas, 4);
    const all = await k.ok(['get', 'all', '-n', ns]);
    assert.match(all, new RegExp(`widget\\.${g.replace(/\./g, '\\.')}/kw`));
    const gadgets = await k.ok(['get', 'gadgets', '-n', ns]);
    assert.match(gadgets, /kw/);
  });
});
