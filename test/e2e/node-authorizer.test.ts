/**
 * The Node authorizer and NodeRestriction against the reference (test/golden/node-authorizer/cases.json,
 * recorded by scripts/capture-node-authorizer-goldens.mjs from a kube-apiserver with the Node mode and
 * NodeRestriction): the golden's Nodes, ServiceAccounts, claims, volumes, attachments, slices and pods
 * bound to the nodes are created in Capstan (`--authorization-mode=Node,RBAC`,
 * `--enable-admission-plugins=NodeRestriction`); every SubjectAccessReview of the golden (node users,
 * a node name without the group, the group without a name) must get the reference's status, and every
 * write a node sends (impersonated) the reference's code and message. Then: a pod bound after the
 * start is reachable for its node at once, and unreachable once deleted; with two servers on one Redis,
 * a pod bound through one is reachable for its node through the other as soon as the write returns.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { connectRedisBackend } from '../../src/storage/redis/open-redis.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { startRedis } from '../helpers/redis-process.js';

interface NodeUser {
  user: string;
  groups: string[];
}
interface WriteCase {
  as: NodeUser;
  method: string;
  path: string;
  body?: unknown;
  contentType?: string;
  code: number;
  reason?: string;
  message?: string;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const golden = JSON.parse(readFileSync(join(root, 'test', 'golden', 'node-authorizer', 'cases.json'), 'utf8')) as {
  objects: Array<{ path: string; body: { metadata: { name: string } } }>;
  placeholders: Array<{ name: string; path: string }>;
  csrs: Record<string, string>;
  cases: Array<{ spec: Record<string, unknown>; status: Record<string, unknown> }>;
  writeCases: WriteCase[];
  rulesCases: Array<{ as: NodeUser; status: Record<string, unknown> }>;
};

let srv: TestServer;
const uids: Record<string, string> = {};

function headersFor(as: NodeUser | undefined, contentType = 'application/json'): Headers {
  const h = new Headers({ 'content-type': contentType });
  if (as !== undefined) {
    h.set('impersonate-user', as.user);
    for (const g of as.groups) h.append('impersonate-group', g);
  }
  return h;
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

/** Placeholders (`$uid:NAME`, `$csr:NAME`) replaced by Capstan's uids and the golden's CSRs. */
function resolve(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value.startsWith('$uid:')) return uids[value.slice(5)] ?? value;
    if (value.startsWith('$csr:')) return golden.csrs[value.slice(5)] ?? value;
    return value;
  }
  if (Array.isArray(value)) return value.map(resolve);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
  return value;
}

function normalize(text: string): string {
  let out = text;
  for (const [name, uid] of Object.entries(uids)) out = out.split(uid).join(`$uid:${name}`);
  return out;
}

const nodeA = { user: 'system:node:authz-node-a', groups: ['system:nodes'] };

before(async () => {
  srv = await startTestServer({ authorizationMode: 'Node,RBAC', enableAdmissionPlugins: ['NodeRestriction'] });
  for (const o of golden.objects) {
    const r = await api(srv.url, o.path, { method: 'POST', headers: headersFor(undefined), body: JSON.stringify(o.body) });
    assert.equal(r.status, 201, `${o.path} ${o.body.metadata.name}: ${r.text}`);
  }
  for (const p of golden.placeholders) {
    const r = await api(srv.url, p.path);
    assert.equal(r.status, 200, r.text);
    uids[p.name] = r.body.metadata.uid;
  }
});
after(async () => {
  await srv?.stop();
});

test(`the Node authorizer decides like the reference on all ${golden.cases.length} access reviews`, async () => {
  assert.ok(golden.cases.length >= 100);
  const answers = await Promise.all(golden.cases.map((c) => sar(c.spec)));
  const mismatches: string[] = [];
  golden.cases.forEach((c, i) => {
    if (JSON.stringify(answers[i]) !== JSON.stringify(c.status)) {
      mismatches.push(`${JSON.stringify(c.spec)}\n  want ${JSON.stringify(c.status)}\n  got  ${JSON.stringify(answers[i])}`);
    }
  });
  assert.equal(mismatches.length, 0, `${mismatches.length} mismatches:\n${mismatches.slice(0, 20).join('\n')}`);
});

