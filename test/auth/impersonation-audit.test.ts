/**
 * The audit event of an impersonated request records the constrained-impersonation mode that allowed
 * it, as kube-apiserver 1.36 does (`authenticationMetadata.impersonationConstraint`: the mode's
 * `impersonate:MODE` verb), and nothing when legacy impersonation (`impersonate`) allowed it: the
 * mode impersonation actually used, whoever the requester is.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';
import { httpsRequest, type TlsIdentity } from './https-client.js';

type Event = Record<string, any>;
const NS = 'imp-audit';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const rule = (apiGroups: string[], resources: string[], verbs: string[], resourceNames?: string[]) => ({
  apiGroups,
  resources,
  verbs,
  ...(resourceNames ? { resourceNames } : {}),
});
const bind = (kind: 'Role' | 'ClusterRole', name: string) => ({
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
  subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'robot' }],
});
const policy: [string, unknown][] = [
  ['/api/v1/namespaces', { metadata: { name: NS } }],
  [
    `${RBAC}/clusterroles`,
    {
      metadata: { name: 'imp-audit' },
      rules: [
        // robot may impersonate service account "other" in serviceaccount mode, and user carol only the legacy way.
        rule(['authentication.k8s.io'], ['serviceaccounts'], ['impersonate:serviceaccount'], ['other']),
        rule([''], ['users'], ['impersonate'], ['carol']),
      ],
    },
  ],
  [`${RBAC}/clusterrolebindings`, bind('ClusterRole', 'imp-audit')],
  [`${RBAC}/namespaces/${NS}/roles`, { metadata: { name: 'imp-on' }, rules: [rule([''], ['pods'], ['impersonate-on:serviceaccount:list'])] }],
  [`${RBAC}/namespaces/${NS}/rolebindings`, bind('Role', 'imp-on')],
  [
    `${RBAC}/namespaces/${NS}/rolebindings`,
    {
      metadata: { name: 'impersonated-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [
        { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'carol' },
        { kind: 'ServiceAccount', name: 'other', namespace: NS },
      ],
    },
  ],
];

let dir: string;
let proc: CapstanProcess;
let url: string;
let tls: TlsIdentity;
let log: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'capstan-imp-audit-'));
  writeFileSync(join(dir, 'tokens.csv'), 'tok-robot,robot,robot-uid\n');
  writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
  log = join(dir, 'audit.log');
  proc = await spawnCapstan([
    '--port=0',
    `--cert-dir=${join(dir, 'pki')}`,
    `--token-auth-file=${join(dir, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    `--audit-log-path=${log}`,
    `--audit-policy-file=${join(dir, 'policy.yaml')}`,
  ]);
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

/** The ResponseComplete event of the request with this audit ID, once written. */
async function eventOf(auditId: string): Promise<Event> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const events = existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as Event)
      : [];
    const found = events.find((e) => e.auditID === auditId && e.stage === 'ResponseComplete');
    if (found !== undefined) return found;
    assert.ok(Date.now() < deadline, `no ResponseComplete event for ${auditId}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Lists the namespace's pods as robot impersonating `user` (waiting briefly for the policy to reach the authorizer). */
async function listAs(user: string): Promise<Event> {
  const deadline = Date.now() + 10_000;
  for (let i = 0; ; i++) {
    const auditId = `imp-audit-${user}-${i}`;
    const r = await httpsRequest(`${url}/api/v1/namespaces/${NS}/pods`, tls, {
      headers: { authorization: 'Bearer tok-robot', 'Impersonate-User': user, 'Audit-ID': auditId },
    });
    if (r.status === 200) return eventOf(auditId);
    assert.ok(Date.now() < deadline, `${user}: ${r.text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('the mode that allowed the impersonation is the recorded constraint', async () => {
  const asServiceAccount = await listAs(`system:serviceaccount:${NS}:other`);
  assert.equal(asServiceAccount.impersonatedUser.username, `system:serviceaccount:${NS}:other`);
  assert.deepEqual(asServiceAccount.authenticationMetadata, { impersonationConstraint: 'impersonate:serviceaccount' });
  // carol: the user-info mode is refused (no impersonate-on), legacy impersonation allows; no constraint recorded.
  const asCarol = await listAs('carol');
  assert.equal(asCarol.impersonatedUser.username, 'carol');
  assert.equal(asCarol.authenticationMetadata, undefined);
  // The mode cached for robot (legacy) does not allow the service account: serviceaccount mode is found again.
  assert.deepEqual((await listAs(`system:serviceaccount:${NS}:other`)).authenticationMetadata, { impersonationConstraint: 'impersonate:serviceaccount' });
});
