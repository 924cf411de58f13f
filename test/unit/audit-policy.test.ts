/**
 * Audit policies as kube-apiserver 1.36 reads and applies them: the first matching rule decides the
 * level (None when none matches), omitStages of the policy and the rule are united, omitManagedFields
 * of a rule overrides the policy's; users, groups, verbs, namespaces, resources (`*`, `pods/log`,
 * `*​/status`, `deployments/*`, resourceNames, group `*`) and non-resource URLs (trailing `*`) match as
 * kube's checker does. Invalid policies are refused with the reference's messages (captured by starting
 * kube-apiserver 1.36 with each file).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuditPolicy, type AuditAttributes } from '../../src/audit/audit-policy.js';

function attrs(a: Partial<AuditAttributes>): AuditAttributes {
  return {
    user: { name: 'alice', groups: ['devs', 'system:authenticated'] },
    verb: 'get',
    resourceRequest: true,
    apiGroup: '',
    apiVersion: 'v1',
    namespace: 'ns',
    resource: 'pods',
    subresource: '',
    name: 'p',
    path: '/api/v1/namespaces/ns/pods/p',
    ...a,
  };
}

const POLICY = AuditPolicy.parse(`
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: [system:kube-proxy]
- level: RequestResponse
  userGroups: [auditors]
  omitManagedFields: false
- level: Request
  verbs: [create, update]
  resources:
  - group: apps
    resources: ["deployments/*"]
- level: Metadata
  resources:
  - group: ""
    resources: ["pods/log", "*/status"]
  omitStages: [ResponseComplete]
- level: Request
  namespaces: [kube-system]
- level: Metadata
  resources:
  - group: ""
    resources: [configmaps]
    resourceNames: [controller-leader]
- level: RequestResponse
  resources:
  - group: "*"
    resources: ["widgets"]
- level: Metadata
  nonResourceURLs: ["/healthz*", /version]
- level: None
  resources:
  - group: ""
