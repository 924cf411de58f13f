/**
 * kubectl get -w (a long-running kubectl reading watch events) and kubectl delete (which waits for the
 * object to go by watching it), plus delete -l and --all.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestServer, uniqueName } from '../helpers/capstan.js';
import { suiteServer, type SuiteServer } from '../helpers/suite-target.js';
import { kubectlFor, type Kubectl } from './kubectl.js';

let srv: SuiteServer;
let k: Kubectl;
let ns: string;

const JSON_HEADERS = { 'content-type': 'application/json' };

function cm(name: string, extra: Record<string, unknown> = {}, data: Record<string, string> = {}): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data });
}

before(async () => {
  srv = await suiteServer(() => startTestServer());
  k = kubectlFor(srv.kubeconfig);
  ns = uniqueName('watch');
  const r = await api(srv.url, '/api/v1/namespaces', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ metadata: { name: ns } }) });
  assert.equal(r.status, 201, r.text);
});

after(async () => {
  await srv.stop();
});

describe('kubectl get -w', { concurrency: true }, () => {
  test('prints the initial list, then every add, update and delete in order', async () => {
    const wns = uniqueName('w');
    await api(srv.url, '/api/v1/namespaces', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ metadata: { name: wns } }) });
    await k.ok(['create', '-n', wns, '-f', '-'], { input: cm('pre', {}, { v: '0' }) });
    const w = k.spawn([
      'get',
      'configmaps',
      '-n',
      wns,
      '-w',
      '--output-watch-events',
      '-o',
      'jsonpath={.type} {.object.metadata.name} {.object.data.v}{"\\n"}',
    ]);
    try {
      await w.waitForLines(1);
      await k.ok(['create', '-n', wns, '-f', '-'], { input: cm('one', {}, { v: '1' }) });
      await w.waitForLines(2);
      await k.ok(['patch', 'cm', 'one', '-n', wns, '--type=merge', '-p', '{"data":{"v":"2"}}']);
      await w.waitForLines(3);
      await k.ok(['delete', 'cm', 'one', '-n', wns]);
      const lines = await w.waitForLines(4);
      assert.deepEqual(lines, ['ADDED pre 0', 'ADDED one 1', 'MODIFIED one 2', 'DELETED one 2']);
    } finally {
      await w.stop();
    }
  });

  test('table output of -w adds one row per change', async () => {
    const name = uniqueName('tw');
    await k.ok(['create', '-n', ns, '-f', '-'], { input: cm(name) });
    const w = k.spawn(['get', 'configmap', name, '-n', ns, '-w']);
    try {
      const first = await w.waitForLines(2);
      assert.match(first[0] ?? '', /^NAME\s/);
      assert.match(first[1] ?? '', new RegExp(`^${name}\\s`));
      await k.ok(['label', 'cm', name, '-n', ns, 'x=y']);
      const lines = await w.waitForLines(3);
      assert.match(lines[2] ?? '', new RegExp(`^${name}\\s`));
    } finally {
      await w.stop();
    }
  });

  test('-w on one object by name sees only that object', async () => {
    const name = uniqueName('one');
    const other = uniqueName('other');
    await k.ok(['create', '-n', ns, '-f', '-'], { input: cm(name) });
    await k.ok(['create', '-n', ns, '-f', '-'], { input: cm(other) });
    const w = k.spawn(['get', 'cm', name, '-n', ns, '-w', '--output-watch-events', '-o', 'jsonpath={.type} {.object.metadata.name}{"\\n"}']);
    try {
      await w.waitForLines(1);
      await k.ok(['label', 'cm', other, '-n', ns, 'a=b']);
      await k.ok(['label', 'cm', name, '-n', ns, 'a=b']);
      const lines = await w.waitForLines(2);
      assert.deepEqual(lines, [`ADDED ${name}`, `MODIFIED ${name}`]);
    } finally {
      await w.stop();
    }
  });

  test('--watch-only with a label selector reports objects entering the selection', async () => {
    const tag = uniqueName('tag');
    const w = k.spawn(['get', 'cm', '-n', ns, '-l', `tag=${tag}`, '--watch-only', '-o', 'name']);
    try {
      await new Promise((r) => setTimeout(r, 500));
      const name = uniqueName('sel');
      await k.ok(['create', '-n', ns, '-f', '-'], { input: cm(name, { labels: { tag } }) });
      await k.ok(['create', '-n', ns, '-f', '-'], { input: cm(uniqueName('nosel')) });
      const lines = await w.waitForLines(1);
      assert.deepEqual(lines, [`configmap/${name}`]);
    } finally {
      await w.stop();
    }
  });
});

describe('kubectl delete', { concurrency: true }, () => {
  test('deletes and reports, then the name is free again', async () => {
    const name = uniqueName('del');
    await k.ok(['create', '-n', ns, '-f', '-'], { input: cm(name) });
    const out = await k.ok(['delete', 'cm', name, '-n', ns]);
    assert.equal(out.trim(), `configmap "${name}" deleted`);
    const gone = await k.run(['get', 'cm', name, '-n', ns]);
    assert.match(gone.stderr, /NotFound/);
    assert.equal((await k.ok(['create', '-n', ns, '-f', '-'], { input: cm(name) })).trim(), `configmap/${name} created`);
  });

  test('waits (by watching) until a finalizer is removed', async () => {
    const name = uniqueName('fin');
    await k.ok(['create', '-n', ns, '-f', '-'], { input: cm(name, { finalizers: ['example.com/hold'] }) });
    const started = Date.now();
    const deletion = k.run(['delete', 'cm', name, '-n', ns, '--timeout=20s']);
    // The object stays, marked for deletion, while kubectl waits.
    let marked: any;
    for (let i = 0; i < 100; i++) {
      marked = (await api(srv.url, `/api/v1/namespaces/${ns}/configmaps/${name}`)).body;
      if (marked?.metadata?.deletionTimestamp) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(marked.metadata.deletionTimestamp, 'deletionTimestamp set');
    await new Promise((r) => setTimeout(r, 700));
    const patched = await api(srv.url, `/api/v1/namespaces/${ns}/configmaps/${name}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{"metadata":{"finalizers":null}}',
    });
    assert.equal(patched.status, 200, patched.text);
    const r = await deletion;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `configmap "${name}" deleted`);
    assert.ok(Date.now() - started >= 700);
    assert.equal((await api(srv.url, `/api/v1/namespaces/${ns}/configmaps/${name}`)).status, 404);
  });

  test('--wait=false returns while the finalizer still holds the object', async () => {
    const name = uniqueName('nowait');
    await k.ok(['create', '-n', ns, '-f', '-'], { input: cm(name, { finalizers: ['example.com/hold'] }) });
    const out = await k.ok(['delete', 'cm', name, '-n', ns, '--wait=false']);
    assert.equal(out.trim(), `configmap "${name}" deleted`);
    const got = await k.json(['get', 'cm', name, '-n', ns]);
    assert.ok(got.metadata.deletionTimestamp);
    assert.deepEqual(got.metadata.finalizers, ['example.com/hold']);
    await k.ok(['patch', 'cm', name, '-n', ns, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    assert.match((await k.run(['get', 'cm', name, '-n', ns])).stderr, /NotFound/);
  });

  test('delete -l removes exactly the selected objects', async () => {
    const tag = uniqueName('dl');
    const items = ['a', 'b', 'c'].map((s) => JSON.parse(cm(`${tag}-${s}`, { labels: { grp: tag, keep: s === 'c' ? 'yes' : 'no' } })) as unknown);
    await k.ok(['create', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
    const out = await k.ok(['delete', 'cm', '-n', ns, '-l', `grp=${tag},keep=no`]);
    assert.deepEqual(out.trim().split('\n').sort(), [`configmap "${tag}-a" deleted`, `configmap "${tag}-b" deleted`]);
    const left = await k.ok(['get', 'cm', '-n', ns, '-l', `grp=${tag}`, '-o', 'name']);
    assert.equal(left.trim(), `configmap/${tag}-c`);
  });

  test('delete --all in a namespace', async () => {
    const dns = uniqueName('all');
    await api(srv.url, '/api/v1/namespaces', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ metadata: { name: dns } }) });
    await k.ok(['create', '-n', dns, '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [1, 2].map((i) => JSON.parse(cm(`x${i}`)) as unknown) }),
    });
    const out = await k.ok(['delete', 'cm', '--all', '-n', dns]);
    assert.equal(out.trim().split('\n').length, 2);
    const r = await k.run(['get', 'cm', '-n', dns]);
    assert.match(r.stderr, /No resources found/);
  });

  test('delete of a missing object is NotFound; --ignore-not-found succeeds', async () => {
    const r = await k.run(['delete', 'cm', 'never-was', '-n', ns]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(NotFound\): configmaps "never-was" not found/);
    const ok = await k.run(['delete', 'cm', 'never-was', '-n', ns, '--ignore-not-found']);
    assert.equal(ok.code, 0, ok.stderr);
  });

  test('delete -f of a deployment', async () => {
    const name = uniqueName('depdel');
    const manifest = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name },
      spec: { selector: { matchLabels: { a: name } }, template: { metadata: { labels: { a: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    });
    await k.ok(['apply', '-n', ns, '-f', '-'], { input: manifest });
    const out = await k.ok(['delete', '-n', ns, '-f', '-'], { input: manifest });
    assert.equal(out.trim(), `deployment.apps "${name}" deleted`);
  });
});
