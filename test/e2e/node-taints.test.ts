/**
 * TaintNodesByCondition and the node lifecycle controller's NoSchedule tainting pass answer as
 * kube-apiserver 1.36 with its kube-controller-manager answered the same corpus
 * (test/e2e/node-taints-replay.ts, recorded by scripts/capture-node-admission-goldens.mjs into
 * test/golden/node-admission/taints.json); with the controller disabled the not-ready taint stays,
 * and with the plugin disabled there is none.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { eventually, startRedisWorkers, type RedisWorkers } from '../helpers/redis-workers.js';
import { replay, type TaintResult } from './node-taints-replay.js';

const golden = JSON.parse(readFileSync(join(process.cwd(), 'test', 'golden', 'node-admission', 'taints.json'), 'utf8')) as TaintResult[];
const servers: (TestServer | RedisWorkers)[] = [];
after(async () => {
  for (const s of servers) await s.stop();
});

async function server(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const s = await startTestServer(overrides);
  servers.push(s);
  return s;
}

const node = (name: string): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name }, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
const post = (url: string, path: string, body: string) => api(url, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

async function replayMatchesGolden(url: string): Promise<void> {
  const results = await replay(
    async (method, path, headers, body) => {
      const res = await fetch(url + path, { method, headers, body });
      return { status: res.status, text: await res.text() };
    },
    'nodeplugins-',
    golden,
  );
  assert.equal(results.length, golden.length);
  assert.deepEqual(
    results.filter((r, i) => JSON.stringify(r) !== JSON.stringify(golden[i])).map((got) => ({ got, want: golden.find((g) => g.name === got.name) })),
    [],
  );
}

test('new nodes are tainted not-ready and the controller brings their condition taints in line, as kube does', async () => {
  await replayMatchesGolden((await server()).url);
});

test('the same with two workers over Redis (the controller runs in the lease holder)', async () => {
  const workers = await startRedisWorkers();
  servers.push(workers);
  await replayMatchesGolden(workers.url);
});

test('with --controllers=-node-lifecycle-controller the not-ready taint stays', async () => {
  const srv = await server({ controllers: ['*', '-node-lifecycle-controller'] });
  assert.equal((await post(srv.url, '/api/v1/nodes', node('kept'))).status, 201);
  // The pv-protection controller runs under the same manager: once it has let a volume created after
  // the node go, the manager has been leading for longer than the node exists.
  const volume = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'marker' },
    spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/m' } },
  };
  assert.equal((await post(srv.url, '/api/v1/persistentvolumes', JSON.stringify(volume))).status, 201);
  assert.equal((await api(srv.url, '/api/v1/persistentvolumes/marker', { method: 'DELETE' })).status, 200);
  await eventually(async () => (await api(srv.url, '/api/v1/persistentvolumes/marker')).status === 404, 'the volume is deleted');
  const kept = await api(srv.url, '/api/v1/nodes/kept');
  assert.deepEqual(kept.body.spec.taints, [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
});

test('with --disable-admission-plugins=TaintNodesByCondition a new node has no taint', async () => {
  const srv = await server({ disableAdmissionPlugins: ['TaintNodesByCondition'], controllers: ['*', '-node-lifecycle-controller'] });
  const created = await post(srv.url, '/api/v1/nodes', node('plain'));
  assert.equal(created.status, 201);
  assert.equal(created.body.spec.taints, undefined);
});
