/**
 * PodSecurity admission against kube-apiserver 1.36's answers: the corpus of
 * test/e2e/pod-security-replay.ts (every Pod Security Standards check at baseline and restricted,
 * pinned and future versions, warn-only namespaces, workloads with pod templates, invalid namespace
 * labels, raising a namespace's enforce level over existing pods, pod updates that are and are not
 * checked again) replayed on Capstan must give the status, message and warnings recorded from the
 * reference in test/golden/pod-security/reference.json (scripts/capture-pod-security-goldens.mjs).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { replay, splitWarnings, type ReplayResult } from './pod-security-replay.js';

let srv: TestServer;
before(async () => {
  // The corpus's namespaces carry only its own pods: no controller needs to run.
  srv = await startTestServer({ controllers: ['*', '-garbage-collector', '-disruption', '-resourcequota'] });
});
after(async () => {
  await srv?.stop();
});

const golden = JSON.parse(readFileSync(join(process.cwd(), 'test', 'golden', 'pod-security', 'reference.json'), 'utf8')) as ReplayResult[];

test('every Pod Security case answers as kube-apiserver 1.36 answered it', async () => {
  const results = await replay(async (method, path, headers, body) => {
    const res = await fetch(srv.url + path, { method, headers, body });
    return { status: res.status, warnings: splitWarnings(res.headers.get('warning')), text: await res.text() };
  }, 'psa-');
  assert.equal(results.length, golden.length);
  assert.ok(golden.length >= 150, `the corpus has ${golden.length} cases`);
  const mismatches = results.filter((r, i) => JSON.stringify(r) !== JSON.stringify(golden[i]));
  assert.deepEqual(
    mismatches.map((m) => ({ got: m, want: golden.find((g) => g.name === m.name) })),
    [],
  );
});
