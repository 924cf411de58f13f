#!/usr/bin/env node
// Records what a real kube-apiserver stores for each kubectl generator command of
// test/fixtures/kubectl-generators.json, as test/golden/kubectl-generators/<name>.json (the object as
// `kubectl get -o json` shows it). Usage: node scripts/capture-kubectl-goldens.mjs KUBECONFIG
// (a kubeconfig of ../shared/reference/kube-up.sh, see docs/development.md). The namespace `gen` must not exist.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const kubeconfig = process.argv[2];
if (!kubeconfig) {
  console.error('usage: capture-kubectl-goldens.mjs KUBECONFIG');
  process.exit(2);
}
const kubectl = (args) => execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' });
const { commands } = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'kubectl-generators.json'), 'utf8'));
const out = join(root, 'test', 'golden', 'kubectl-generators');
mkdirSync(out, { recursive: true });

kubectl(['create', 'namespace', 'gen']);
// Without kube-controller-manager nobody creates the namespace's default ServiceAccount.
try { kubectl(['-n', 'gen', 'get', 'serviceaccount', 'default']); } catch { kubectl(['-n', 'gen', 'create', 'serviceaccount', 'default']); }
for (const c of commands) kubectl(['-n', 'gen', ...c.args]);
for (const c of commands) {
  const obj = JSON.parse(kubectl(['-n', 'gen', 'get', c.get, '-o', 'json']));
  writeFileSync(join(out, `${c.name}.json`), `${JSON.stringify(obj, null, 2)}\n`);
  console.log(`${c.name}: ${c.get}`);
}
kubectl(['delete', 'namespace', 'gen', '--wait=false']);