test(`node writes get the reference's answers (NodeRestriction and the authorizer): ${golden.writeCases.length} cases`, async () => {
  const mismatches: string[] = [];
  for (const w of golden.writeCases) {
    const r = await api(srv.url, w.path, {
      method: w.method,
      headers: headersFor(w.as, w.contentType),
      body: w.body === undefined ? undefined : JSON.stringify(resolve(w.body)),
    });
    const message = r.body?.kind === 'Status' && typeof r.body.message === 'string' ? normalize(r.body.message) : undefined;
    // kube ends this message with a Go structural diff of the two claims; the sentence before it is compared.
    const cut = (m: string | undefined): string | undefined => m?.replace(/(status\.quantity and status\.conditions:).*$/s, '$1');
    const same = r.status === w.code && (w.message === undefined || cut(message) === cut(w.message)) && (w.reason === undefined || r.body?.reason === w.reason);
    if (!same)
      mismatches.push(`${w.as.user} ${w.method} ${w.path}\n  want ${w.code} ${w.message ?? ''}\n  got  ${r.status} ${message ?? r.text.slice(0, 200)}`);
  }
  assert.equal(mismatches.length, 0, `${mismatches.length} mismatches:\n${mismatches.join('\n')}`);
});

test("a node's SelfSubjectRulesReview is the reference's (incomplete: the Node mode lists no rules)", async () => {
  const sorted = (status: Record<string, unknown>): unknown => ({
    ...status,
    resourceRules: ((status.resourceRules as unknown[]) ?? []).map((r) => JSON.stringify(r)).sort(),
    nonResourceRules: ((status.nonResourceRules as unknown[]) ?? []).map((r) => JSON.stringify(r)).sort(),
  });
  for (const c of golden.rulesCases) {
    const r = await api(srv.url, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      method: 'POST',
      headers: headersFor(c.as),
      body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'authz-n1' } }),
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(sorted(r.body.status), sorted(c.status), JSON.stringify(c.as));
  }
});

test('a pod bound to a node makes its secret readable by that node at once, and its deletion takes that back', async () => {
  const pods = '/api/v1/namespaces/authz-n1/pods';
  const secret = { resourceAttributes: { verb: 'get', resource: 'secrets', namespace: 'authz-n1', name: 's-late' } };
  const ask = { user: nodeA.user, groups: nodeA.groups, ...secret };
  assert.equal((await sar(ask)).allowed, false);
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'pod-late' },
    spec: {
      nodeName: 'authz-node-a',
      containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
      volumes: [{ name: 's', secret: { secretName: 's-late' } }],
    },
  };
  const created = await api(srv.url, pods, { method: 'POST', headers: headersFor(undefined), body: JSON.stringify(pod) });
  assert.equal(created.status, 201, created.text);
  // No retry: the answer right after the write must already see the pod.
  assert.equal((await sar(ask)).allowed, true);
  const read = await api(srv.url, '/api/v1/namespaces/authz-n1/secrets/s-late', { headers: headersFor(nodeA) });
  assert.equal(read.status, 404, read.text);
  const deleted = await api(srv.url, `${pods}/pod-late?gracePeriodSeconds=0`, { method: 'DELETE', headers: headersFor(undefined) });
  assert.equal(deleted.status, 200, deleted.text);
  assert.deepEqual(await sar(ask), { allowed: false, reason: "no relationship found between node 'authz-node-a' and this object" });
});

test('on Redis, a pod bound through one server is reachable for its node through the other at once', async () => {
  const redis = await startRedis();
  const keyPrefix = `t${randomBytes(4).toString('hex')}:`;
  const open = (): ReturnType<typeof connectRedisBackend> => connectRedisBackend({ url: redis.url, keyPrefix, historyMs: 300_000 });
  const config = { authorizationMode: 'Node,RBAC', enableAdmissionPlugins: ['NodeRestriction'] };
  const a = await startTestServer(config, await open());
  const b = await startTestServer(config, await open(), { runControllers: false });
  try {
    const post = async (url: string, path: string, body: unknown): Promise<void> => {
      const r = await api(url, path, { method: 'POST', headers: headersFor(undefined), body: JSON.stringify(body) });
      assert.equal(r.status, 201, r.text);
    };
    await post(a.url, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'authz-r' } });
    // The pods run as the namespace's `default` ServiceAccount, which the controllers create.
    const readAsNode = (url: string, name: string): ReturnType<typeof api> =>
      api(url, `/api/v1/namespaces/authz-r/configmaps/${name}`, { headers: headersFor(nodeA) });
    for (let i = 0; i < 5; i++) {
      assert.equal((await readAsNode(b.url, `cm-${i}`)).status, 403);
      await post(a.url, '/api/v1/namespaces/authz-r/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p-${i}` },
        spec: { nodeName: 'authz-node-a', containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10', envFrom: [{ configMapRef: { name: `cm-${i}` } }] }] },
      });
      // Allowed (the config map does not exist: 404), through the server that did not take the write.
      const read = await readAsNode(b.url, `cm-${i}`);
      assert.equal(read.status, 404, read.text);
    }
  } finally {
    await b.stop();
    await a.stop();
    await redis.stop();
  }
});
