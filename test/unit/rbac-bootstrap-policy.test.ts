/**
 * The bootstrap RBAC policy is created and reconciled as kube-apiserver's `rbac/bootstrap-roles`
 * hook does: missing objects created, removed rules and subjects put back, extra ones kept, objects
 * annotated `rbac.authorization.kubernetes.io/autoupdate: "false"` left alone, a binding whose roleRef
 * changed recreated.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUTO_UPDATE, bootstrapPolicy, ensureBootstrapPolicy } from '../../src/auth/rbac/bootstrap-policy.js';
import { rulesOf } from '../../src/auth/rbac/policy-rule.js';
import { uncoveredRules } from '../../src/auth/rbac/rule-coverage.js';
import { RBAC_TYPES } from '../../src/auth/rbac/rbac-policy.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';

async function read(storage: MemoryStorage, type: string, key: string): Promise<any> {
  const stored = await storage.get(type, key);
  assert.ok(stored, key);
  return JSON.parse(stored.json);
}

test('every object of the policy is created, with metadata as kube stores it', async () => {
  const storage = new MemoryStorage({ historyMs: 60_000 });
  await ensureBootstrapPolicy(storage);
  const policy = bootstrapPolicy();
  assert.ok(policy.clusterRoles.length >= 60 && policy.clusterRoleBindings.length >= 40);
  assert.equal((await storage.list(RBAC_TYPES.clusterRoles)).items.length, policy.clusterRoles.length);
  assert.equal((await storage.list(RBAC_TYPES.clusterRoleBindings)).items.length, policy.clusterRoleBindings.length);
  assert.equal((await storage.list(RBAC_TYPES.roles)).items.length, policy.roles.length);
  assert.equal((await storage.list(RBAC_TYPES.roleBindings)).items.length, policy.roleBindings.length);
  const admin = await read(storage, RBAC_TYPES.clusterRoles, 'cluster-admin');
  assert.equal(admin.kind, 'ClusterRole');
  assert.equal(admin.metadata.annotations[AUTO_UPDATE], 'true');
  assert.equal(typeof admin.metadata.uid, 'string');
  assert.deepEqual(admin.rules, [
    { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    { nonResourceURLs: ['*'], verbs: ['*'] },
  ]);
  await storage.close();
});

test('reconcile puts back removed rules and subjects, keeps additions, and respects autoupdate=false', async () => {
  const storage = new MemoryStorage({ historyMs: 60_000 });
  await ensureBootstrapPolicy(storage);
  const discovery = await read(storage, RBAC_TYPES.clusterRoles, 'system:discovery');
  const extra = { apiGroups: [''], resources: ['pods'], verbs: ['get'] };
  const edited = { ...discovery, rules: [extra] };
  await storage.update(RBAC_TYPES.clusterRoles, 'system:discovery', edited, discovery.metadata.resourceVersion);
  const basic = await read(storage, RBAC_TYPES.clusterRoles, 'system:basic-user');
  basic.metadata.annotations[AUTO_UPDATE] = 'false';
  basic.rules = [];
  await storage.update(RBAC_TYPES.clusterRoles, 'system:basic-user', basic, basic.metadata.resourceVersion);
  const binding = await read(storage, RBAC_TYPES.clusterRoleBindings, 'system:discovery');
  const extraSubject = { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'someone' };
  await storage.update(RBAC_TYPES.clusterRoleBindings, 'system:discovery', { ...binding, subjects: [extraSubject] }, binding.metadata.resourceVersion);
  const moved = await read(storage, RBAC_TYPES.clusterRoleBindings, 'system:public-info-viewer');
  moved.roleRef.name = 'view';
  await storage.update(RBAC_TYPES.clusterRoleBindings, 'system:public-info-viewer', moved, moved.metadata.resourceVersion);

  await ensureBootstrapPolicy(storage);
  const after = await read(storage, RBAC_TYPES.clusterRoles, 'system:discovery');
  // kube appends the missing permissions broken down, one verb and URL per rule.
  assert.deepEqual(after.rules[0], extra);
  assert.deepEqual(uncoveredRules(rulesOf(after), rulesOf(discovery)), []);
  assert.ok(after.rules.slice(1).every((r: any) => r.verbs.length === 1 && r.nonResourceURLs.length === 1));
  assert.deepEqual((await read(storage, RBAC_TYPES.clusterRoles, 'system:basic-user')).rules, []);
  assert.deepEqual((await read(storage, RBAC_TYPES.clusterRoleBindings, 'system:discovery')).subjects, [extraSubject, ...binding.subjects]);
  const recreated = await read(storage, RBAC_TYPES.clusterRoleBindings, 'system:public-info-viewer');
  assert.equal(recreated.roleRef.name, 'system:public-info-viewer');
  assert.notEqual(recreated.metadata.uid, moved.metadata.uid);
  await storage.close();
});
