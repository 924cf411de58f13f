/**
 * Watches of a custom resource end when its CRD is deleted, as kube-apiserver ends them when it
 * drops the CRD's storage: the watcher sees its objects deleted by the CRD's cleanup, then the
 * stream closes. Watches of other types stay open. On the embedded store, on Redis, and on every
 * worker of `--storage=redis --workers 2`.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { allBackends } from '../helpers/backends.js';
import { api, startTestServer, uniqueName } from '../helpers/capstan.js';
import { startRedisWorkers, workersThatServed } from '../helpers/redis-workers.js';
import { openWatch, type WatchStream } from '../helpers/watch-client.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

function crd(group: string): unknown {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}

const json = { 'content-type': 'application/json' };

/** Polls until the custom resources of GROUP are served (through any worker). */
async function served(url: string, group: string): Promise<void> {
  for (let i = 0; (await api(url, `/apis/${group}/v1/widgets`)).status !== 200; i++) {
    if (i > 200) throw new Error('custom resource not served');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Creates a CRD and a widget, opens N watches of widgets (and one of ConfigMaps), deletes the CRD; checks how each ends. */
async function watchesEndWithTheirCrd(url: string, n: number): Promise<WatchStream[]> {
  const group = `${uniqueName('wend')}.example.com`;
  assert.equal((await api(url, CRDS, { method: 'POST', headers: json, body: JSON.stringify(crd(group)) })).status, 201);
  await served(url, group);
  const widget = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w1' } };
  const created = await api(url, `/apis/${group}/v1/namespaces/default/widgets`, { method: 'POST', headers: json, body: JSON.stringify(widget) });
  assert.equal(created.status, 201, created.text);
  const watches: WatchStream[] = [];
  for (let i = 0; i < n; i++) {
    const w = await openWatch(url, `/apis/${group}/v1/widgets?watch=true&resourceVersion=${created.body.metadata.resourceVersion}`);
    assert.equal(w.status, 200);
    watches.push(w);
  }
  const other = await openWatch(url, '/api/v1/configmaps?watch=true');
  try {
    assert.equal((await api(url, `${CRDS}/widgets.${group}`, { method: 'DELETE' })).status, 200);
    await Promise.all(watches.map((w) => Promise.race([w.ended, new Promise((_, reject) => setTimeout(() => reject(new Error('watch still open')), 15_000))])));
    for (const w of watches)
      assert.deepEqual(
        w.events.map((e) => [e.type, e.object.metadata?.name]),
        [['DELETED', 'w1']],
      );
    // Other types' watches are not affected.
    const early = await Promise.race([other.ended.then(() => 'ended'), new Promise((r) => setTimeout(() => r('open'), 200))]);
    assert.equal(early, 'open');
  } finally {
    other.close();
    for (const w of watches) w.close();
  }
  return watches;
}

for (const backend of allBackends()) {
  describe(`custom resource watches and their CRD (${backend.name})`, () => {
    after(() => backend.stop());
    test('a watch of a custom resource ends once its CRD is deleted', async () => {
      const srv = await startTestServer({}, await backend.open());
      try {
        await watchesEndWithTheirCrd(srv.url, 1);
      } finally {
        await srv.stop();
      }
    });
  });
}

test('with --storage=redis --workers 2, the watches on every worker end', async () => {
  const env = await startRedisWorkers({ args: ['--log-level', 'info'] });
  try {
    // Each watch holds its connection, so successive watches land on both workers (round robin).
    await watchesEndWithTheirCrd(env.url, 4);
    assert.deepEqual(workersThatServed(env.cap.stderr(), '/widgets?watch=true'), [0, 1]);
  } finally {
    await env.stop();
  }
});
