/**
 * Discovery and OpenAPI as kubectl uses them: api-resources, api-versions, short names, get all,
 * explain; plus the documents themselves (legacy and aggregated discovery, OpenAPI v2 JSON and
 * protobuf, OpenAPI v3 with fieldValidation on writes).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { kubectlFor, type Kubectl } from './kubectl.js';
import { restFor, type Rest } from './rest.js';

let srv: TestServer;
let k: Kubectl;
let rest: Rest;

before(async () => {
  srv = await startTestServer();
  k = kubectlFor(srv.kubeconfig);
  rest = restFor(srv.url);
});

after(async () => {
  await srv.stop();
});

function rows(out: string): string[][] {
  return out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/));
}

describe('kubectl discovery commands', { concurrency: true }, () => {
  test('api-resources lists core and group resources with short names, scope and kind', async () => {
    const out = await k.ok(['api-resources', '--no-headers']);
    const byName = new Map<string, string[]>();
    for (const r of rows(out)) byName.set(`${r[0]}|${r.length === 5 ? r[2] : r[1]}`, r);
    const expect: Array<[string, string, string, string, string]> = [
      ['pods', 'po', 'v1', 'true', 'Pod'],
      ['configmaps', 'cm', 'v1', 'true', 'ConfigMap'],
      ['namespaces', 'ns', 'v1', 'false', 'Namespace'],
      ['services', 'svc', 'v1', 'true', 'Service'],
      ['nodes', 'no', 'v1', 'false', 'Node'],
      ['deployments', 'deploy', 'apps/v1', 'true', 'Deployment'],
      ['statefulsets', 'sts', 'apps/v1', 'true', 'StatefulSet'],
      ['cronjobs', 'cj', 'batch/v1', 'true', 'CronJob'],
      ['customresourcedefinitions', 'crd,crds', 'apiextensions.k8s.io/v1', 'false', 'CustomResourceDefinition'],
    ];
    for (const [name, short, version, namespaced, kind] of expect) {
      assert.deepEqual(byName.get(`${name}|${version}`), [name, short, version, namespaced, kind], `${name} in ${out.slice(0, 0)}`);
    }
    assert.deepEqual(byName.get('jobs|batch/v1'), ['jobs', 'batch/v1', 'true', 'Job']);
  });

  test('api-resources -o wide shows verbs and categories', async () => {
    const out = await k.ok(['api-resources', '-o', 'wide', '--api-group=apps', '--no-headers']);
    const deploy = rows(out).find((r) => r[0] === 'deployments');
    assert.deepEqual(deploy, ['deployments', 'deploy', 'apps/v1', 'true', 'Deployment', 'create,delete,deletecollection,get,list,patch,update,watch', 'all']);
    const ns = rows(await k.ok(['api-resources', '-o', 'wide', '--no-headers', '--api-group='])).find((r) => r[0] === 'namespaces');
    assert.deepEqual(ns, ['namespaces', 'ns', 'v1', 'false', 'Namespace', 'create,delete,get,list,patch,update,watch']);
  });

  test('api-resources filters: --namespaced=false and --verbs', async () => {
    const cluster = rows(await k.ok(['api-resources', '--namespaced=false', '-o', 'name']));
    const names = cluster.map((r) => r[0]);
    assert.ok(names.includes('namespaces'));
    assert.ok(names.includes('nodes'));
    assert.ok(names.includes('clusterroles.rbac.authorization.k8s.io'));
    assert.ok(!names.includes('pods'));
    const watchable = rows(await k.ok(['api-resources', '--verbs=deletecollection', '-o', 'name'])).map((r) => r[0]);
    assert.ok(watchable.includes('configmaps'));
    assert.ok(!watchable.includes('namespaces'));
  });

  test('api-versions lists v1 and the GA groups', async () => {
    const versions = (await k.ok(['api-versions'])).trim().split('\n');
    for (const v of [
      'v1',
      'apps/v1',
      'batch/v1',
      'autoscaling/v1',
      'autoscaling/v2',
      'rbac.authorization.k8s.io/v1',
      'networking.k8s.io/v1',
      'policy/v1',
      'storage.k8s.io/v1',
      'coordination.k8s.io/v1',
      'apiextensions.k8s.io/v1',
      'admissionregistration.k8s.io/v1',
      'certificates.k8s.io/v1',
      'discovery.k8s.io/v1',
      'events.k8s.io/v1',
      'scheduling.k8s.io/v1',
      'node.k8s.io/v1',
    ]) {
      assert.ok(versions.includes(v), `${v} in ${versions.join(' ')}`);
    }
    assert.deepEqual([...versions].sort(), versions, 'sorted');
  });

  test('short names and categories resolve in kubectl get', async () => {
    const ns = await rest.namespace('short');
    await rest.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    });
    await rest.create(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'conf' } });
    const [deploy, cm, both] = await Promise.all([
      k.ok(['get', 'deploy', '-n', ns, '-o', 'name']),
      k.ok(['get', 'cm', '-n', ns, '-o', 'name']),
      k.ok(['get', 'deploy,cm', '-n', ns, '-o', 'name']),
    ]);
    assert.equal(deploy.trim(), 'deployment.apps/web');
    assert.equal(cm.trim(), 'configmap/conf');
    assert.deepEqual(both.trim().split('\n'), ['deployment.apps/web', 'configmap/conf']);
  });

  test('kubectl get all covers the "all" category', async () => {
    const ns = await rest.namespace('all');
    await rest.create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    });
    await rest.create(`/api/v1/namespaces/${ns}/services`, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'svc' }, spec: { ports: [{ port: 80 }] } });
    await rest.create(`/api/v1/namespaces/${ns}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'not-in-all' } });
    const out = await k.ok(['get', 'all', '-n', ns, '-o', 'name']);
    const names = out.trim().split('\n').sort();
    assert.deepEqual(names, ['deployment.apps/web', 'service/svc']);
    const def = await k.ok(['get', 'all', '-n', 'default']);
    assert.match(def, /service\/kubernetes/);
  });

  test('kubectl explain deployment.spec.replicas', async () => {
    const out = await k.ok(['explain', 'deployment.spec.replicas']);
    assert.match(out, /^GROUP:\s+apps$/m);
    assert.match(out, /^KIND:\s+Deployment$/m);
    assert.match(out, /^VERSION:\s+v1$/m);
    assert.match(out, /^FIELD: replicas <integer>$/m);
  });

  test('kubectl explain lists the fields of a type', async () => {
    const out = await k.ok(['explain', 'pods.spec']);
    assert.match(out, /^KIND:\s+Pod$/m);
    assert.match(out, /^FIELD: spec <PodSpec>$/m);
    assert.match(out, /^\s+containers\s+<\[\]Container> -required-$/m);
    assert.match(out, /^\s+nodeName\s+<string>$/m);
  });

  test('kubectl explain --recursive and --api-version', async () => {
    const out = await k.ok(['explain', 'cronjobs.spec.jobTemplate.spec.template.spec.containers.ports', '--api-version=batch/v1']);
    assert.match(out, /^FIELD: ports <\[\]ContainerPort>$/m);
    assert.match(out, /containerPort\s+<integer> -required-/);
    const rec = await k.ok(['explain', 'configmap', '--recursive']);
    assert.match(rec, /^\s+binaryData\s+<map\[string\]string>$/m);
    assert.match(rec, /^\s+data\s+<map\[string\]string>$/m);
  });

  test('kubectl explain of an unknown field fails', async () => {
    const r = await k.run(['explain', 'deployment.spec.nothing']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /field "nothing" does not exist/);
  });
});

describe('kubectl writes with default (strict) field validation', { concurrency: true }, () => {
  test('kubectl apply and create with default validation succeed for a valid manifest', async () => {
    const ns = await rest.namespace('valid');
    const name = uniqueName('v');
    const manifest = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });
    assert.equal((await k.ok(['apply', '-n', ns, '-f', '-'], { input: manifest })).trim(), `configmap/${name} created`);
    const name2 = uniqueName('v');
    assert.equal(
      (await k.ok(['create', '-n', ns, '--validate=true', '-f', '-'], { input: manifest.replace(name, name2) })).trim(),
      `configmap/${name2} created`,
    );
  });

  test('an unknown field is rejected by kubectl apply (fieldValidation=Strict)', async () => {
    const ns = await rest.namespace('strict');
    const name = uniqueName('u');
    const r = await k.run(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' }, bogusField: 1 }),
    });
    assert.notEqual(r.code, 0, r.stdout);
    assert.match(r.stderr, /Error from server \(BadRequest\).*strict decoding error: unknown field "bogusField"/);
    assert.equal((await rest.get(`/api/v1/namespaces/${ns}/configmaps/${name}`)).status, 404);
  });

  test('an unknown field is dropped, not stored, when validation is off', async () => {
    const ns = await rest.namespace('ignore');
    const name = uniqueName('i');
    const out = await k.ok(['create', '-n', ns, '--validate=false', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, bogusMeta: 1 }, data: { a: 'b' }, bogusField: 1 }),
    });
    assert.equal(out.trim(), `configmap/${name} created`);
    const got = await rest.get(`/api/v1/namespaces/${ns}/configmaps/${name}`);
    assert.equal(got.body.bogusField, undefined);
    assert.equal(got.body.metadata.bogusMeta, undefined);
    assert.deepEqual(got.body.data, { a: 'b' });
  });
});

describe('discovery documents', { concurrency: true }, () => {
  test('/version, /api, /apis and a group version', async () => {
    const version = await rest.get('/version');
    assert.equal(version.status, 200);
    assert.equal(version.body.major, '1');
    assert.match(version.body.minor, /^36/);
    assert.match(version.body.gitVersion, /^v1\.36\./);

    const apiVersions = await rest.get('/api');
    assert.equal(apiVersions.body.kind, 'APIVersions');
    assert.deepEqual(apiVersions.body.versions, ['v1']);

    const groups = await rest.get('/apis');
    assert.equal(groups.body.kind, 'APIGroupList');
    const apps = (groups.body.groups as any[]).find((g) => g.name === 'apps');
    assert.deepEqual(apps.preferredVersion, { groupVersion: 'apps/v1', version: 'v1' });

    const list = await rest.get('/apis/apps/v1');
    assert.equal(list.body.kind, 'APIResourceList');
    assert.equal(list.body.groupVersion, 'apps/v1');
    const byName = new Map((list.body.resources as any[]).map((r) => [r.name, r]));
    const d = byName.get('deployments');
    assert.equal(d.singularName, 'deployment');
    assert.equal(d.namespaced, true);
    assert.equal(d.kind, 'Deployment');
    assert.deepEqual(d.shortNames, ['deploy']);
    assert.deepEqual(d.categories, ['all']);
    assert.deepEqual([...d.verbs].sort(), ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);
    assert.equal(byName.get('deployments/status').kind, 'Deployment');
    assert.deepEqual(byName.get('deployments/scale'), { ...byName.get('deployments/scale'), kind: 'Scale', group: 'autoscaling', version: 'v1' });
  });

  test('aggregated discovery (apidiscovery.k8s.io/v2) when the Accept header asks for it', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';
    const r = await rest.get('/apis', { accept });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json;g=apidiscovery\.k8s\.io;v=v2;as=APIGroupDiscoveryList/);
    assert.equal(r.body.kind, 'APIGroupDiscoveryList');
    assert.equal(r.body.apiVersion, 'apidiscovery.k8s.io/v2');
    const apps = (r.body.items as any[]).find((g) => g.metadata.name === 'apps');
    const v1 = (apps.versions as any[]).find((v) => v.version === 'v1');
    const deploy = (v1.resources as any[]).find((x) => x.resource === 'deployments');
    assert.equal(deploy.scope, 'Namespaced');
    assert.deepEqual(deploy.responseKind, { group: '', version: '', kind: 'Deployment' });
    assert.ok((deploy.subresources as any[]).some((s) => s.subresource === 'scale' && s.responseKind.kind === 'Scale'));
    const core = await rest.get('/api', { accept });
    assert.equal(core.body.kind, 'APIGroupDiscoveryList');
    assert.equal(core.body.items[0].versions[0].version, 'v1');
    // Plain JSON without the parameters keeps the legacy documents.
    assert.equal((await rest.get('/apis')).body.kind, 'APIGroupList');
  });

  test('/openapi/v2 in JSON and in the protobuf form kubectl asks for', async () => {
    const json = await rest.get('/openapi/v2');
    assert.equal(json.status, 200);
    assert.equal(json.body.swagger, '2.0');
    assert.ok(json.body.definitions['io.k8s.api.apps.v1.Deployment']);
    assert.ok(json.body.paths['/apis/apps/v1/namespaces/{namespace}/deployments']);
    const res = await fetch(`${srv.url}/openapi/v2`, { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.ok(bytes.length > 100_000);
    assert.ok(bytes.includes(Buffer.from('io.k8s.api.apps.v1.Deployment')));
  });

  test('/openapi/v3 index and a group-version document with fieldValidation on writes', async () => {
    const index = await rest.get('/openapi/v3');
    assert.equal(index.status, 200);
    const entry = index.body.paths['apis/apps/v1'];
    assert.match(entry.serverRelativeURL, /^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]+$/);
    const doc = await rest.get(entry.serverRelativeURL as string);
    assert.equal(doc.status, 200);
    assert.match(doc.body.openapi, /^3\./);
    const post = doc.body.paths['/apis/apps/v1/namespaces/{namespace}/deployments'].post;
    assert.ok(
      (post.parameters as any[]).some((p) => p.name === 'fieldValidation'),
      'POST declares fieldValidation',
    );
    const patch = doc.body.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
    assert.ok(
      (patch.parameters as any[]).some((p) => p.name === 'fieldValidation'),
      'PATCH declares fieldValidation',
    );
    assert.ok(doc.body.components.schemas['io.k8s.api.apps.v1.Deployment']);
    const core = await rest.get(index.body.paths['api/v1'].serverRelativeURL as string);
    assert.ok(core.body.paths['/api/v1/namespaces/{namespace}/configmaps']);
  });
});
