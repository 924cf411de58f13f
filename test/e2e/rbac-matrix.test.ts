/**
 * The RBAC matrix: the roles and bindings of test/fixtures/rbac-matrix/policy.json over the bootstrap
 * policy, and a SubjectAccessReview for every user x request of that file (users, groups, service
 * accounts; verbs, resources, subresources, resourceNames, namespaces, non-resource URLs,
 * aggregation, bootstrap roles, missing roles). Capstan must give the reference kube-apiserver's
 * decision and reason (test/golden/rbac-matrix/decisions.json, by scripts/capture-rbac-matrix.mjs).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const fixture = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'rbac-matrix', 'policy.json'), 'utf8')) as { objects: any[] };
const golden = JSON.parse(readFileSync(join(root, 'test', 'golden', 'rbac-matrix', 'decisions.json'), 'utf8')) as {
  cases: Array<{ spec: Record<string, unknown>; status: Record<string, unknown> }>;
};

let srv: TestServer;

function collectionPath(o: any): string {
  const [group, version] = String(o.apiVersion).includes('/') ? String(o.apiVersion).split('/') : ['', o.apiVersion];
  const base = group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
  const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : '';
  return `${base}${ns}/${String(o.kind).toLowerCase()}s`;
}

async function sar(spec: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await api(srv.url, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec }),
  });
  assert.equal(r.status, 201, r.text);
  return r.body.status;
}

before(async () => {
  srv = await startTestServer({ authorizationMode: 'RBAC' });
  for (const o of fixture.objects) {
    const r = await api(srv.url, collectionPath(o), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(o) });
    assert.equal(r.status, 201, r.text);
  }
  // The last binding and the aggregated role have reached the authorizer.
  const robot = { user: 'system:serviceaccount:rbacm-a:robot', resourceAttributes: { verb: 'list', resource: 'services', namespace: 'rbacm-a' } };
  const star = { user: 'rbacm-star', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'rbacm-b' } };
  const deadline = Date.now() + 10_000;
  while ((await sar(robot)).allowed !== true || (await sar(star)).allowed !== true) {
    assert.ok(Date.now() < deadline, 'the fixture never took effect');
    await new Promise((r) => setImmediate(r));
  }
});
after(async () => {
  await srv?.stop();
});

/** The request a case asks about, whoever asks. */
function requestKey(spec: Record<string, unknown>): string {
  return JSON.stringify(spec.resourceAttributes ?? spec.nonResourceAttributes);
}

test(`Capstan decides like the reference on all ${golden.cases.length} cases`, async () => {
  assert.ok(golden.cases.length >= 300);
  // When several bindings allow a request, kube names whichever its informer's map yields first:
  // the reference's reasons for one request vary from user to user. Capstan may name any binding
  // the reference named as allowing that request.
  const allowReasons = new Map<string, Set<unknown>>();
  for (const c of golden.cases) {
    if (c.status.allowed !== true) continue;
    const key = requestKey(c.spec);
    if (!allowReasons.has(key)) allowReasons.set(key, new Set());
    allowReasons.get(key)?.add(c.status.reason);
  }
  const mismatches: string[] = [];
  const answers = new Array<Record<string, unknown>>(golden.cases.length);
  for (let i = 0; i < golden.cases.length; i += 16) {
    await Promise.all(golden.cases.slice(i, i + 16).map(async (c, j) => (answers[i + j] = await sar(c.spec))));
  }
  golden.cases.forEach((c, i) => {
    const got = answers[i];
    if (JSON.stringify(got) === JSON.stringify(c.status)) return;
    if (got.allowed === true && c.status.allowed === true && allowReasons.get(requestKey(c.spec))?.has(got.reason) === true) return;
    mismatches.push(`${JSON.stringify(c.spec)}\n  want ${JSON.stringify(c.status)}\n  got  ${JSON.stringify(got)}`);
  });
  assert.equal(mismatches.length, 0, `${mismatches.length} mismatches:\n${mismatches.slice(0, 20).join('\n')}`);
});
