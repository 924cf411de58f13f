/**
 * pods/resize (kube's resize strategy and ValidatePodResize), PodResizeValidator and
 * NodeDeclaredFeatureValidator answer as kube-apiserver 1.36 answered the same corpus
 * (test/e2e/pod-resize-replay.ts, recorded by scripts/capture-node-admission-goldens.mjs into
 * test/golden/node-admission/resize.json); with both plugins disabled a resize beyond the node's
 * allocatable goes through.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { replay, type ResizeResult } from './pod-resize-replay.js';

const golden = JSON.parse(readFileSync(join(process.cwd(), 'test', 'golden', 'node-admission', 'resize.json'), 'utf8')) as ResizeResult[];
const servers: TestServer[] = [];
after(async () => {
  for (const s of servers) await s.stop();
});

async function replayOn(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<ResizeResult[]> {
  const srv = await startTestServer(overrides);
  servers.push(srv);
  return replay(async (method, path, headers, body) => {
    const res = await fetch(srv.url + path, { method, headers, body });
    return { status: res.status, text: await res.text() };
  }, 'nodeplugins-');
}

test('every resize step answers as kube-apiserver 1.36 answered it', async () => {
  const results = await replayOn();
  assert.equal(results.length, golden.length);
  assert.deepEqual(
    results.filter((r, i) => JSON.stringify(r) !== JSON.stringify(golden[i])).map((got) => ({ got, want: golden.find((g) => g.name === got.name) })),
    [],
  );
});

test('without PodResizeValidator and NodeDeclaredFeatureValidator only the resize rules refuse', async () => {
  const results = await replayOn({ disableAdmissionPlugins: ['PodResizeValidator', 'NodeDeclaredFeatureValidator'] });
  const byName = new Map(results.map((r) => [r.name, r]));
  for (const name of [
    'resize beyond the allocatable cpu',
    'a pod on a windows node',
    'a pod on a missing node',
    'pod-level resize on a node without the feature',
  ]) {
    assert.equal(byName.get(name)?.status, 200, name);
  }
  const refusedByPlugins = golden.filter((g) => g.status === 403).map((g) => g.name);
  assert.ok(refusedByPlugins.length >= 8, `${refusedByPlugins.length} refusals by the plugins`);
  assert.deepEqual(
    results.filter((r) => r.status === 403),
    [],
  );
  assert.equal(byName.get('change the QoS class')?.status, 422);
});
