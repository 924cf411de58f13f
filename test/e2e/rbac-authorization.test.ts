/**
 * RBAC authorization (--authorization-mode=RBAC): decisions, 403 messages, access reviews, the
 * bootstrap policy and its aggregation, escalation prevention, and policy changes reaching the
 * authorizer. Expected texts are the reference kube-apiserver 1.36's answers to the same requests.
 * Requests name their user with the `x-test-user` header (groups: `x-test-groups`); without it they
 * are the administrator (system:masters).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Authenticator } from '../../src/auth/authenticator.js';
import { parseAuthorizationModes } from '../../src/auth/authorizer.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const byHeader: Authenticator = {
  async authenticate(req: IncomingMessage) {
    const who = req.headers['x-test-user'];
    if (typeof who !== 'string') return { name: 'system:admin', uid: '', groups: ['system:masters', 'system:authenticated'], extra: {} };
    const extra = typeof req.headers['x-test-groups'] === 'string' ? req.headers['x-test-groups'].split(',') : [];
    return { name: who, uid: '', groups: [...extra, 'system:authenticated'], extra: {} };
  },
};

let srv: TestServer;
const as = (user: string, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { 'x-test-user': user, 'content-type': 'application/json', ...(init.headers ?? {}) },
});
const post = (body: unknown, user?: string): RequestInit => {
  const init = { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
  return user === undefined ? init : as(user, init);
};

async function sar(spec: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await api(
    srv.url,
    '/apis/authorization.k8s.io/v1/subjectaccessreviews',
    post({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec }),
  );
  assert.equal(r.status, 201, r.text);
  return r.body.status;
}

/** Asks until `check` holds (policy changes reach the authorizer through the change stream). */
async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`never: ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

async function create(path: string, body: unknown, user?: string): Promise<{ status: number; body: any; text: string }> {
  return api(srv.url, path, post(body, user));
}

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const role = (name: string, rules: unknown[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules });
const binding = (name: string, roleKind: string, roleName: string, subjects: unknown[]) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'RoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: roleKind, name: roleName },
  subjects,
});
const user = (name: string) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name });

before(async () => {
  srv = await startTestServer({ authorizationMode: 'RBAC' }, undefined, { authenticator: byHeader });
  assert.equal((await create('/api/v1/namespaces', { metadata: { name: 'demo' } })).status, 201);
  assert.equal((await create(`${RBAC}/namespaces/demo/roles`, role('getpods', [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]))).status, 201);
  assert.equal((await create(`${RBAC}/namespaces/demo/rolebindings`, binding('alice', 'Role', 'getpods', [user('alice')]))).status, 201);
  await eventually(
    async () => (await sar({ user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'demo' } })).allowed === true,
    'alice may get pods',
  );
});
after(async () => {
  await srv?.stop();
});

describe('--authorization-mode', () => {
  test("parses an ordered list and refuses what kube refuses, with kube's words", () => {
    assert.deepEqual(parseAuthorizationModes('RBAC,AlwaysAllow'), ['RBAC', 'AlwaysAllow']);
    assert.throws(() => parseAuthorizationModes('Bogus'), { message: 'authorization-mode "Bogus" is not a valid mode' });
    assert.throws(() => parseAuthorizationModes('RBAC,RBAC'), { message: 'authorization-mode ["RBAC","RBAC"] has mode specified more than once' });
    assert.throws(() => parseAuthorizationModes('ABAC,RBAC'), /authorization-mode "ABAC" is not supported by Capstan/);
  });
});

describe('RBAC decisions', () => {
  test("alice may get pods but not delete them: kube's 403", async () => {
    const get = await api(srv.url, '/api/v1/namespaces/demo/pods/x', as('alice'));
    assert.equal(get.status, 404, get.text);
    const del = await api(srv.url, '/api/v1/namespaces/demo/pods/x', as('alice', { method: 'DELETE' }));
    assert.equal(del.status, 403);
    // kube's authorization filter marks its refusals nosniff; a 404 from a handler is not marked.
    assert.equal(del.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(get.headers.get('x-content-type-options'), null);
    assert.deepEqual(del.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'pods "x" is forbidden: User "alice" cannot delete resource "pods" in API group "" in the namespace "default"'.replace('default', 'demo'),
      reason: 'Forbidden',
      details: { name: 'x', kind: 'pods' },
      code: 403,
    });
  });

  test('dry-run writes are authorized as the real request', async () => {
    const r = await api(
      srv.url,
      '/api/v1/namespaces/demo/configmaps?dryRun=All',
      as('alice', { method: 'POST', body: JSON.stringify({ metadata: { name: 'c' } }) }),
    );
    assert.equal(r.status, 403);
    assert.equal(r.body.message, 'configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "demo"');
  });

  test('non-resource URLs: the bootstrap roles allow /healthz and /version to everyone, not /metrics', async () => {
    assert.equal((await api(srv.url, '/version', as('alice'))).status, 200);
    assert.equal((await api(srv.url, '/healthz', as('alice'))).status, 200);
    const metrics = await api(srv.url, '/metrics', as('alice'));
    assert.equal(metrics.status, 403);
    assert.equal(metrics.body.message, 'forbidden: User "alice" cannot get path "/metrics"');
  });

  test("SubjectAccessReview gives RBAC's reasons: the allowing binding, a missing role", async () => {
    assert.deepEqual(await sar({ user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'demo', name: 'p' } }), {
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "alice/demo" of Role "getpods" to User "alice"',
    });
    assert.deepEqual(await sar({ user: 'alice', resourceAttributes: { verb: 'delete', resource: 'pods', namespace: 'demo' } }), { allowed: false });
    assert.equal((await create(`${RBAC}/namespaces/demo/rolebindings`, binding('ghost', 'Role', 'nope', [user('bob')]))).status, 201);
    await eventually(
      async () =>
        (await sar({ user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'demo' } })).reason ===
        'RBAC: role.rbac.authorization.k8s.io "nope" not found',
      'the missing role is the reason',
    );
  });

  test('subresources, */scale, resourceNames and service account subjects', async () => {
    const rules = [
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
      { apiGroups: ['*'], resources: ['*/scale'], verbs: ['update'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['one'] },
    ];
    assert.equal((await create(`${RBAC}/namespaces/demo/roles`, role('mixed', rules))).status, 201);
    assert.equal(
      (await create(`${RBAC}/namespaces/demo/rolebindings`, binding('sa', 'Role', 'mixed', [{ kind: 'ServiceAccount', name: 'robot' }]))).status,
      201,
    );
    const sa = 'system:serviceaccount:demo:robot';
    const ask = async (attrs: Record<string, unknown>) => (await sar({ user: sa, resourceAttributes: { namespace: 'demo', ...attrs } })).allowed;
    await eventually(async () => (await ask({ verb: 'get', resource: 'pods', subresource: 'log' })) === true, 'pods/log');
    assert.equal(await ask({ verb: 'get', resource: 'pods' }), false);
    assert.equal(await ask({ verb: 'update', group: 'apps', resource: 'deployments', subresource: 'scale' }), true);
    assert.equal(await ask({ verb: 'update', group: 'apps', resource: 'deployments' }), false);
    assert.equal(await ask({ verb: 'get', resource: 'configmaps', name: 'one' }), true);
    assert.equal(await ask({ verb: 'get', resource: 'configmaps', name: 'two' }), false);
    assert.equal(await ask({ verb: 'list', resource: 'configmaps' }), false);
  });

  test("a Namespace's own path is in that namespace, and a list naming one object by field selector names it (kube's request attributes)", async () => {
    assert.equal((await create('/api/v1/namespaces', { metadata: { name: 'dave-ns' } })).status, 201);
    const rules = [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get'] }];
    assert.equal((await create(`${RBAC}/namespaces/dave-ns/roles`, role('getns', rules))).status, 201);
    const listOne = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'], resourceNames: ['abc'] }];
    assert.equal((await create(`${RBAC}/namespaces/dave-ns/roles`, role('listabc', listOne))).status, 201);
    for (const r of ['getns', 'listabc']) {
      assert.equal((await create(`${RBAC}/namespaces/dave-ns/rolebindings`, binding(r, 'Role', r, [user('dave')]))).status, 201);
    }
    await eventually(async () => (await api(srv.url, '/api/v1/namespaces/dave-ns', as('dave'))).status === 200, 'dave gets his namespace');
    const other = await api(srv.url, '/api/v1/namespaces/demo', as('dave'));
    assert.equal(other.status, 403);
    assert.equal(other.body.message, 'namespaces "demo" is forbidden: User "dave" cannot get resource "namespaces" in API group "" in the namespace "demo"');
    const named = await api(srv.url, '/api/v1/namespaces/dave-ns/configmaps?fieldSelector=metadata.name%3Dabc', as('dave'));
    assert.equal(named.status, 200, named.text);
    const all = await api(srv.url, '/api/v1/namespaces/dave-ns/configmaps', as('dave'));
    assert.equal(all.status, 403);
    assert.equal(all.body.message, 'configmaps is forbidden: User "dave" cannot list resource "configmaps" in API group "" in the namespace "dave-ns"');
    const otherName = await api(srv.url, '/api/v1/namespaces/dave-ns/configmaps?fieldSelector=metadata.name%3Dxyz', as('dave'));
    assert.equal(otherName.status, 403);
    assert.equal(
      otherName.body.message,
      'configmaps "xyz" is forbidden: User "dave" cannot list resource "configmaps" in API group "" in the namespace "dave-ns"',
    );
  });

  test('a deleted binding stops allowing', async () => {
    assert.equal((await create(`${RBAC}/namespaces/demo/rolebindings`, binding('carol', 'Role', 'getpods', [user('carol')]))).status, 201);
    const carol = async () => (await sar({ user: 'carol', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'demo' } })).allowed;
    await eventually(async () => (await carol()) === true, 'carol allowed');
    assert.equal((await api(srv.url, `${RBAC}/namespaces/demo/rolebindings/carol`, { method: 'DELETE' })).status, 200);
    await eventually(async () => (await carol()) === false, 'carol refused');
  });

  test('SelfSubjectRulesReview lists the rules of every binding of the requester', async () => {
    const r = await create(
      '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'demo' } },
      'alice',
    );
    assert.equal(r.status, 201, r.text);
    assert.ok(r.body.status.resourceRules.some((x: any) => x.resources?.[0] === 'pods' && x.verbs[0] === 'get'));
    assert.ok(r.body.status.nonResourceRules.some((x: any) => x.nonResourceURLs?.includes('/version')));
    assert.equal(r.body.status.incomplete, false);
  });
});

describe('bootstrap policy', () => {
  test("kube's cluster roles exist, marked for auto-update; admin, edit and view are aggregated", async () => {
    for (const name of ['cluster-admin', 'system:discovery', 'system:basic-user', 'system:public-info-viewer', 'system:controller:namespace-controller']) {
      const r = await api(srv.url, `${RBAC}/clusterroles/${name}`);
      assert.equal(r.status, 200, name);
      assert.equal(r.body.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'], 'true');
    }
    await eventually(async () => ((await api(srv.url, `${RBAC}/clusterroles/view`)).body.rules ?? []).length > 0, 'view aggregated');
    const b = await api(srv.url, `${RBAC}/clusterrolebindings/cluster-admin`);
    assert.deepEqual(b.body.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:masters' }]);
    assert.equal((await api(srv.url, `${RBAC}/namespaces/kube-system/roles/extension-apiserver-authentication-reader`)).status, 200);
  });

  test('a cluster role labelled aggregate-to-view adds its rules to view, and they go when it goes', async () => {
    const rule = { apiGroups: ['rbac-test.example.com'], resources: ['widgets'], verbs: ['get'] };
    const cr = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'rbac-test-widgets', labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } },
      rules: [rule],
    };
    assert.equal((await create(`${RBAC}/clusterroles`, cr)).status, 201);
    const hasRule = async () =>
      ((await api(srv.url, `${RBAC}/clusterroles/view`)).body.rules as unknown[]).some((r) => JSON.stringify(r) === JSON.stringify(rule));
    await eventually(hasRule, 'view has the widget rule');
    assert.equal((await api(srv.url, `${RBAC}/clusterroles/rbac-test-widgets`, { method: 'DELETE' })).status, 200);
    await eventually(async () => !(await hasRule()), 'view lost the widget rule');
  });
});

describe('escalation prevention', () => {
  before(async () => {
    const rules = [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: ['create', 'get'] }];
    assert.equal((await create(`${RBAC}/namespaces/demo/roles`, role('mk', rules))).status, 201);
    assert.equal((await create(`${RBAC}/namespaces/demo/rolebindings`, binding('eve', 'Role', 'mk', [user('eve')]))).status, 201);
    await eventually(
      async () =>
        (await sar({ user: 'eve', resourceAttributes: { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'roles', namespace: 'demo' } }))
          .allowed === true,
      'eve may create roles',
    );
  });

  test("a role granting more than its creator holds is 403 with kube's message", async () => {
    const r = await create(
      `${RBAC}/namespaces/demo/roles`,
      role('big', [{ apiGroups: [''], resources: ['secrets', 'pods'], verbs: ['get', 'delete'] }]),
      'eve',
    );
    assert.equal(r.status, 403);
    assert.equal(
      r.body.message,
      'roles.rbac.authorization.k8s.io "big" is forbidden: user "eve" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["pods"], Verbs:["get" "delete"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
    );
    const small = await create(
      `${RBAC}/namespaces/demo/roles`,
      role('small', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['get'] }]),
      'eve',
    );
    assert.equal(small.status, 201, small.text);
  });

  test('a PATCH of a role that adds permissions its user does not hold is 403, as a merge, JSON or strategic merge patch, and the role stays', async () => {
    const patchRule = [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['patch'] }];
    assert.equal((await create(`${RBAC}/namespaces/demo/roles`, role('patcher', patchRule))).status, 201);
    assert.equal((await create(`${RBAC}/namespaces/demo/rolebindings`, binding('eve-patcher', 'Role', 'patcher', [user('eve')]))).status, 201);
    const held = [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['get'] }];
    assert.equal((await create(`${RBAC}/namespaces/demo/roles`, role('tiny', held))).status, 201);
    await eventually(
      async () =>
        (await sar({ user: 'eve', resourceAttributes: { verb: 'patch', group: 'rbac.authorization.k8s.io', resource: 'roles', namespace: 'demo' } }))
          .allowed === true,
      'eve may patch roles',
    );
    const secrets = { apiGroups: [''], resources: ['secrets'], verbs: ['get'] };
    const patch = (type: string, body: unknown) =>
      api(srv.url, `${RBAC}/namespaces/demo/roles/tiny`, as('eve', { method: 'PATCH', headers: { 'content-type': type }, body: JSON.stringify(body) }));
    for (const [type, body] of [
      ['application/merge-patch+json', { rules: [...held, secrets] }],
      ['application/json-patch+json', [{ op: 'add', path: '/rules/-', value: secrets }]],
      ['application/strategic-merge-patch+json', { rules: [...held, secrets] }],
    ] as const) {
      const r = await patch(type, body);
      assert.equal(r.status, 403, `${type}: ${r.text}`);
      assert.match(
        r.body.message,
        /^roles.rbac.authorization.k8s.io "tiny" is forbidden: user "eve" .* is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["secrets"\], Verbs:\["get"\]\}$/,
      );
    }
    const stored = await api(srv.url, `${RBAC}/namespaces/demo/roles/tiny`);
    assert.deepEqual(stored.body.rules, held);
    const within = await patch('application/json-patch+json', [{ op: 'add', path: '/rules/0/verbs/-', value: 'create' }]);
    assert.equal(within.status, 200, within.text);
    assert.deepEqual(within.body.rules, [{ ...held[0], verbs: ['get', 'create'] }]);
  });

  test("binding a role needs its permissions or bind; a missing role is kube's 404", async () => {
    const r = await create(`${RBAC}/namespaces/demo/rolebindings`, binding('b2', 'Role', 'getpods', [user('x')]), 'eve');
    assert.equal(r.status, 403);
    assert.match(
      r.body.message,
      /^rolebindings.rbac.authorization.k8s.io "b2" is forbidden: user "eve" \(groups=\["system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["get"\]\}$/,
    );
    const missing = await create(`${RBAC}/namespaces/demo/rolebindings`, binding('b3', 'Role', 'nope', [user('x')]), 'eve');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'rolebindings.rbac.authorization.k8s.io "nope" not found');
    const bindRule = [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['bind'], resourceNames: ['getpods'] }];
    assert.equal((await create(`${RBAC}/namespaces/demo/roles`, role('binder', bindRule))).status, 201);
    assert.equal((await create(`${RBAC}/namespaces/demo/rolebindings`, binding('eve-binder', 'Role', 'binder', [user('eve')]))).status, 201);
    await eventually(
      async () => (await create(`${RBAC}/namespaces/demo/rolebindings`, binding('b4', 'Role', 'getpods', [user('x')]), 'eve')).status === 201,
      'bind allows',
    );
  });
});
