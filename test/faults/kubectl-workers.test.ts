/**
 * kubectl against `capstan --storage=redis --workers 2`: every kubectl invocation is a new
 * connection, so the primary's round-robin spreads them over both workers; `kubectl get -w` stays
 * on one worker and must still see the changes made through the other; namespace deletion must
 * complete although only worker 0 runs the namespace controller.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlFor, type Kubectl } from '../e2e/kubectl.js';
import { createNamespace, fresh, startRedisWorkers, workersThatServed, type RedisWorkers } from '../helpers/redis-workers.js';

let env: RedisWorkers;
let k: Kubectl;
const NS = 'kubectl-workers';

function deployment(name: string, replicas: number, image: string): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
    },
  });
}

before(async () => {
  env = await startRedisWorkers({ args: ['--log-level', 'info'] });
  k = kubectlFor(env.kubeconfig);
  await k.ok(['create', 'namespace', NS]);
});

after(async () => {
  await env?.stop();
});

describe('kubectl on Redis with --workers 2', () => {
  test('apply, get, scale, patch and delete a deployment while get -w (on one worker) sees every change', async () => {
    await k.ok(['apply', '-n', NS, '-f', '-'], { input: deployment('web', 1, 'nginx:1.0') });
    const got = await k.json(['get', 'deployment', 'web', '-n', NS]);
    assert.equal(got.spec.replicas, 1);
    assert.equal(got.spec.template.spec.containers[0].image, 'nginx:1.0');

    const w = k.spawn([
      'get',
      'deployments',
      '-n',
      NS,
      '-w',
      '--output-watch-events',
      '-o',
      'jsonpath={.type} {.object.metadata.name} {.object.spec.replicas} {.object.spec.template.spec.containers[0].image}{"\\n"}',
    ]);
    try {
      await w.waitForLines(1);
      // Several connections each, so round-robin sends some to the worker the watch is not on.
      assert.match(await k.ok(['scale', 'deployment', 'web', '-n', NS, '--replicas=3']), /deployment.apps\/web scaled/);
      await w.waitForLines(2);
      await k.ok(['patch', 'deployment', 'web', '-n', NS, '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2.0"}]}}}}']);
      await w.waitForLines(3);
      await k.ok(['apply', '-n', NS, '-f', '-'], { input: deployment('web', 2, 'nginx:2.0') });
      await w.waitForLines(4);
      const scaled = await k.json(['get', 'deployment', 'web', '-n', NS]);
      assert.equal(scaled.spec.replicas, 2);
      assert.equal(scaled.spec.template.spec.containers[0].image, 'nginx:2.0');
      assert.equal((await k.ok(['delete', 'deployment', 'web', '-n', NS])).trim(), 'deployment.apps "web" deleted');
      const lines = await w.waitForLines(5);
      assert.deepEqual(lines, [
        'ADDED web 1 nginx:1.0',
        'MODIFIED web 3 nginx:1.0',
        'MODIFIED web 3 nginx:2.0',
        'MODIFIED web 2 nginx:2.0',
        'DELETED web 2 nginx:2.0',
      ]);
      assert.match((await k.run(['get', 'deployment', 'web', '-n', NS])).stderr, /NotFound/);
    } finally {
      await w.stop();
    }
    assert.deepEqual(workersThatServed(env.cap.stderr(), `/namespaces/${NS}/deployments`), [0, 1], 'both workers served deployment requests');
  });

  test('kubectl get -w sees ConfigMaps written through many other connections, in order', async () => {
    const w = k.spawn([
      'get',
      'configmaps',
      '-n',
      NS,
      '-w',
      '--watch-only',
      '--output-watch-events',
      '-o',
      'jsonpath={.type} {.object.metadata.name} {.object.data.v}{"\\n"}',
    ]);
    try {
      // --watch-only prints nothing until a change: give kubectl time to open its watch.
      await new Promise((r) => setTimeout(r, 1500));
      const expected: string[] = [];
      for (let i = 0; i < 8; i++) {
        const r = await fresh(env.url, `/api/v1/namespaces/${NS}/configmaps`, {
          method: 'POST',
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { v: '1' } },
        });
        assert.equal(r.status, 201, r.text);
        expected.push(`ADDED cm-${i} 1`);
      }
      for (let i = 0; i < 4; i++) {
        const r = await fresh(env.url, `/api/v1/namespaces/${NS}/configmaps/cm-${i}`, {
          method: 'PATCH',
          contentType: 'application/merge-patch+json',
          body: { data: { v: '2' } },
        });
        assert.equal(r.status, 200, r.text);
        expected.push(`MODIFIED cm-${i} 2`);
      }
      const lines = await w.waitForLines(expected.length);
      assert.deepEqual(lines, expected);
    } finally {
      await w.stop();
    }
    assert.deepEqual(workersThatServed(env.cap.stderr(), `/namespaces/${NS}/configmaps`), [0, 1]);
  });

  test('namespace deletion completes whichever worker receives it (the controller runs in worker 0)', async () => {
    const names = ['gone-a', 'gone-b', 'gone-c'];
    for (const ns of names) {
      await createNamespace(env.url, ns);
      await k.ok(['apply', '-n', ns, '-f', '-'], { input: deployment('d', 1, 'x') });
      for (let i = 0; i < 3; i++) {
        const r = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps`, {
          method: 'POST',
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` } },
        });
        assert.equal(r.status, 201, r.text);
      }
    }
    // kubectl delete waits (watching) until each namespace is gone.
    const out = await k.run(['delete', 'namespace', ...names, '--timeout=60s'], { timeoutMs: 70_000 });
    assert.equal(out.code, 0, out.stderr);
    for (const ns of names) {
      assert.match(out.stdout, new RegExp(`namespace "${ns}" deleted`));
      assert.equal((await fresh(env.url, `/api/v1/namespaces/${ns}`)).status, 404);
      const left = await fresh(env.url, `/api/v1/namespaces/${ns}/configmaps`);
      assert.equal(left.status, 200, left.text);
      assert.deepEqual(left.body.items, []);
    }
    // The same namespace name can be used again right away.
    await k.ok(['create', 'namespace', 'gone-a']);
    assert.equal((await k.json(['get', 'namespace', 'gone-a'])).status.phase, 'Active');
  });
});
