/**
 * Server-side apply (PATCH with application/apply-patch+yaml) over HTTP and with the real
 * `kubectl apply --server-side`: create by apply, no-op re-apply, removal of fields no longer
 * applied, shared ownership, conflicts (kube's 409 body), force, a Deployment's containers and
 * ports, the request checks, and server-side apply after client-side `kubectl apply`. Expected
 * bodies, managedFields and messages are what kube-apiserver 1.36 answered to the same requests.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, uniqueName } from '../helpers/capstan.js';
import { startKubectlEnv, type Kubectl } from './kubectl.js';
import type { SuiteServer } from '../helpers/suite-target.js';

let srv: SuiteServer;
let k: Kubectl;
let ns: string;
const dir = mkdtempSync(join(tmpdir(), 'capstan-ssa-'));

before(async () => {
  ({ srv, k, ns } = await startKubectlEnv('ssa'));
});

after(async () => {
  await srv.stop();
});

type Obj = Record<string, any>;

const APPLY = 'application/apply-patch+yaml';

function apply(path: string, body: string | Obj, query = 'fieldManager=m1'): ReturnType<typeof api> {
  return api(srv.url, `${path}?${query}`, {
    method: 'PATCH',
    headers: { 'content-type': APPLY },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const cmPath = (name: string): string => `/api/v1/namespaces/${ns}/configmaps/${name}`;

/** managedFields with each entry's time replaced by whether it has one. */
function entries(obj: Obj): Obj[] {
  const mf = (obj.metadata?.managedFields ?? []) as Obj[];
  return mf.map((e) => {
    const { time, ...rest } = e;
    if (time !== undefined) assert.match(String(time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    return { ...rest, timed: time !== undefined };
  });
}

function cm(name: string, data: Record<string, string>, labels?: Record<string, string>): Obj {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) }, data };
}

