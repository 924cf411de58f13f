#!/usr/bin/env node
// Records a reference kube-apiserver's Node authorizer and NodeRestriction behaviour: creates two
// namespaces, three Nodes, ServiceAccounts, and pods bound to the nodes that name secrets, config
// maps, claims and resource claims in every way kube's node graph follows (plus a PersistentVolume
// bound to a claim, a VolumeAttachment and a ResourceSlice); asks a SubjectAccessReview for every
// node user x request below; sends every write below as a node (impersonated: user
// system:node:NAME, group system:nodes; creates mostly dryRun=All) and records its code and message,
// and a node's SelfSubjectRulesReview;
// writes test/golden/node-authorizer/cases.json, then deletes what it created.
// The reference must run with the Node mode and NodeRestriction:
//   cd ../shared/reference && KCM_ARGS='--controllers=*,-node-lifecycle-controller' ./kube-up.sh \
//     --authorization-mode=Node --enable-admission-plugins=NodeRestriction
// (kube-up.sh already passes --authorization-mode=RBAC: the modes become RBAC,Node; no request here
// is decided differently for that order). Usage: node scripts/capture-node-authorizer-goldens.mjs URL TOKEN
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { objects, placeholders, sarRequests, sarUsers, writes } from '../test/fixtures/node-authorizer/fixture.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error('usage: capture-node-authorizer-goldens.mjs URL TOKEN');
  process.exit(2);
}
process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';

/** Sends a request as the administrator, or as `as` ({user, groups}) by impersonation. */
async function send(method, path, body, contentType = 'application/json', as = undefined) {
  const headers = new Headers({ authorization: `Bearer ${token}` });
  if (body !== undefined) headers.set('content-type', contentType);
  if (as !== undefined) {
    headers.set('impersonate-user', as.user);
    for (const g of as.groups) headers.append('impersonate-group', g);
  }
  const res = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { code: res.status, body: json, text };
}

/** Two CSRs (PEM, base64 as the API carries them) for the CSR cases, made with openssl. */
function csrFor(cn) {
  const dir = mkdtempSync(join(tmpdir(), 'node-csr-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-new',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'k'),
        '-out',
        join(dir, 'r'),
        '-subj',
        `/O=system:nodes/CN=${cn}`,
      ],
      { stdio: 'ignore' },
    );
    return Buffer.from(readFileSync(join(dir, 'r'))).toString('base64');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const csrs = { 'node-a': csrFor('system:node:authz-node-a'), 'node-b': csrFor('system:node:authz-node-b') };

/** Replaces `$uid:PATH` and `$csr:NAME` placeholders in a write's body with the reference's values. */
function resolve(value, uids) {
  if (typeof value === 'string') {
    if (value.startsWith('$uid:')) return uids[value.slice(5)] ?? value;
    if (value.startsWith('$csr:')) return csrs[value.slice(5)] ?? value;
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => resolve(v, uids));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, uids)]));
  return value;
}

/** The reference's uids in a message, as their placeholders. */
function normalize(text, uids) {
  let out = text;
  for (const [path, uid] of Object.entries(uids)) out = out.split(uid).join(`$uid:${path}`);
  return out;
}

// A previous run's namespaces may still be terminating.
for (let i = 0; (await send('GET', '/api/v1/namespaces/authz-n1')).code !== 404 || (await send('GET', '/api/v1/namespaces/authz-n2')).code !== 404; i++) {
  if (i > 600) throw new Error('the namespaces of a previous run are still there');
  await new Promise((r) => setTimeout(r, 100));
}
const created = [];
try {
  for (const o of objects) {
    const r = await send('POST', o.path, o.body);
    if (r.code !== 201) throw new Error(`create ${o.path} ${o.body.metadata.name}: ${r.code} ${r.text}`);
    created.push(`${o.path}/${o.body.metadata.name}`);
  }
  const uids = {};
  for (const p of placeholders) {
    const r = await send('GET', p.path);
    if (r.code !== 200) throw new Error(`get ${p.path}: ${r.code} ${r.text}`);
    uids[p.name] = r.body.metadata.uid;
  }
  // The node graph follows pods through an informer: wait until it knows the last pod.
  for (let i = 0; ; i++) {
    const s = await send('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'system:node:authz-node-b',
        groups: ['system:nodes'],
        resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'authz-n2', name: 's-b2' },
      },
    });
    if (s.body.status.allowed === true) break;
    if (i > 100) throw new Error('the node graph never saw the pods');
    await new Promise((r) => setTimeout(r, 100));
  }
  const cases = [];
  for (const u of sarUsers) {
    for (const req of sarRequests) {
      const spec = { user: u.user, groups: u.groups, ...req };
      const r = await send('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec,
      });
      if (r.code !== 201) throw new Error(`SubjectAccessReview: ${r.code} ${r.text}`);
      cases.push({ spec, status: r.body.status });
    }
  }
  const writeCases = [];
  for (const w of writes) {
    const r = await send(w.method, w.path, resolve(w.body, uids), w.contentType, w.as);
    const out = { ...w, code: r.code };
    if (r.body?.kind === 'Status') {
      out.reason = r.body.reason;
      if (typeof r.body.message === 'string') out.message = normalize(r.body.message, uids);
    }
    writeCases.push(out);
  }
  // What a node's SelfSubjectRulesReview says (kube's node authorizer cannot list its rules).
  const rulesCases = [];
  for (const as of [
    { user: 'system:node:authz-node-a', groups: ['system:nodes'] },
    { user: 'system:node:authz-node-a', groups: [] },
  ]) {
    const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'authz-n1' } };
    const r = await send('POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', body, 'application/json', as);
    if (r.code !== 201) throw new Error(`SelfSubjectRulesReview: ${r.code} ${r.text}`);
    rulesCases.push({ as, status: r.body.status });
  }
  const file = join(root, 'test', 'golden', 'node-authorizer', 'cases.json');
  writeFileSync(file, `${JSON.stringify({ objects, placeholders, csrs, cases, writeCases, rulesCases }, null, 1)}\n`);
  console.log(`wrote ${cases.length} access reviews and ${writeCases.length} writes to ${file}`);
} finally {
  for (const path of created.reverse()) {
    if (path.includes('/namespaces/authz-n')) continue;
    await send('DELETE', path);
  }
  await send('DELETE', '/api/v1/namespaces/authz-n1');
  await send('DELETE', '/api/v1/namespaces/authz-n2');
}
