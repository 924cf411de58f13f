/**
 * kube's pod spec warnings against kube-apiserver 1.36's answers: the corpus of
 * test/e2e/pod-warnings-replay.ts (Pods and every kind with a pod template, created with dry run;
 * updates with and without a template change) replayed on Capstan must give the status, message and
 * Warning headers, in order, recorded from the reference in test/golden/pod-warnings/reference.json
 * (scripts/capture-pod-warnings-goldens.mjs).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { NAMESPACE, replay, splitWarnings, type ReplayResult } from './pod-warnings-replay.js';

let srv: TestServer;
before(async () => {
  srv = await startTestServer({ controllers: ['*', '-garbage-collector', '-disruption', '-resourcequota'] });
});
after(async () => {
  await srv?.stop();
});

const golden = JSON.parse(readFileSync(join(process.cwd(), 'test', 'golden', 'pod-warnings', 'reference.json'), 'utf8')) as ReplayResult[];

test('every pod warnings case answers as kube-apiserver 1.36 answered it', async () => {
  const results = await replay(async (method, path, headers, body) => {
    const res = await fetch(srv.url + path, { method, headers, body });
    return { status: res.status, warnings: splitWarnings(res.headers.get('warning')), text: await res.text() };
  }, NAMESPACE);
  assert.equal(results.length, golden.length);
  assert.ok(golden.length >= 100, `the corpus has ${golden.length} cases`);
  const mismatches = results.filter((r, i) => JSON.stringify(r) !== JSON.stringify(golden[i]));
  assert.deepEqual(
    mismatches.map((m) => ({ got: m, want: golden.find((g) => g.name === m.name) })),
    [],
  );
});
