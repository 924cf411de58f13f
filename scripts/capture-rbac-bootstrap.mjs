#!/usr/bin/env node
// Records kube-apiserver's bootstrap RBAC policy (every ClusterRole, ClusterRoleBinding, Role and
// RoleBinding labelled kubernetes.io/bootstrapping=rbac-defaults) as schema/rbac-bootstrap-policy.json,
// which Capstan creates and reconciles at start. Server-set metadata is stripped; the rules of roles
// with an aggregationRule are left out, as kube's policy leaves them to the aggregation controller.
// Usage: node scripts/capture-rbac-bootstrap.mjs KUBECONFIG (a kubeconfig of a freshly started
// ../shared/reference/kube-up.sh, see docs/development.md).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const kubeconfig = process.argv[2];
if (!kubeconfig) {
  console.error('usage: capture-rbac-bootstrap.mjs KUBECONFIG');
  process.exit(2);
}
const kubectl = (args) => execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const SELECTOR = 'kubernetes.io/bootstrapping=rbac-defaults';

function clean(obj) {
  const { name, namespace, labels, annotations } = obj.metadata;
  const metadata = { name };
  if (namespace) metadata.namespace = namespace;
  if (labels) metadata.labels = labels;
  if (annotations) metadata.annotations = annotations;
  const out = { apiVersion: obj.apiVersion, kind: obj.kind, metadata };
  for (const [k, v] of Object.entries(obj)) if (!['apiVersion', 'kind', 'metadata'].includes(k)) out[k] = v;
  if (out.aggregationRule) delete out.rules;
  return out;
}

function list(resource, allNamespaces) {
  const args = ['get', resource, '-l', SELECTOR, '-o', 'json'];
  if (allNamespaces) args.push('--all-namespaces');
  return JSON.parse(kubectl(args)).items.map(clean);
}

const policy = {
  source: '',
  clusterRoles: list('clusterroles.rbac.authorization.k8s.io', false),
  clusterRoleBindings: list('clusterrolebindings.rbac.authorization.k8s.io', false),
  roles: list('roles.rbac.authorization.k8s.io', true),
  roleBindings: list('rolebindings.rbac.authorization.k8s.io', true),
};
policy.source = `kube-apiserver ${JSON.parse(kubectl(['version', '-o', 'json'])).serverVersion.gitVersion}`;
writeFileSync(join(root, 'schema', 'rbac-bootstrap-policy.json'), `${JSON.stringify(policy, null, 1)}\n`);
console.log(
  `${policy.clusterRoles.length} cluster roles, ${policy.clusterRoleBindings.length} cluster role bindings, ${policy.roles.length} roles, ${policy.roleBindings.length} role bindings`,
);
