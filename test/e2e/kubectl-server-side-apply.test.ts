/**
 * kubectl's server-side apply against Capstan, compared line by line with what kubectl printed
 * for the same commands against kube-apiserver 1.36 (test/golden/kubectl-apply/server-side.json,
 * recorded by scripts/capture-kubectl-apply-goldens.mjs): `apply` then `apply --server-side`
 * (kubectl's client-side to server-side migration), removal of fields, `--field-manager` and its
 * conflict message, `--force-conflicts`, `--dry-run=server` (a conflict, a success, a new object)
 * and client-side apply after server-side apply, with the objects' managedFields after each.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startKubectlEnv, type Kubectl } from './kubectl.js';
import { runSequence, type StepTranscript } from './kubectl-apply-sequence.js';
import type { SuiteServer } from '../helpers/suite-target.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const golden = JSON.parse(readFileSync(join(root, 'test', 'golden', 'kubectl-apply', 'server-side.json'), 'utf8')) as { steps: StepTranscript[] };

let srv: SuiteServer;
let k: Kubectl;
let ns: string;

before(async () => {
  ({ srv, k, ns } = await startKubectlEnv('kapply'));
});

after(async () => {
  await srv.stop();
});

test('kubectl apply --server-side prints what it prints against kube-apiserver, step by step', async () => {
  const steps = await runSequence(k, ns);
  assert.equal(steps.length, golden.steps.length);
  steps.forEach((step, i) => {
    const want = golden.steps[i];
    assert.ok(want);
    const what = `step ${i}: kubectl ${step.args.join(' ')}`;
    assert.deepEqual(step.stdout, want.stdout, `${what}: stdout`);
    assert.deepEqual(step.stderr, want.stderr, `${what}: stderr`);
    assert.equal(step.code, want.code, `${what}: exit code`);
  });
});
