/**
 * The RBAC matrix: the roles and bindings of test/fixtures/rbac-matrix/policy.json over the bootstrap
 * policy; a SubjectAccessReview for every user x request of that file (users, groups, service
 * accounts; verbs, resources, subresources, resourceNames, namespaces, non-resource URLs,
 * aggregation, bootstrap roles, missing roles), every write of `writes` as every user of `writers`
 * (dry-run creates of roles and bindings: authorization, escalation and bind checks), and every
 * user's SelfSubjectRulesReview. Capstan must give the reference kube-apiserver's decisions, codes
 * and messages (test/golden/rbac-matrix/decisions.json, by scripts/capture-rbac-matrix.mjs).
 * Requests act as the user named by the `x-matrix-user` header, with the groups the reference gave
 * that user; without it, as the administrator.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage } from 'node:http';
import type { Authenticator } from '../../src/auth/authenticator.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const fixture = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'rbac-matrix', 'policy.json'), 'utf8')) as { objects: any[]; writes: any[] };
const golden = JSON.parse(readFileSync(join(root, 'test', 'golden', 'rbac-matrix', 'decisions.json'), 'utf8')) as {
  userInfo: Record<string, { username: string; groups?: string[] }>;
  cases: Array<{ spec: Record<string, unknown>; status: Record<string, unknown> }>;
  writeCases: Array<{ user: string; write: number; code: number; message?: string }>;
  rulesCases: Array<Record<string, unknown> & { user: string; namespace: string }>;
};

const byHeader: Authenticator = {
  async authenticate(req: IncomingMessage) {
    const who = req.headers['x-matrix-user'];
    if (typeof who !== 'string') return { name: 'system:admin', uid: '', groups: ['system:masters', 'system:authenticated'], extra: {} };
    return { name: who, uid: '', groups: golden.userInfo[who]?.groups ?? [], extra: {} };
  },
};

/** POST `body` to `path` as `user`. */
function postAs(user: string, path: string, body: unknown): ReturnType<typeof api> {
  return api(srv.url, path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-matrix-user': user }, body: JSON.stringify(body) });
}

/** Runs `each` over `items`, 16 at a time. */
async function inBatches<T, R>(items: T[], each: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += 16) out.push(...(await Promise.all(items.slice(i, i + 16).map(each))));
  return out;
}

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
  srv = await startTestServer({ authorizationMode: 'RBAC' }, undefined, { authenticator: byHeader });
  for (const o of fixture.objects) {
    const r = await api(srv.url, collectionPath(o), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(o) });
    assert.equal(r.status, 201, r.text);
  }
  // The last binding and the aggregated role have reached the authorizer.
  const robot = { user: 'system:serviceaccount:rbacm-a:robot', resourceAttributes: { verb: 'list', resource: 'services', namespace: 'rbacm-a' } };
  const star = { user: 'rbacm-star', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'rbacm-b' } };
  const jack = { user: 'rbacm-jack', resourceAttributes: { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' } };
  const deadline = Date.now() + 10_000;
  while ((await sar(robot)).allowed !== true || (await sar(star)).allowed !== true || (await sar(jack)).allowed !== true) {
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
  const answers = await inBatches(golden.cases, (c) => sar(c.spec));
  golden.cases.forEach((c, i) => {
    const got = answers[i];
    if (JSON.stringify(got) === JSON.stringify(c.status)) return;
    if (got.allowed === true && c.status.allowed === true && allowReasons.get(requestKey(c.spec))?.has(got.reason) === true) return;
    mismatches.push(`${JSON.stringify(c.spec)}\n  want ${JSON.stringify(c.status)}\n  got  ${JSON.stringify(got)}`);
  });
  assert.equal(mismatches.length, 0, `${mismatches.length} mismatches:\n${mismatches.slice(0, 20).join('\n')}`);
});

test(`writes of roles and bindings are refused or allowed like the reference's: ${golden.writeCases.length} cases`, async () => {
  const mismatches: string[] = [];
  const answers = await inBatches(golden.writeCases, (c) => {
    const o = fixture.writes[c.write];
    const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : '';
    return postAs(c.user, `/apis/rbac.authorization.k8s.io/v1${ns}/${String(o.kind).toLowerCase()}s?dryRun=All`, o);
  });
  golden.writeCases.forEach((c, i) => {
    const got = answers[i];
    const message = got.status === 201 ? undefined : got.body.message;
    if (got.status !== c.code || message !== c.message) {
      mismatches.push(`${c.user} ${JSON.stringify(fixture.writes[c.write])}\n  want ${c.code} ${c.message ?? ''}\n  got  ${got.status} ${message ?? ''}`);
    }
  });
  assert.equal(mismatches.length, 0, `${mismatches.length} mismatches:\n${mismatches.slice(0, 10).join('\n')}`);
});

test(`SelfSubjectRulesReview (kubectl auth can-i --list) lists the reference's rules: ${golden.rulesCases.length} cases`, async () => {
  const mismatches: string[] = [];
  const answers = await inBatches(golden.rulesCases, (c) =>
    postAs(c.user, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: c.namespace },
    }),
  );
  golden.rulesCases.forEach((c, i) => {
    const got = answers[i];
    let mine: Record<string, unknown>;
    if (got.status !== 201) {
      mine = { user: c.user, namespace: c.namespace, code: got.status, message: got.body.message };
    } else {
      const st = got.body.status;
      const sorted = (list: unknown[] | undefined) => (list ?? []).map((r) => JSON.stringify(r)).sort();
      mine = {
        user: c.user,
        namespace: c.namespace,
        resourceRules: sorted(st.resourceRules),
        nonResourceRules: sorted(st.nonResourceRules),
        incomplete: st.incomplete,
        evaluationError: st.evaluationError,
      };
    }
    if (JSON.stringify(mine) !== JSON.stringify(c)) mismatches.push(`want ${JSON.stringify(c)}\n  got  ${JSON.stringify(mine)}`);
  });
  assert.equal(mismatches.length, 0, `${mismatches.length} mismatches:\n${mismatches.slice(0, 5).join('\n')}`);
});
