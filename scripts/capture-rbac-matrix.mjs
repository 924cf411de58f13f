#!/usr/bin/env node
// Records the reference kube-apiserver's authorization decisions for the RBAC matrix: applies the
// roles and bindings of test/fixtures/rbac-matrix/policy.json, asks a SubjectAccessReview for every
// user x request of that file, tries every write of `writes` as every user of `writers` (impersonated,
// dryRun=All: escalation checks, nothing stored), asks every user's SelfSubjectRulesReview in each of
// `rulesNamespaces` (rules sorted: kube's order follows its informer's map), writes
// test/golden/rbac-matrix/decisions.json, then deletes what it applied. Usage: node scripts/capture-rbac-matrix.mjs URL TOKEN KUBECONFIG (the reference of
// ../shared/reference/kube-up.sh; URL TOKEN as in /tmp/ref-url.txt).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
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
const { objects, users, requests, writes, writers, rulesNamespaces } = JSON.parse(readFileSync(fixture, 'utf8'));
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

/** POST `body` to `path` as user `u` (impersonated with its groups). */
// (node:https: fetch would join the Impersonate-Group headers into one comma-separated group.)
function postAs(u, path, body) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'impersonate-user': u.user };
  if (u.groups.length > 0) headers['impersonate-group'] = u.groups;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${url}${path}`, { method: 'POST', headers, rejectUnauthorized: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ code: res.statusCode, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** The collection path of an RBAC object. */
function collectionPath(o) {
  const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : '';
  return `/apis/rbac.authorization.k8s.io/v1${ns}/${o.kind.toLowerCase()}s`;
}

const sortedJson = (list) => (list ?? []).map((r) => JSON.stringify(r)).sort();

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
  // The user as the reference sees it when impersonated (impersonation adds system:authenticated).
  const userInfo = {};
  for (const u of users) {
    const r = await postAs(u, '/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    // Anonymous may not ask; impersonation keeps its groups as given.
    userInfo[u.user] = r.code === 201 ? r.body.status.userInfo : { username: u.user, groups: u.groups };
  }
  const writeCases = [];
  for (const name of writers) {
    const u = users.find((x) => x.user === name);
    for (let i = 0; i < writes.length; i++) {
      const r = await postAs(u, `${collectionPath(writes[i])}?dryRun=All`, writes[i]);
      writeCases.push({ user: name, write: i, code: r.code, message: r.code === 201 ? undefined : r.body.message });
    }
  }
  const rulesCases = [];
  for (const u of users) {
    for (const namespace of rulesNamespaces) {
      const r = await postAs(u, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectRulesReview',
        spec: { namespace },
      });
      if (r.code !== 201) {
        rulesCases.push({ user: u.user, namespace, code: r.code, message: r.body.message });
        continue;
      }
      const st = r.body.status;
      rulesCases.push({
        user: u.user,
        namespace,
        resourceRules: sortedJson(st.resourceRules),
        nonResourceRules: sortedJson(st.nonResourceRules),
        incomplete: st.incomplete,
        evaluationError: st.evaluationError,
      });
    }
  }
  const out = join(root, 'test', 'golden', 'rbac-matrix', 'decisions.json');
  writeFileSync(out, `${JSON.stringify({ userInfo, cases, writeCases, rulesCases }, null, 1)}\n`);
  console.log(
    `${cases.length} access reviews (${cases.filter((c) => c.status.allowed).length} allowed), ${writeCases.length} writes ` +
      `(${writeCases.filter((c) => c.code === 201).length} allowed), ${rulesCases.length} rules reviews`,
  );
} finally {
  kubectl(['delete', '--ignore-not-found', '--wait=false', '-f', '-'], list);
}