- level: Request
`);

function levelOf(a: Partial<AuditAttributes>): string {
  return POLICY.evaluate(attrs(a)).level;
}

test('the first matching rule decides; users, groups and verbs narrow a rule', () => {
  assert.equal(levelOf({ user: { name: 'system:kube-proxy', groups: ['auditors'] } }), 'None');
  assert.equal(levelOf({ user: { name: 'bob', groups: ['auditors'] } }), 'RequestResponse');
  assert.equal(levelOf({ apiGroup: 'apps', resource: 'deployments', subresource: 'scale', verb: 'update' }), 'Request');
  assert.equal(levelOf({ apiGroup: 'apps', resource: 'deployments', subresource: 'scale', verb: 'get' }), 'Request', 'falls to the catch-all');
  // "deployments/*" matches the deployment itself too (kube trims "/*" and compares the resource).
  const strict = AuditPolicy.parse(
    'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: apps, resources: ["deployments/*"]}]\n',
  );
  assert.equal(strict.evaluate(attrs({ apiGroup: 'apps', resource: 'deployments' })).level, 'Metadata');
  assert.equal(strict.evaluate(attrs({ apiGroup: 'apps', resource: 'deployments', subresource: 'status' })).level, 'Metadata');
  assert.equal(strict.evaluate(attrs({ apiGroup: 'apps', resource: 'replicasets' })).level, 'None');
});

test('resources: subresources, wildcards, resourceNames, group "*", namespaces', () => {
  assert.equal(levelOf({ subresource: 'log' }), 'Metadata');
  assert.equal(levelOf({ resource: 'services', subresource: 'status' }), 'Metadata');
  assert.equal(levelOf({ resource: 'services', subresource: 'proxy' }), 'None', 'the core-group rule');
  assert.equal(levelOf({ namespace: 'kube-system', resource: 'secrets' }), 'Request');
  assert.equal(levelOf({ resource: 'configmaps', name: 'controller-leader' }), 'Metadata');
  assert.equal(levelOf({ resource: 'configmaps', name: 'other' }), 'None');
  assert.equal(levelOf({ apiGroup: 'example.com', resource: 'widgets' }), 'RequestResponse');
  assert.equal(levelOf({ apiGroup: 'example.com', resource: 'gadgets' }), 'Request');
});

test('non-resource URLs: exact or trailing *, never for resource requests', () => {
  const nonResource = { resourceRequest: false, resource: '', name: '', namespace: '', apiVersion: '' };
  assert.equal(levelOf({ ...nonResource, path: '/healthz' }), 'Metadata');
  assert.equal(levelOf({ ...nonResource, path: '/healthz/etcd' }), 'Metadata');
  assert.equal(levelOf({ ...nonResource, path: '/version' }), 'Metadata');
  assert.equal(levelOf({ ...nonResource, path: '/version/x' }), 'Request');
  assert.equal(levelOf({ path: '/healthz' }), 'None', 'a resource request never matches a non-resource rule');
});

test('omitStages are united; omitManagedFields of the rule wins over the policy', () => {
  const log = POLICY.evaluate(attrs({ subresource: 'log' }));
  assert.deepEqual([...log.omitStages].sort(), ['RequestReceived', 'ResponseComplete']);
  assert.equal(log.omitManagedFields, true);
  const auditor = POLICY.evaluate(attrs({ user: { name: 'bob', groups: ['auditors'] } }));
  assert.deepEqual([...auditor.omitStages], ['RequestReceived']);
  assert.equal(auditor.omitManagedFields, false);
  const unauthenticated = AuditPolicy.parse('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  users: [a]\n');
  assert.equal(unauthenticated.evaluate(attrs({ user: undefined })).level, 'None', 'no rule matches: None');
});

test('invalid policies are refused with the reference messages', () => {
  const refusal = (text: string): string => {
    try {
      AuditPolicy.parse(text);
    } catch (err) {
      return (err as Error).message;
    }
    return 'accepted';
  };
  assert.equal(refusal('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n'), 'loaded illegal policy with 0 rules');
  assert.equal(
    refusal(
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: ["Bogus"]\nrules:\n- level: Bogus\n- nonResourceURLs: ["api/*x", "/a*b"]\n  namespaces: ["x"]\n  level: Metadata\n- level: Metadata\n  resources:\n  - group: "Bad_Group"\n    resourceNames: ["a"]\n',
    ),
    '[omitStages[0]: Invalid value: "Bogus": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic, ' +
      'rules[0].level: Unsupported value: "Bogus": supported values: "None", "Metadata", "Request", "RequestResponse", ' +
      `rules[1].nonResourceURLs[0]: Invalid value: "api/*x": non-resource URL rules must begin with a '/' character, ` +
      `rules[1].nonResourceURLs[0]: Invalid value: "api/*x": non-resource URL wildcards '*' must be the final character of the rule, ` +
      `rules[1].nonResourceURLs[1]: Invalid value: "/a*b": non-resource URL wildcards '*' must be the final character of the rule, ` +
      'rules[1].nonResourceURLs: Invalid value: ["api/*x","/a*b"]: rules cannot apply to both regular resources and non-resource URLs, ' +
      `rules[2].resources.group: Invalid value: "Bad_Group": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), ` +
      'rules[2].resources.resourceNames: Invalid value: ["a"]: using resourceNames requires at least one resource]',
  );
  assert.equal(refusal('kind: Policy\nrules:\n- level: None\n'), 'unknown group version field audit.k8s.io/__internal, Kind=Policy in policy');
  assert.equal(
    refusal('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n'),
    'failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1" in scheme "pkg/runtime/scheme.go:111"',
  );
  assert.equal(refusal('apiVersion: audit.k8s.io/v1\nrules:\n- level: None\n'), 'accepted', 'kind may be left out');
  assert.equal(refusal('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  bogusField: 1\n'), 'accepted', 'unknown fields: lenient');
  assert.match(refusal('rules: [\n'), /^failed decoding: yaml: /);
});
