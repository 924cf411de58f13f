/**
 * kubectl's write paths that patch: client-side apply, patch (json, merge, strategic), scale through
 * the scale subresource, and edit.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, uniqueName } from '../helpers/capstan.js';
import { startKubectlEnv, type Kubectl } from './kubectl.js';
import type { SuiteServer } from '../helpers/suite-target.js';

let srv: SuiteServer;
let k: Kubectl;
let ns: string;

before(async () => {
  ({ srv, k, ns } = await startKubectlEnv('apply'));
});

after(async () => {
  await srv.stop();
});

function deploymentYaml(name: string, replicas: number, image: string, extraEnv = ''): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels:
    app: ${name}
spec:
  replicas: ${replicas}
  selector:
    matchLabels:
      app: ${name}
  template:
    metadata:
      labels:
        app: ${name}
    spec:
      containers:
      - name: main
        image: ${image}
        env:
        - name: A
          value: "1"
${extraEnv}      - name: side
        image: busybox
`;
}

describe('kubectl apply', { concurrency: true }, () => {
  test('creates, then updates; records last-applied; unchanged apply keeps the resourceVersion', async () => {
    const name = uniqueName('app');
    const first = await k.ok(['apply', '-n', ns, '-f', '-'], { input: deploymentYaml(name, 1, 'nginx:1') });
    assert.equal(first.trim(), `deployment.apps/${name} created`);
    const created = await k.json(['get', 'deploy', name, '-n', ns]);
    const lastApplied = JSON.parse(created.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] as string);
    assert.equal(lastApplied.spec.replicas, 1);
    assert.equal(lastApplied.spec.template.spec.containers[0].image, 'nginx:1');
    assert.equal(created.metadata.generation, 1);

    const unchanged = await k.ok(['apply', '-n', ns, '-f', '-'], { input: deploymentYaml(name, 1, 'nginx:1') });
    assert.equal(unchanged.trim(), `deployment.apps/${name} unchanged`);
    const same = await k.json(['get', 'deploy', name, '-n', ns]);
    assert.equal(same.metadata.resourceVersion, created.metadata.resourceVersion);

    const second = await k.ok(['apply', '-n', ns, '-f', '-'], {
      input: deploymentYaml(name, 3, 'nginx:2', '        - name: B\n          value: "2"\n'),
    });
    assert.equal(second.trim(), `deployment.apps/${name} configured`);
    const updated = await k.json(['get', 'deploy', name, '-n', ns]);
    assert.equal(updated.spec.replicas, 3);
    assert.equal(updated.metadata.generation, 2);
    assert.ok(BigInt(updated.metadata.resourceVersion) > BigInt(created.metadata.resourceVersion));
    const containers = updated.spec.template.spec.containers as Array<{ name: string; image: string; env?: unknown }>;
    assert.deepEqual(
      containers.map((c) => [c.name, c.image]),
      [
        ['main', 'nginx:2'],
        ['side', 'busybox'],
      ],
    );
    assert.deepEqual(containers[0]?.env, [
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
    assert.equal(JSON.parse(updated.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'] as string).spec.replicas, 3);
  });

  test('three-way merge: a field dropped from the manifest is removed, fields set by others are kept', async () => {
    const name = uniqueName('three');
    const manifest = (data: Record<string, string>): string => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
    await k.ok(['apply', '-n', ns, '-f', '-'], { input: manifest({ a: '1', b: '2' }) });
    // Someone else adds a key and a label outside of apply.
    await k.ok(['patch', 'cm', name, '-n', ns, '--type=merge', '-p', '{"data":{"other":"x"},"metadata":{"labels":{"owner":"me"}}}']);
    await k.ok(['apply', '-n', ns, '-f', '-'], { input: manifest({ a: '10' }) });
    const got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.deepEqual(got.data, { a: '10', other: 'x' });
    assert.deepEqual(got.metadata.labels, { owner: 'me' });
  });

  test('apply of a multi-document YAML creates every object', async () => {
    const a = uniqueName('multi');
    const b = uniqueName('multi');
    const out = await k.ok(['apply', '-n', ns, '-f', '-'], {
      input: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${a}\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: ${b}\nstringData:\n  pw: s3cret\n`,
    });
    assert.deepEqual(out.trim().split('\n'), [`configmap/${a} created`, `secret/${b} created`]);
    const secret = await k.json(['get', 'secret', b, '-n', ns]);
    // stringData is folded into data (base64) and type defaults to Opaque, as kube decodes Secrets.
    assert.deepEqual(secret.data, { pw: Buffer.from('s3cret').toString('base64') });
    assert.equal(secret.stringData, undefined);
    assert.equal(secret.type, 'Opaque');
  });

  test('apply --dry-run=server does not store anything', async () => {
    const name = uniqueName('dry');
    const out = await k.ok(['apply', '-n', ns, '--dry-run=server', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }),
    });
    assert.equal(out.trim(), `configmap/${name} created (server dry run)`);
    const r = await k.run(['get', 'cm', name, '-n', ns]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /NotFound/);
  });
});

describe('kubectl patch', { concurrency: true }, () => {
  async function makeDeployment(): Promise<string> {
    const name = uniqueName('patch');
    await k.ok(['apply', '-n', ns, '-f', '-'], { input: deploymentYaml(name, 1, 'nginx:1') });
    return name;
  }

  test('--type=strategic (default) merges containers by name', async () => {
    const name = await makeDeployment();
    const out = await k.ok(['patch', 'deploy', name, '-n', ns, '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox:2"}]}}}}']);
    assert.equal(out.trim(), `deployment.apps/${name} patched`);
    const got = await k.json(['get', 'deploy', name, '-n', ns]);
    const containers = got.spec.template.spec.containers as Array<{ name: string; image: string }>;
    assert.deepEqual(
      containers.map((c) => [c.name, c.image]),
      [
        ['main', 'nginx:1'],
        ['side', 'busybox:2'],
      ],
    );
    assert.equal(got.metadata.generation, 2);
  });

  test('strategic $patch: delete removes one list element by merge key', async () => {
    const name = await makeDeployment();
    await k.ok([
      'patch',
      'deploy',
      name,
      '-n',
      ns,
      '--type=strategic',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}}',
    ]);
    const got = await k.json(['get', 'deploy', name, '-n', ns]);
    assert.deepEqual(
      (got.spec.template.spec.containers as Array<{ name: string }>).map((c) => c.name),
      ['main'],
    );
  });

  test('--type=merge replaces lists and deletes with null', async () => {
    const name = await makeDeployment();
    await k.ok([
      'patch',
      'deploy',
      name,
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"metadata":{"labels":{"app":null,"x":"y"}},"spec":{"template":{"spec":{"containers":[{"name":"only","image":"alpine"}]}}}}',
    ]);
    const got = await k.json(['get', 'deploy', name, '-n', ns]);
    assert.deepEqual(got.metadata.labels, { x: 'y' });
    assert.deepEqual(
      (got.spec.template.spec.containers as Array<{ name: string; image: string }>).map((c) => [c.name, c.image]),
      [['only', 'alpine']],
    );
  });

  test('--type=json applies RFC 6902 operations', async () => {
    const name = await makeDeployment();
    await k.ok([
      'patch',
      'deploy',
      name,
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/replicas","value":4},{"op":"add","path":"/metadata/labels/added","value":"yes"},{"op":"remove","path":"/spec/template/spec/containers/1"}]',
    ]);
    const got = await k.json(['get', 'deploy', name, '-n', ns]);
    assert.equal(got.spec.replicas, 4);
    assert.equal(got.metadata.labels.added, 'yes');
    assert.equal(got.spec.template.spec.containers.length, 1);
  });

  test('--type=json with a failing test operation is rejected and changes nothing', async () => {
    const name = await makeDeployment();
    const before = await k.json(['get', 'deploy', name, '-n', ns]);
    const r = await k.run([
      'patch',
      'deploy',
      name,
      '-n',
      ns,
      '--type=json',
      '-p',
      '[{"op":"test","path":"/spec/replicas","value":99},{"op":"replace","path":"/spec/replicas","value":5}]',
    ]);
    assert.notEqual(r.code, 0);
    // kube answers a failed operation with a generic 422 (no causes); kubectl prints it like this.
    assert.match(r.stderr, /The request is invalid: the server rejected our request due to an error in our request/);
    const after = await k.json(['get', 'deploy', name, '-n', ns]);
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(after.spec.replicas, 1);
  });

  test('a patch that changes nothing reports "no change"', async () => {
    const name = await makeDeployment();
    const out = await k.ok(['patch', 'deploy', name, '-n', ns, '--type=merge', '-p', '{"spec":{"replicas":1}}']);
    assert.equal(out.trim(), `deployment.apps/${name} patched (no change)`);
  });

  test('patch of a missing object is NotFound', async () => {
    const r = await k.run(['patch', 'cm', 'missing-one', '-n', ns, '-p', '{"data":{"a":"b"}}']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /\(NotFound\): configmaps "missing-one" not found/);
  });

  test('patch --subresource=status changes only status', async () => {
    const name = await makeDeployment();
    await k.ok(['patch', 'deploy', name, '-n', ns, '--subresource=status', '--type=merge', '-p', '{"status":{"replicas":7},"spec":{"replicas":9}}']);
    const got = await k.json(['get', 'deploy', name, '-n', ns]);
    assert.equal(got.status.replicas, 7);
    assert.equal(got.spec.replicas, 1);
  });
});

describe('kubectl scale', { concurrency: true }, () => {
  test('deployments, replicasets and statefulsets through the scale subresource', async () => {
    const d = uniqueName('sd');
    const rs = uniqueName('srs');
    const sts = uniqueName('ssts');
    const tmpl = (app: string): unknown => ({ metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const items = [
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: d }, spec: { replicas: 1, selector: { matchLabels: { app: d } }, template: tmpl(d) } },
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: rs }, spec: { replicas: 1, selector: { matchLabels: { app: rs } }, template: tmpl(rs) } },
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: sts },
        spec: { replicas: 1, serviceName: sts, selector: { matchLabels: { app: sts } }, template: tmpl(sts) },
      },
    ];
    await k.ok(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
    const outs = await Promise.all([
      k.ok(['scale', 'deployment', d, '-n', ns, '--replicas=3']),
      k.ok(['scale', 'replicaset', rs, '-n', ns, '--replicas=4']),
      k.ok(['scale', 'statefulset', sts, '-n', ns, '--replicas=5']),
    ]);
    assert.deepEqual(
      outs.map((o) => o.trim()),
      [`deployment.apps/${d} scaled`, `replicaset.apps/${rs} scaled`, `statefulset.apps/${sts} scaled`],
    );
    const [gd, grs, gsts] = await Promise.all([
      k.json(['get', 'deploy', d, '-n', ns]),
      k.json(['get', 'rs', rs, '-n', ns]),
      k.json(['get', 'sts', sts, '-n', ns]),
    ]);
    assert.equal(gd.spec.replicas, 3);
    assert.equal(grs.spec.replicas, 4);
    assert.equal(gsts.spec.replicas, 5);
    assert.equal(gd.metadata.generation, 2);

    const scale = await api(srv.url, `/apis/apps/v1/namespaces/${ns}/deployments/${d}/scale`);
    assert.equal(scale.status, 200);
    assert.equal(scale.body.kind, 'Scale');
    assert.equal(scale.body.apiVersion, 'autoscaling/v1');
    assert.equal(scale.body.spec.replicas, 3);
    assert.equal(scale.body.status.selector, `app=${d}`);
    assert.equal(scale.body.metadata.resourceVersion, gd.metadata.resourceVersion);
  });

  test('--current-replicas precondition mismatch fails', async () => {
    const d = uniqueName('scur');
    await k.ok(['apply', '-n', ns, '-f', '-'], { input: deploymentYaml(d, 2, 'nginx') });
    const r = await k.run(['scale', 'deployment', d, '-n', ns, '--current-replicas=5', '--replicas=1']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Expected replicas to be 5, was 2/);
    const ok = await k.ok(['scale', 'deployment', d, '-n', ns, '--current-replicas=2', '--replicas=1']);
    assert.equal(ok.trim(), `deployment.apps/${d} scaled`);
  });

  test('scale of a type without a scale subresource fails', async () => {
    const name = uniqueName('noscale');
    await k.ok(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }) });
    const r = await k.run(['scale', 'configmap', name, '-n', ns, '--replicas=2']);
    assert.notEqual(r.code, 0);
  });
});

describe('kubectl edit', () => {
  test('EDITOR rewrites the object and kubectl stores the edit', async () => {
    const name = uniqueName('edit');
    await k.ok(['apply', '-n', ns, '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { color: 'red', size: 'big' } }),
    });
    const dir = mkdtempSync(join(tmpdir(), 'capstan-editor-'));
    const editor = join(dir, 'editor.sh');
    writeFileSync(editor, "#!/bin/sh\nsed -i -e 's/color: red/color: green/' -e '/size: big/d' \"$1\"\n");
    chmodSync(editor, 0o755);
    const out = await k.ok(['edit', 'cm', name, '-n', ns], { env: { EDITOR: editor, KUBE_EDITOR: editor } });
    assert.equal(out.trim(), `configmap/${name} edited`);
    const got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.deepEqual(got.data, { color: 'green' });
  });

  test('an edit that changes nothing is cancelled', async () => {
    const name = uniqueName('noedit');
    await k.ok(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } }) });
    const r = await k.run(['edit', 'cm', name, '-n', ns], { env: { EDITOR: 'true', KUBE_EDITOR: 'true' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Edit cancelled, no changes made/);
  });

  test('an edit producing an invalid object is rejected by the server', async () => {
    const name = uniqueName('badedit');
    await k.ok(['apply', '-n', ns, '-f', '-'], { input: deploymentYaml(name, 1, 'nginx') });
    const dir = mkdtempSync(join(tmpdir(), 'capstan-editor-'));
    const editor = join(dir, 'editor.sh');
    const seen = join(dir, 'seen.yaml');
    // Labels must be valid: an invalid label value makes the server answer 422. kubectl then reopens
    // the editor with the server's causes as comments; the script records every file it is given.
    writeFileSync(editor, `#!/bin/sh\ncat "$1" >> ${seen}\nsed -i -e 's/^    app: ${name}$/    app: "bad value!"/' "$1"\n`);
    chmodSync(editor, 0o755);
    const r = await k.run(['edit', 'deploy', name, '-n', ns], { env: { EDITOR: editor, KUBE_EDITOR: editor } });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, new RegExp(`deployments.apps "${name}" is invalid`));
    const reopened = readFileSync(seen, 'utf8');
    assert.match(reopened, /# \* metadata\.labels: Invalid value: "bad value!"/);
  });
});