describe('apply to a ConfigMap over HTTP', () => {
  const name = uniqueName('cm');
  let rv = '';

  test('creates the object with an Apply entry owning exactly the applied fields (201)', async () => {
    const r = await apply(cmPath(name), cm(name, { a: '1', b: '2' }, { x: 'y' }));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.body.data, { a: '1', b: '2' });
    assert.deepEqual(r.body.metadata.labels, { x: 'y' });
    assert.equal(r.body.metadata.namespace, ns);
    assert.equal(
      JSON.stringify(entries(r.body)),
      JSON.stringify([
        {
          manager: 'm1',
          operation: 'Apply',
          apiVersion: 'v1',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:x': {} } } },
          timed: true,
        },
      ]),
    );
    rv = r.body.metadata.resourceVersion as string;
  });

  test('re-applying the same configuration changes nothing: same resourceVersion and entry', async () => {
    const before = await api(srv.url, cmPath(name));
    const r = await apply(cmPath(name), cm(name, { a: '1', b: '2' }, { x: 'y' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.metadata.resourceVersion, rv);
    assert.deepEqual(r.body.metadata.managedFields, before.body.metadata.managedFields);
  });

  test('fields applied before and no longer applied are removed', async () => {
    const r = await apply(cmPath(name), cm(name, { a: '1' }));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.data, { a: '1' });
    assert.equal(r.body.metadata.labels, undefined);
    assert.deepEqual(entries(r.body), [
      { manager: 'm1', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } }, timed: true },
    ]);
    assert.notEqual(r.body.metadata.resourceVersion, rv);
  });

  test('a second manager applying the same value shares the field (its entry without time, as kube)', async () => {
    const r = await apply(cmPath(name), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n`, 'fieldManager=m2');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.data, { a: '1' });
    assert.deepEqual(entries(r.body), [
      { manager: 'm2', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } }, timed: false },
      { manager: 'm1', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } }, timed: true },
    ]);
  });

  test('a different value for a field another manager owns is a 409 conflict', async () => {
    const r = await apply(cmPath(name), cm(name, { a: '2' }), 'fieldManager=m2');
    assert.equal(r.status, 409, r.text);
    assert.deepEqual(r.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "m1": .data.a',
      reason: 'Conflict',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "m1"', field: '.data.a' }] },
      code: 409,
    });
    const current = await api(srv.url, cmPath(name));
    assert.deepEqual(current.body.data, { a: '1' });
  });

  test('force=true takes the field: the other manager loses it (and its emptied entry)', async () => {
    const r = await apply(cmPath(name), cm(name, { a: '2' }), 'fieldManager=m2&force=true');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.data, { a: '2' });
    assert.deepEqual(entries(r.body), [
      { manager: 'm2', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } }, timed: true },
    ]);
  });

  test('an update by another manager is named with its version in the conflict', async () => {
    const put = await api(srv.url, `${cmPath(name)}?fieldManager=editor`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ data: { a: '3', c: '3' } }),
    });
    assert.equal(put.status, 200, put.text);
    const r = await apply(cmPath(name), cm(name, { a: '4', c: '4' }), 'fieldManager=m2');
    assert.equal(r.status, 409, r.text);
    assert.equal(r.body.message, 'Apply failed with 2 conflicts: conflicts with "editor" using v1:\n- .data.a\n- .data.c');
    assert.deepEqual(r.body.details, {
      causes: [
        { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.a' },
        { reason: 'FieldManagerConflict', message: 'conflict with "editor" using v1', field: '.data.c' },
      ],
    });
  });

  test('an existing object is not moved to another namespace', async () => {
    const r = await apply(
      cmPath(name),
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'other' }, data: { a: '4' } },
      'fieldManager=m2&force=true',
    );
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.message, 'the namespace of the provided object does not match the namespace sent on the request');
  });
});

describe('apply request checks', () => {
  test('repeated keys: Strict refuses them after the apply, Warn warns and the last one wins', async () => {
    const name = uniqueName('dup');
    const body = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  a: "1"\n  a: "2"\n`;
    const strict = await apply(cmPath(name), body, 'fieldManager=m1&fieldValidation=Strict');
    assert.equal(strict.status, 400, strict.text);
    assert.equal(
      strict.body.message,
      'error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in map',
    );
    assert.equal((await api(srv.url, cmPath(name))).status, 404);
    const warn = await apply(cmPath(name), body, 'fieldManager=m1&fieldValidation=Warn');
    assert.equal(warn.status, 201, warn.text);
    assert.equal(warn.headers.get('warning'), '299 - "line 7: key \\"a\\" already set in map"');
    assert.deepEqual(warn.body.data, { a: '2' });
  });

  test("a field the kind does not declare or a value of the wrong type is a 400 with kube's message (kube answers 500)", async () => {
    const name = uniqueName('typed');
    const path = `/apis/apps/v1/namespaces/${ns}/deployments/${name}`;
    const unknown = await apply(path, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name }, spec: { foo: 1 } });
    assert.deepEqual(unknown.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `failed to create typed patch object (/${name}; apps/v1, Kind=Deployment): .spec.foo: field not declared in schema`,
      reason: 'BadRequest',
      code: 400,
    });
    const wrong = await apply(cmPath(name), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 5 } });
    assert.equal(wrong.status, 400, wrong.text);
    assert.match(wrong.body.message as string, new RegExp(`^failed to create typed patch object \\(/${name}; /v1, Kind=ConfigMap\\): `));
    assert.equal((await api(srv.url, cmPath(name))).status, 404);
  });

  const name = uniqueName('chk');
  const status = (code: number, reason: string, message: string): Obj => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  });

  test('fieldManager is required (422 on PatchOptions)', async () => {
    const r = await apply(cmPath(name), cm(name, {}), '');
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.body, {
      ...status(422, 'Invalid', 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch'),
      details: {
        group: 'meta.k8s.io',
        kind: 'PatchOptions',
        causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }],
      },
    });
  });

  test('the applied object must be of the request kind and version', async () => {
    const kind = await apply(cmPath(name), `apiVersion: v1\nkind: Foo\nmetadata:\n  name: ${name}\n`);
    assert.deepEqual(kind.body, status(400, 'BadRequest', 'invalid object type: /v1, Kind=Foo'));
    const version = await apply(cmPath(name), `apiVersion: v2\nkind: ConfigMap\nmetadata:\n  name: ${name}\n`);
    assert.deepEqual(version.body, status(400, 'BadRequest', 'invalid object type: /v2, Kind=ConfigMap'));
    const none = await apply(cmPath(name), `kind: ConfigMap\nmetadata:\n  name: ${name}\n`);
    assert.deepEqual(none.body, status(400, 'BadRequest', 'invalid object type: /, Kind=ConfigMap'));
  });

  test('managedFields may not be applied; names must match; YAML must read', async () => {
    const mf = await apply(cmPath(name), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  managedFields: []\n`);
    assert.deepEqual(mf.body, status(400, 'BadRequest', 'metadata.managedFields must be nil'));
    const other = await apply(cmPath(name), cm('other', {}));
    assert.deepEqual(other.body, status(400, 'BadRequest', `the name of the object (other) does not match the name on the URL (${name})`));
    const elsewhere = await apply(cmPath(name), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'other' } });
    assert.deepEqual(elsewhere.body, status(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request'));
    const unnamed = await apply(cmPath(name), { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} });
    assert.deepEqual(unnamed.body, status(400, 'BadRequest', `the name of the object (${name} based on URL) was undeterminable: name must be provided`));
    const list = await apply(cmPath(name), '- a\n');
    assert.deepEqual(
      list.body,
      status(
        400,
        'BadRequest',
        'error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type map[string]interface {}',
      ),
    );
    // The syntax error's own words come from the shared YAML reader, not go-yaml.
    const yaml = await apply(cmPath(name), `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata: [1\n`);
    assert.equal(yaml.status, 400, yaml.text);
    assert.match(yaml.body.message as string, /^error decoding YAML: error converting YAML to JSON: yaml: line \d+: /);
    assert.equal((await api(srv.url, cmPath(name))).status, 404);
  });
});

function deployment(name: string, replicas: number, containers: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels: {app: web}
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
${containers}`;
}

describe('kubectl apply --server-side', () => {
  const name = uniqueName('web');
  const file = join(dir, 'deploy.yaml');
  const get = async (): Promise<Obj> => (await k.json(['get', 'deployment', name, '-n', ns, '--show-managed-fields'])) as Obj;

  test('creates a Deployment: containers keyed by name, ports by containerPort and protocol', async () => {
    writeFileSync(
      file,
      deployment(
        name,
        2,
        `      - name: nginx
        image: nginx:1
        ports:
        - containerPort: 80
        - containerPort: 53
          protocol: UDP
`,
      ),
    );
    assert.equal((await k.ok(['apply', '--server-side', '-n', ns, '-f', file])).trim(), `deployment.apps/${name} serverside-applied`);
    const d = await get();
    assert.deepEqual(entries(d), [
      {
        apiVersion: 'apps/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"nginx"}': {
                    '.': {},
                    'f:image': {},
                    'f:name': {},
                    'f:ports': {
                      'k:{"containerPort":53,"protocol":"UDP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
                      'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} },
                    },
                  },
                },
              },
            },
          },
        },
        manager: 'kubectl',
        operation: 'Apply',
        timed: true,
      },
    ]);
    assert.deepEqual(d.spec.template.spec.containers[0].ports, [
      { containerPort: 80, protocol: 'TCP' },
      { containerPort: 53, protocol: 'UDP' },
    ]);
    assert.equal(d.spec.replicas, 2);
    assert.equal(d.spec.strategy.type, 'RollingUpdate');
  });

  test('a new container and a removed port: the list merges by key, the dropped port goes', async () => {
    writeFileSync(
      file,
      deployment(
        name,
        2,
        `      - name: side
        image: busybox
      - name: nginx
        image: nginx:2
        ports:
        - containerPort: 80
`,
      ),
    );
    await k.ok(['apply', '--server-side', '-n', ns, '-f', file]);
    const d = await get();
    const containers = (d.spec.template.spec.containers as Obj[]).map((c) => [c.name, c.image, c.ports]);
    assert.deepEqual(containers, [
      ['side', 'busybox', undefined],
      ['nginx', 'nginx:2', [{ containerPort: 80, protocol: 'TCP' }]],
    ]);
    const owned = entries(d)[0]?.fieldsV1['f:spec']['f:template']['f:spec']['f:containers'] as Obj;
    assert.deepEqual(Object.keys(owned), ['k:{"name":"nginx"}', 'k:{"name":"side"}']);
    assert.deepEqual(owned['k:{"name":"nginx"}']['f:ports'], { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } });
  });

  test('replicas changed through scale conflict; --force-conflicts takes them back', async () => {
    await k.ok(['scale', 'deployment', name, '-n', ns, '--replicas=3']);
    const r = await k.run(['apply', '--server-side', '-n', ns, '-f', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: Apply failed with 1 conflict: conflict with "kubectl" with subresource "scale" using apps\/v1: \.spec\.replicas\n/);
    assert.equal((await get()).spec.replicas, 3);
    await k.ok(['apply', '--server-side', '--force-conflicts', '-n', ns, '-f', file]);
    const d = await get();
    assert.equal(d.spec.replicas, 2);
    assert.deepEqual(
      entries(d).map((e) => [e.manager, e.operation, e.subresource]),
      [['kubectl', 'Apply', undefined]],
    );
  });
});

