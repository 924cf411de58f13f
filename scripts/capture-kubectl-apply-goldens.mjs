#!/usr/bin/env node
// Records what kubectl prints for the server-side apply sequence of test/e2e/kubectl-apply-sequence.ts
// against kube-apiserver 1.36 into test/golden/kubectl-apply/server-side.json, which
// test/e2e/kubectl-server-side-apply.test.ts compares Capstan's transcript with, line by line.
// Usage: npx tsc -p tsconfig.json && node scripts/capture-kubectl-apply-goldens.mjs KUBECONFIG
//   (e.g. /tmp/ref.kubeconfig; a namespace kapply-<random> is created and deleted)
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubectlFor } from '../dist/test/e2e/kubectl.js';
import { runSequence } from '../dist/test/e2e/kubectl-apply-sequence.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const kubeconfig = process.argv[2];
if (!kubeconfig) {
  console.error('usage: capture-kubectl-apply-goldens.mjs KUBECONFIG');
  process.exit(2);
}
const k = kubectlFor(kubeconfig);
const ns = `kapply-${Math.random().toString(36).slice(2, 8)}`;
await k.ok(['create', 'namespace', ns]);
try {
  const steps = await runSequence(k, ns);
  writeFileSync(join(root, 'test', 'golden', 'kubectl-apply', 'server-side.json'), `${JSON.stringify({ steps }, null, 2)}\n`);
  console.log(steps.map((s) => `${s.code} kubectl ${s.args.join(' ')}`).join('\n'));
} finally {
  await k.run(['delete', 'namespace', ns, '--wait=false']);
}
