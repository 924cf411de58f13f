/**
 * A controller-runtime operator (test/clients/go-operator, built by scripts/build-go-operator.sh)
 * runs its reconcile loop against Capstan, on the embedded store and on Redis with two workers:
 * for each Widget (a CRD with a status subresource) it creates an owned ConfigMap and writes the
 * Widget's status; a spec change is reconciled again (new observedGeneration, ConfigMap updated),
 * and a deleted owned ConfigMap is recreated (controller-runtime's Owns watch). Needs Go on PATH.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, startTestServer, uniqueName } from '../helpers/capstan.js';
import { startRedisWorkers } from '../helpers/redis-workers.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const json = { 'content-type': 'application/json' };
let binary = '';

before(() => {
  const built = spawnSync('bash', [join(REPO, 'scripts', 'build-go-operator.sh')], { encoding: 'utf8', timeout: 15 * 60_000 });
  assert.equal(built.status, 0, `build-go-operator.sh failed: ${built.stderr}`);
  binary = built.stdout.trim();
});

function widgetCrd(group: string): unknown {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: { type: 'object', properties: { message: { type: 'string' } } },
                status: {
                  type: 'object',
                  properties: { configMap: { type: 'string' }, observedGeneration: { type: 'integer' }, phase: { type: 'string' } },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** Polls CHECK every 50 ms until it returns a value (or fails after TIMEOUTMS). */
async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs the operator's whole scenario against the server at URL (KUBECONFIG points at it). */
async function operatorScenario(url: string, kubeconfig: string): Promise<void> {
  const ns = uniqueName('op');
  const group = `${uniqueName('op')}.example.com`;
  assert.equal(
    (
      await api(url, '/api/v1/namespaces', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      })
    ).status,
    201,
  );
  assert.equal(
    (await api(url, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { method: 'POST', headers: json, body: JSON.stringify(widgetCrd(group)) }))
      .status,
    201,
  );
  await until('widgets served', async () => ((await api(url, `/apis/${group}/v1/namespaces/${ns}/widgets`)).status === 200 ? true : undefined));

  const child: ChildProcess = spawn(binary, [kubeconfig, ns, group], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  try {
    const widgets = `/apis/${group}/v1/namespaces/${ns}/widgets`;
    const created = await api(url, widgets, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' }, spec: { message: 'hello' } }),
    });
    assert.equal(created.status, 201, created.text);
    const cmPath = `/api/v1/namespaces/${ns}/configmaps/w1-config`;
    const cm = await until(`ConfigMap w1-config (operator stderr: ${stderr.slice(-500)})`, async () => {
      const r = await api(url, cmPath);
      return r.status === 200 ? r.body : undefined;
    });
    assert.deepEqual(cm.data, { message: 'hello' });
    assert.deepEqual(
      cm.metadata.ownerReferences.map((o: any) => [o.kind, o.name, o.uid, o.controller, o.blockOwnerDeletion]),
      [['Widget', 'w1', created.body.metadata.uid, true, true]],
    );
    const ready = await until('Widget status', async () => {
      const w = (await api(url, `${widgets}/w1`)).body;
      return w.status?.phase === 'Ready' ? w : undefined;
    });
    assert.deepEqual(ready.status, { configMap: 'w1-config', observedGeneration: 1, phase: 'Ready' });

    // A spec change is reconciled: new generation observed, ConfigMap updated.
    const patched = await api(url, `${widgets}/w1`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { message: 'bye' } }),
    });
    assert.equal(patched.status, 200, patched.text);
    await until('generation 2 observed', async () => ((await api(url, `${widgets}/w1`)).body.status?.observedGeneration === 2 ? true : undefined));
    assert.deepEqual((await api(url, cmPath)).body.data, { message: 'bye' });

    // The owned ConfigMap is recreated when deleted.
    const oldUid = (await api(url, cmPath)).body.metadata.uid;
    assert.equal((await api(url, cmPath, { method: 'DELETE' })).status, 200);
    await until('ConfigMap recreated', async () => {
      const r = await api(url, cmPath);
      return r.status === 200 && r.body.metadata.uid !== oldUid ? true : undefined;
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('a controller-runtime operator reconciles custom resources', () => {
  test('on the embedded store', async () => {
    const srv = await startTestServer();
    try {
      await operatorScenario(srv.url, srv.kubeconfig);
    } finally {
      await srv.stop();
    }
  });

  test('on Redis with two workers', async () => {
    const env = await startRedisWorkers();
    try {
      await operatorScenario(env.url, env.kubeconfig);
    } finally {
      await env.stop();
    }
  });
});