describe('kubectl apply --server-side after client-side kubectl apply', () => {
  test("kubectl's migration to server-side apply; the last-applied annotation follows later applies", async () => {
    const name = uniqueName('csa');
    const file = join(dir, `${name}.yaml`);
    const manifest = (b: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\ndata:\n  a: "1"\n  b: "${b}"\n`;
    const get = async (): Promise<Obj> => (await k.json(['get', 'configmap', name, '-n', ns, '--show-managed-fields'])) as Obj;
    writeFileSync(file, manifest('2'));
    await k.ok(['apply', '-f', file]);
    await k.ok(['apply', '--server-side', '-f', file]);
    const last = (b: string): string =>
      `{"apiVersion":"v1","data":{"a":"1","b":"${b}"},"kind":"ConfigMap","metadata":{"name":"${name}","namespace":"${ns}"}}\n`;
    let c = await get();
    assert.deepEqual(entries(c), [
      { apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {}, 'f:b': {} } }, manager: 'kubectl', operation: 'Apply', timed: false },
      {
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:kubectl.kubernetes.io/last-applied-configuration': {} } } },
        manager: 'kubectl-last-applied',
        operation: 'Apply',
        timed: false,
      },
    ]);
    assert.equal(c.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], last('2'));
    writeFileSync(file, manifest('3'));
    await k.ok(['apply', '--server-side', '-f', file]);
    c = await get();
    assert.deepEqual(c.data, { a: '1', b: '3' });
    assert.deepEqual(
      entries(c).map((e) => [e.manager, e.timed]),
      [
        ['kubectl-last-applied', false],
        ['kubectl', true],
      ],
    );
    assert.equal(c.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], last('3'));
  });
});
