#!/usr/bin/env node
// Records the reference's transcript of the kubectl identity-and-access session
// (test/e2e/kubectl-auth-transcript.ts: kubectl auth can-i with --list/--as/--as-group, kubectl auth
// whoami) into test/golden/kubectl-auth/reference.json, which test/e2e/kubectl-auth.test.ts compares
// Capstan's transcript with. The session's namespace is deleted afterwards.
// Usage: npx tsc -p tsconfig.json && node scripts/capture-kubectl-auth-goldens.mjs /tmp/ref.kubeconfig
//   (an administrator's kubeconfig of a kube-apiserver 1.36 with --authorization-mode=RBAC)
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubectlFor } from '../dist/test/e2e/kubectl.js';
import { NAMESPACE, SETUP, runTranscript } from '../dist/test/e2e/kubectl-auth-transcript.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [kubeconfig] = process.argv.slice(2);
if (!kubeconfig) {
  console.error('usage: capture-kubectl-auth-goldens.mjs KUBECONFIG');
  process.exit(2);
}
const k = kubectlFor(kubeconfig);
try {
  await k.ok(['apply', '-f', '-'], { input: SETUP });
  // RBAC decisions follow the binding through the reference's informers: wait until it allows.
  for (let i = 0; i < 100; i++) {
    if ((await k.run(['auth', 'can-i', 'get', 'pods', '-n', NAMESPACE, '--as=alice'])).code === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const lines = await runTranscript((args) => k.run(args));
  for (const l of lines) console.log(`$ kubectl ${l.args.join(' ')}  (exit ${l.code})\n${l.stdout}${l.stderr}`);
  mkdirSync(join(root, 'test', 'golden', 'kubectl-auth'), { recursive: true });
  writeFileSync(join(root, 'test', 'golden', 'kubectl-auth', 'reference.json'), `${JSON.stringify(lines, null, 2)}\n`);
} finally {
  await k.run(['delete', 'namespace', NAMESPACE, '--wait=false']);
}
