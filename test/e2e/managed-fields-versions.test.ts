/**
 * managedFields across the versions of a converting kind: the HorizontalPodAutoscaler sequence of
 * test/e2e/hpa-versions-sequence.ts answers on Capstan as kube-apiserver 1.36 answered it
 * (test/golden/managedfields/hpa-versions.json): an autoscaling/v1 manager's
 * `targetCPUUtilizationPercentage` conflicts with, and is taken by, an autoscaling/v2 apply of
 * `metrics`, and v2 writes take `maxReplicas` from v1 managers.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { hpaVersionsSequence, type StepResult } from './hpa-versions-sequence.js';

let srv: TestServer;
before(async () => {
  srv = await startTestServer();
});
after(async () => {
  await srv?.stop();
});

const golden = JSON.parse(readFileSync(join(process.cwd(), 'test', 'golden', 'managedfields', 'hpa-versions.json'), 'utf8')) as StepResult[];

test('managers of autoscaling/v1 and v2 own, lose and conflict on fields as kube decides at their own version', async () => {
  const results = await hpaVersionsSequence(async (method, path, contentType, body) => {
    const res = await fetch(srv.url + path, { method, headers: { 'content-type': contentType }, body });
    return { status: res.status, body: await res.json() };
  });
  assert.ok(golden.some((g) => g.status === 409) && golden.length === results.length);
  for (const [i, want] of golden.entries()) assert.deepEqual(results[i], want, want.step);
});
