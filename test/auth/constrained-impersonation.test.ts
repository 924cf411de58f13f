/**
 * Constrained impersonation (kube 1.36, on by default) under RBAC: a requester granted
 * `impersonate-on:MODE:VERB` on the request and `impersonate:MODE` on the wanted user's fields may
 * impersonate only that way, and a refused impersonation is the first mode's refusal. The expected
 * answers (403 messages, who the request acts as) were taken from kube-apiserver 1.36 with the same
 * roles and requests (a ServiceAccount requester there, a static token user here: the messages
 * differ only in the requester's name).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';
import { httpsRequest, type TlsIdentity } from './https-client.js';

const NS = 'imp2';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

const policy: [string, unknown][] = [
  ['/api/v1/namespaces', { metadata: { name: NS } }],
  [`/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'other' } }],
  [
    `${RBAC}/clusterroles`,
    {
      metadata: { name: 'imp-users' },
      rules: [
        { apiGroups: ['authentication.k8s.io'], resources: ['users'], resourceNames: ['bob'], verbs: ['impersonate:user-info'] },
        { apiGroups: ['authentication.k8s.io'], resources: ['serviceaccounts'], resourceNames: ['other'], verbs: ['impersonate:serviceaccount'] },
        { apiGroups: ['authentication.k8s.io'], resources: ['groups'], resourceNames: ['g1'], verbs: ['impersonate:user-info'] },
      ],
    },
  ],
  [
    `${RBAC}/clusterrolebindings`,
    {
      metadata: { name: 'imp-users' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'imp-users' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'robot' }],
    },
  ],
  [
    `${RBAC}/namespaces/${NS}/roles`,
    {
      metadata: { name: 'imp-on' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['impersonate-on:user-info:list', 'impersonate-on:serviceaccount:list'] }],
    },
  ],
  [
    `${RBAC}/namespaces/${NS}/rolebindings`,
    {
      metadata: { name: 'imp-on' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'imp-on' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'robot' }],
    },
  ],
  [
    `${RBAC}/namespaces/${NS}/rolebindings`,
    {
      metadata: { name: 'bob-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [
        { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' },
        { kind: 'ServiceAccount', name: 'other', namespace: NS },
      ],
    },
  ],
];

describe('constrained impersonation under RBAC', () => {
  let dir: string;
  let proc: CapstanProcess;
  let url: string;
  let tls: TlsIdentity;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-imp-'));
    writeFileSync(join(dir, 'tokens.csv'), 'tok-robot,robot,robot-uid\n');
    proc = await spawnCapstan(['--port=0', `--cert-dir=${join(dir, 'pki')}`, `--token-auth-file=${join(dir, 'tokens.csv')}`, '--authorization-mode=RBAC']);
    url = /"secureUrl":"([^"]+)"/.exec(proc.stderr())?.[1] ?? '';
    assert.notEqual(url, '', proc.stderr());
    tls = { ca: readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8') };
    for (const [path, body] of policy) {
      const r = await api(proc.url, path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(r.status, 201, `${path}: ${r.text}`);
    }
  });
  after(async () => {
    await proc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** GET `path` as robot with impersonation `headers`, waiting (briefly) for the policy to reach the authorizer. */
  async function asRobot(path: string, headers: Record<string, string | string[]>) {
    return httpsRequest(`${url}${path}`, tls, { headers: { authorization: 'Bearer tok-robot', ...headers } });
  }

  const forbidden = (message: string) => ({ status: 403, message });
  const pods = `/api/v1/namespaces/${NS}/pods`;

  test('allowed and refused impersonations, as kube-apiserver 1.36 answers them', async () => {
    // The policy was written through the plain port just before: wait until robot's first allowed case passes.
    const deadline = Date.now() + 10_000;
    while ((await asRobot(pods, { 'Impersonate-User': 'bob' })).status !== 200) {
      assert.ok(Date.now() < deadline, 'the impersonation policy did not take effect within 10 s');
      await new Promise((r) => setTimeout(r, 50));
    }
    const cases: [string, string, Record<string, string | string[]>, { status: number; message?: string }][] = [
      ['list pods as bob', pods, { 'Impersonate-User': 'bob' }, { status: 200 }],
      [
        'list configmaps as bob',
        `/api/v1/namespaces/${NS}/configmaps`,
        { 'Impersonate-User': 'bob' },
        forbidden('configmaps is forbidden: User "robot" cannot impersonate-on:user-info:list resource "configmaps" in API group "" in the namespace "imp2"'),
      ],
      [
        'get pod x as bob',
        `${pods}/x`,
        { 'Impersonate-User': 'bob' },
        forbidden('pods "x" is forbidden: User "robot" cannot impersonate-on:user-info:get resource "pods" in API group "" in the namespace "imp2"'),
      ],
      [
        'list pods as carol',
        pods,
        { 'Impersonate-User': 'carol' },
        forbidden(
          'users.authentication.k8s.io "carol" is forbidden: User "robot" cannot impersonate:user-info resource "users" in API group "authentication.k8s.io" at the cluster scope',
        ),
      ],
      ['list pods as bob in g1', pods, { 'Impersonate-User': 'bob', 'Impersonate-Group': 'g1' }, { status: 200 }],
      [
        'list pods as bob in g2',
        pods,
        { 'Impersonate-User': 'bob', 'Impersonate-Group': 'g2' },
        forbidden(
          'groups.authentication.k8s.io "g2" is forbidden: User "robot" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope',
        ),
      ],
      [
        'list pods as bob in system:masters',
        pods,
        { 'Impersonate-User': 'bob', 'Impersonate-Group': 'system:masters' },
        forbidden(
          'groups.authentication.k8s.io "system:masters" is forbidden: User "robot" cannot impersonate:user-info resource "groups" in API group "authentication.k8s.io" at the cluster scope: impersonating the system:masters group is not allowed',
        ),
      ],
      [
        'list pods as bob with a uid',
        pods,
        { 'Impersonate-User': 'bob', 'Impersonate-Uid': 'u1' },
        forbidden(
          'uids.authentication.k8s.io "u1" is forbidden: User "robot" cannot impersonate:user-info resource "uids" in API group "authentication.k8s.io" at the cluster scope',
        ),
      ],
      ['list pods as service account other', pods, { 'Impersonate-User': `system:serviceaccount:${NS}:other` }, { status: 200 }],
      [
        'list pods as service account robot',
        pods,
        { 'Impersonate-User': `system:serviceaccount:${NS}:robot` },
        forbidden(
          'serviceaccounts.authentication.k8s.io "robot" is forbidden: User "robot" cannot impersonate:serviceaccount resource "serviceaccounts" in API group "authentication.k8s.io" in the namespace "imp2"',
        ),
      ],
      [
        'list pods as service account other in g1 (only legacy impersonation applies)',
        pods,
        { 'Impersonate-User': `system:serviceaccount:${NS}:other`, 'Impersonate-Group': 'g1' },
        forbidden('serviceaccounts "other" is forbidden: User "robot" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "imp2"'),
      ],
      [
        'list pods as a node',
        pods,
        { 'Impersonate-User': 'system:node:n1' },
        forbidden('pods is forbidden: User "robot" cannot impersonate-on:arbitrary-node:list resource "pods" in API group "" in the namespace "imp2"'),
      ],
    ];
    for (const [name, path, headers, expected] of cases) {
      const r = await asRobot(path, headers);
      assert.equal(r.status, expected.status, `${name}: ${r.text}`);
      if (expected.message !== undefined) assert.equal(r.body.message, expected.message, name);
    }
  });

  test('impersonation granted for one verb does not extend to another (a SelfSubjectReview create)', async () => {
    const r = await httpsRequest(`${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`, tls, {
      headers: { authorization: 'Bearer tok-robot', 'Impersonate-User': 'bob' },
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    // robot may impersonate bob only to list pods: creating a review as bob is refused on the request itself.
    assert.equal(r.status, 403, r.text);
    assert.equal(
      r.body.message,
      'selfsubjectreviews.authentication.k8s.io is forbidden: User "robot" cannot impersonate-on:user-info:create resource "selfsubjectreviews" in API group "authentication.k8s.io" at the cluster scope',
    );
  });
});
