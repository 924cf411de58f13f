/**
 * kubectl basics against one Capstan server: create, get and list in every output form, label and
 * field selectors, label and annotate, short names.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { uniqueName } from '../helpers/capstan.js';
import { startKubectlEnv, type Kubectl } from './kubectl.js';
import type { SuiteServer } from '../helpers/suite-target.js';

let srv: SuiteServer;
let k: Kubectl;
let ns: string;

function configMap(name: string, labels: Record<string, string> = {}, data: Record<string, string> = { k: 'v' }): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data });
}

before(async () => {
  ({ srv, k, ns } = await startKubectlEnv('basics'));
});

after(async () => {
  await srv.stop();
});

describe('kubectl create and get', { concurrency: true }, () => {
  test('create -f from YAML, then get -o json / yaml / name', async () => {
    const name = uniqueName('cm');
    const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    app: demo\ndata:\n  greeting: hello\n`;
    const out = await k.ok(['create', '-n', ns, '-f', '-'], { input: yaml });
    assert.equal(out.trim(), `configmap/${name} created`);

    const [asJson, asYaml, asName] = await Promise.all([
      k.json(['get', 'configmap', name, '-n', ns]),
      k.ok(['get', 'configmap', name, '-n', ns, '-o', 'yaml']),
      k.ok(['get', 'configmap', name, '-n', ns, '-o', 'name']),
    ]);
    assert.equal(asJson.kind, 'ConfigMap');
    assert.equal(asJson.apiVersion, 'v1');
    assert.equal(asJson.metadata.name, name);
    assert.equal(asJson.metadata.namespace, ns);
    assert.deepEqual(asJson.metadata.labels, { app: 'demo' });
    assert.deepEqual(asJson.data, { greeting: 'hello' });
    assert.match(asJson.metadata.uid, /^[0-9a-f-]{36}$/);
    assert.match(asJson.metadata.resourceVersion, /^[1-9]\d*$/);
    assert.match(asJson.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(asYaml, /^apiVersion: v1\n/m);
    assert.match(asYaml, /^kind: ConfigMap$/m);
    assert.match(asYaml, new RegExp(`^  name: ${name}$`, 'm'));
    assert.match(asYaml, /^  greeting: hello$/m);
    assert.equal(asName.trim(), `configmap/${name}`);
  });

  test('create of an existing name fails with AlreadyExists', async () => {
    const name = uniqueName('dup');
    await k.ok(['create', '-n', ns, '-f', '-'], { input: configMap(name) });
    const again = await k.run(['create', '-n', ns, '-f', '-'], { input: configMap(name) });
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, new RegExp(`\\(AlreadyExists\\).*configmaps "${name}" already exists`));
  });

  test('get of a missing object reports NotFound', async () => {
    const r = await k.run(['get', 'configmap', 'does-not-exist', '-n', ns]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(NotFound\): configmaps "does-not-exist" not found/);
  });

  test('default table output lists the object by name', async () => {
    const name = uniqueName('tbl');
    await k.ok(['create', '-n', ns, '-f', '-'], { input: configMap(name) });
    const out = await k.ok(['get', 'configmaps', '-n', ns]);
    const lines = out.trim().split('\n');
    assert.match(lines[0] ?? '', /^NAME\s/);
    assert.ok(
      lines.some((l) => l.startsWith(`${name} `)),
      out,
    );
  });

  test('get across all namespaces (-A) includes the namespace column', async () => {
    const out = await k.ok(['get', 'services', '-A']);
    assert.match(out, /^NAMESPACE\s+NAME/);
    assert.match(out, /^default\s+kubernetes\s/m);
  });

  test('typed generator: kubectl create configmap (protobuf body)', async () => {
    const name = uniqueName('gen');
    const out = await k.ok(['create', 'configmap', name, '-n', ns, '--from-literal=a=1', '--from-literal=b=2']);
    assert.equal(out.trim(), `configmap/${name} created`);
    const got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.deepEqual(got.data, { a: '1', b: '2' });
  });

  test('typed generator: kubectl create deployment and namespace (protobuf body)', async () => {
    const name = uniqueName('gendep');
    const nsName = uniqueName('genns');
    assert.equal((await k.ok(['create', 'deployment', name, '-n', ns, '--image=nginx', '--replicas=2'])).trim(), `deployment.apps/${name} created`);
    assert.equal((await k.ok(['create', 'namespace', nsName])).trim(), `namespace/${nsName} created`);
    const dep = await k.json(['get', 'deploy', name, '-n', ns]);
    assert.equal(dep.spec.replicas, 2);
    assert.equal(dep.metadata.generation, 1);
  });
});

describe('selectors', () => {
  const prefix = uniqueName('sel');
  const objs: Array<[string, Record<string, string>]> = [
    [`${prefix}-a`, { env: 'prod', tier: 'web', [prefix]: 'x' }],
    [`${prefix}-b`, { env: 'dev', tier: 'web', [prefix]: 'x' }],
    [`${prefix}-c`, { env: 'qa', [prefix]: 'x' }],
    [`${prefix}-d`, { [prefix]: 'x' }],
  ];

  before(async () => {
    const list = { apiVersion: 'v1', kind: 'List', items: objs.map(([n, l]) => JSON.parse(configMap(n, l)) as unknown) };
    await k.ok(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(list) });
  });

  const cases: Array<[string, string[]]> = [
    ['env=prod', ['a']],
    ['env==prod', ['a']],
    ['env!=prod', ['b', 'c', 'd']],
    ['env in (prod,dev)', ['a', 'b']],
    ['env notin (prod,dev)', ['c', 'd']],
    ['env', ['a', 'b', 'c']],
    ['!env', ['d']],
    ['tier=web,env!=dev', ['a']],
    ['env,!tier', ['c']],
  ];
  test('label selectors with =, ==, !=, in, notin, exists and !', async () => {
    const results = await Promise.all(cases.map(async ([sel]) => k.ok(['get', 'cm', '-n', ns, '-o', 'name', '-l', `${prefix}=x,${sel}`])));
    cases.forEach(([sel, want], i) => {
      const got = (results[i] ?? '')
        .trim()
        .split('\n')
        .filter((l) => l !== '');
      assert.deepEqual(
        got,
        want.map((s) => `configmap/${prefix}-${s}`),
        `selector ${sel}`,
      );
    });
  });

  test('a selector matching nothing prints "No resources found"', async () => {
    const r = await k.run(['get', 'cm', '-n', ns, '-l', `${prefix}=nothing`]);
    assert.equal(r.code, 0);
    assert.match(r.stderr, new RegExp(`No resources found in ${ns} namespace`));
  });

  test('field selector metadata.name and metadata.namespace', async () => {
    const [byName, byNs, byNot] = await Promise.all([
      k.ok(['get', 'cm', '-n', ns, '-o', 'name', '--field-selector', `metadata.name=${prefix}-b`]),
      k.ok(['get', 'cm', '-A', '-o', 'name', '--field-selector', `metadata.namespace=${ns},metadata.name=${prefix}-c`]),
      k.ok(['get', 'cm', '-n', ns, '-o', 'name', '-l', `${prefix}=x`, '--field-selector', `metadata.name!=${prefix}-a`]),
    ]);
    assert.equal(byName.trim(), `configmap/${prefix}-b`);
    assert.equal(byNs.trim(), `configmap/${prefix}-c`);
    assert.deepEqual(
      byNot.trim().split('\n'),
      ['b', 'c', 'd'].map((s) => `configmap/${prefix}-${s}`),
    );
  });

  test("an unsupported field selector is rejected with kube's message", async () => {
    const r = await k.run(['get', 'cm', '-n', ns, '--field-selector', 'spec.foo=bar']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /\(BadRequest\).*"spec\.foo" is not a known field selector: only "metadata\.name", "metadata\.namespace"/);
  });
});

describe('label and annotate', { concurrency: true }, () => {
  test('kubectl label adds, refuses to overwrite without --overwrite, overwrites, removes', async () => {
    const name = uniqueName('lbl');
    await k.ok(['create', '-n', ns, '-f', '-'], { input: configMap(name, { keep: 'yes' }) });
    assert.equal((await k.ok(['label', 'cm', name, '-n', ns, 'color=red'])).trim(), `configmap/${name} labeled`);
    let got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.deepEqual(got.metadata.labels, { keep: 'yes', color: 'red' });

    const refused = await k.run(['label', 'cm', name, '-n', ns, 'color=blue']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /'color' already has a value \(red\), and --overwrite is false/);

    await k.ok(['label', 'cm', name, '-n', ns, 'color=blue', '--overwrite']);
    got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.equal(got.metadata.labels.color, 'blue');

    assert.equal((await k.ok(['label', 'cm', name, '-n', ns, 'color-'])).trim(), `configmap/${name} unlabeled`);
    got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.deepEqual(got.metadata.labels, { keep: 'yes' });
  });

  test('kubectl annotate adds, --overwrite replaces, key- removes', async () => {
    const name = uniqueName('ann');
    await k.ok(['create', '-n', ns, '-f', '-'], { input: configMap(name) });
    assert.equal((await k.ok(['annotate', 'cm', name, '-n', ns, 'note=first', 'other=1'])).trim(), `configmap/${name} annotated`);
    let got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.equal(got.metadata.annotations.note, 'first');
    assert.equal(got.metadata.annotations.other, '1');

    const refused = await k.run(['annotate', 'cm', name, '-n', ns, 'note=second']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /--overwrite is false/);

    await k.ok(['annotate', 'cm', name, '-n', ns, 'note=second', '--overwrite']);
    got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.equal(got.metadata.annotations.note, 'second');

    await k.ok(['annotate', 'cm', name, '-n', ns, 'note-']);
    got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.deepEqual(got.metadata.annotations, { other: '1' });
  });

  test('label many objects at once with -l', async () => {
    const tag = uniqueName('bulk');
    const list = { apiVersion: 'v1', kind: 'List', items: [1, 2, 3].map((i) => JSON.parse(configMap(`${tag}-${i}`, { bulk: tag })) as unknown) };
    await k.ok(['create', '-n', ns, '-f', '-'], { input: JSON.stringify(list) });
    const out = await k.ok(['label', 'cm', '-n', ns, '-l', `bulk=${tag}`, 'stage=two']);
    assert.equal(out.trim().split('\n').length, 3, out);
    const names = await k.ok(['get', 'cm', '-n', ns, '-o', 'name', '-l', `bulk=${tag},stage=two`]);
    assert.equal(names.trim().split('\n').length, 3);
  });
});

describe('short names', { concurrency: true }, () => {
  test('po, deploy, cm, ns, svc resolve to their resources', async () => {
    const [po, deploy, cm, nsOut, svc] = await Promise.all([
      k.run(['get', 'po', '-n', ns]),
      k.run(['get', 'deploy', '-n', ns, '-o', 'name']),
      k.run(['get', 'cm', '-n', ns, '-o', 'name']),
      k.ok(['get', 'ns', 'default', 'kube-system', '-o', 'name']),
      k.ok(['get', 'svc', 'kubernetes', '-n', 'default', '-o', 'name']),
    ]);
    assert.equal(po.code, 0, po.stderr);
    assert.equal(deploy.code, 0, deploy.stderr);
    assert.equal(cm.code, 0, cm.stderr);
    assert.equal(nsOut.trim(), 'namespace/default\nnamespace/kube-system');
    assert.equal(svc.trim(), 'service/kubernetes');
  });

  test('several types in one get', async () => {
    const out = await k.ok(['get', 'svc,ns', '-o', 'name', '-n', 'default']);
    assert.match(out, /^service\/kubernetes$/m);
    assert.match(out, /^namespace\/default$/m);
  });

  test('an unknown resource type is reported by kubectl', async () => {
    const r = await k.run(['get', 'flurbs']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /the server doesn't have a resource type "flurbs"/);
  });
});
