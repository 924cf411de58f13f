import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Obj } from '../../src/api/object-util.js';
import type { User } from '../../src/api/user.js';
import { BindingsBySubject } from '../../src/auth/rbac/bindings-by-subject.js';
import { RbacAuthorizer } from '../../src/auth/rbac/rbac-authorizer.js';
import { RBAC_TYPES, WatchedPolicy } from '../../src/auth/rbac/rbac-policy.js';
import type { AuthorizationAttributes } from '../../src/auth/authorizer.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';

function binding(name: string, subjects: Obj[], namespace?: string): Obj {
  return {
    metadata: namespace === undefined ? { name } : { name, namespace },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'reader' },
    subjects,
  };
}

function user(name: string, groups: string[] = []): User {
  return { name, uid: '', groups, extra: {} };
}

function names(bindings: Iterable<Obj>): string[] {
  return [...bindings].map((b) => String((b.metadata as Obj).name));
}

test('the bindings that may name a user are every binding naming them, once each, in the listing order', () => {
  const bindings = [
    binding('group-a', [{ kind: 'Group', name: 'a' }]),
    binding('alice-and-a', [
      { kind: 'User', name: 'alice' },
      { kind: 'Group', name: 'a' },
      { kind: 'User', name: 'alice' },
    ]),
    binding('bob', [{ kind: 'User', name: 'bob' }]),
    binding('sa-with-namespace', [{ kind: 'ServiceAccount', name: 'builder', namespace: 'ci' }]),
    binding('sa-without-namespace', [{ kind: 'ServiceAccount', name: 'builder' }]),
    binding('group-b', [{ kind: 'Group', name: 'b' }]),
    binding('odd-kind', [{ kind: 'Robot', name: 'alice' }]),
    binding('no-subjects', []),
  ];
  const cluster = new BindingsBySubject(bindings, '');
  assert.deepEqual(names(cluster.for(user('alice', ['b', 'a']))), ['group-a', 'alice-and-a', 'group-b']);
  assert.deepEqual(names(cluster.for(user('carol', ['a', 'a']))), ['group-a', 'alice-and-a']);
  assert.deepEqual(names(cluster.for(user('bob'))), ['bob']);
  assert.deepEqual(names(cluster.for(user('dave', ['c']))), []);
  // A ServiceAccount subject without a namespace names nobody in a ClusterRoleBinding...
  assert.deepEqual(names(cluster.for(user('system:serviceaccount:ci:builder'))), ['sa-with-namespace']);
  // ...and the binding's own namespace in a RoleBinding.
  const inDev = new BindingsBySubject(bindings, 'dev');
  assert.deepEqual(names(inDev.for(user('system:serviceaccount:dev:builder'))), ['sa-without-namespace']);
  assert.deepEqual(names(inDev.for(user('system:serviceaccount:ci:builder'))), ['sa-with-namespace']);
  // A User subject spelled as a service account's user name names that service account's user too.
  const spelled = new BindingsBySubject([binding('by-user-name', [{ kind: 'User', name: 'system:serviceaccount:ci:builder' }])], '');
  assert.deepEqual(names(spelled.for(user('system:serviceaccount:ci:builder'))), ['by-user-name']);
});

function getPods(u: User, namespace: string): AuthorizationAttributes {
  return {
    user: u,
    verb: 'get',
    namespace,
    resourceRequest: true,
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'pods',
    subresource: '',
    name: '',
    path: `/api/v1/namespaces/${namespace}/pods`,
  };
}

/** Resolves once `check` holds, re-checking after each turn of the event loop (bounded). */
async function eventually(check: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 1000; turn++) {
    if (check()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.fail(`never: ${what}`);
}

test('a decision follows binding changes made after the bindings were indexed', async () => {
  const storage = new MemoryStorage({ historyMs: 60_000 });
  await storage.create(RBAC_TYPES.clusterRoles, 'reader', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'reader' },
    rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
  });
  const policy = new WatchedPolicy(storage, (err) => assert.fail(String(err)));
  await policy.start();
  try {
    const rbac = new RbacAuthorizer(policy);
    const alice = user('alice', ['team']);
    const allowed = (namespace: string): boolean => rbac.decide(getPods(alice, namespace)).allowed;
    assert.equal(allowed('dev'), false);

    // A ClusterRoleBinding created after the (empty) index was built grants at once it is applied.
    await storage.create(RBAC_TYPES.clusterRoleBindings, 'team-reads', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      ...binding('team-reads', [{ kind: 'Group', name: 'team' }]),
    });
    await eventually(() => allowed('dev'), 'the new ClusterRoleBinding grants');
    assert.equal(rbac.decide(getPods(alice, 'dev')).reason, 'RBAC: allowed by ClusterRoleBinding "team-reads" of ClusterRole "reader" to Group "team"');
    await storage.delete(RBAC_TYPES.clusterRoleBindings, 'team-reads');
    await eventually(() => !allowed('dev'), 'the deleted ClusterRoleBinding no longer grants');

    // A RoleBinding: granted in its namespace only, and revoked when its subject is changed.
    const roleBinding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      ...binding('alice-reads', [{ kind: 'User', name: 'alice' }], 'dev'),
    };
    const created = await storage.create(RBAC_TYPES.roleBindings, 'dev/alice-reads', roleBinding);
    await eventually(() => allowed('dev'), 'the new RoleBinding grants');
    assert.equal(allowed('prod'), false);
    await storage.update(RBAC_TYPES.roleBindings, 'dev/alice-reads', { ...roleBinding, subjects: [{ kind: 'User', name: 'bob' }] }, created.resourceVersion);
    await eventually(() => !allowed('dev'), 'the RoleBinding naming someone else no longer grants');
    assert.equal(rbac.decide(getPods(user('bob'), 'dev')).allowed, true);
  } finally {
    policy.stop();
  }
});
