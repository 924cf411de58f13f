#!/usr/bin/env node
// Records the reference kube-apiserver's authorization decisions for the RBAC matrix: applies the
// roles and bindings of test/fixtures/rbac-matrix/policy.json, asks a SubjectAccessReview for every
// user x request of that file, writes test/golden/rbac-matrix/decisions.json, then deletes what it
// applied. Usage: node scripts/capture-rbac-matrix.mjs URL TOKEN KUBECONFIG (the reference of
// ../shared/reference/kube-up.sh; URL TOKEN as in /tmp/ref-url.txt).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token, kubeconfig] = process.argv.slice(2);
if (!url || !token || !kubeconfig) {
  console.error('usage: capture-rbac-matrix.mjs URL TOKEN KUBECONFIG');
  process.exit(2);
}
// The reference serves a self-signed certificate.
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
const fixture = join(root, 'test', 'fixtures', 'rbac-matrix', 'policy.json');
const { objects, users, requests } = JSON.parse(readFileSync(fixture, 'utf8'));
const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
const kubectl = (args, input) => execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input });

async function sar(spec) {
  const res = await fetch(`${url}/apis/authorization.k8s.io/v1/subjectaccessreviews`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec }),
  });
  if (res.status !== 201) throw new Error(`SubjectAccessReview: ${res.status} ${await res.text()}`);
  return (await res.json()).status;
}

kubectl(['apply', '-f', '-'], list);
try {
  // kube-controller-manager aggregates rbacm-agg from its two labelled roles.
  for (let i = 0; ; i++) {
    const rules = JSON.parse(kubectl(['get', 'clusterrole', 'rbacm-agg', '-o', 'json'])).rules ?? [];
    if (rules.length === 2) break;
    if (i > 100) throw new Error('rbacm-agg was never aggregated');
    await new Promise((r) => setTimeout(r, 100));
  }
  const cases = [];
  for (const u of users) {
    for (const req of requests) {
      const spec = { user: u.user, groups: u.groups, ...req };
      cases.push({ spec, status: await sar(spec) });
    }
  }
  const out = join(root, 'test', 'golden', 'rbac-matrix', 'decisions.json');
  writeFileSync(out, `${JSON.stringify({ cases }, null, 1)}\n`);
  console.log(`${cases.length} cases, ${cases.filter((c) => c.status.allowed).length} allowed`);
} finally {
  kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], list);
}
