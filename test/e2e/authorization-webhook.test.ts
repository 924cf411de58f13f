/**
 * --authorization-mode=Webhook,RBAC: a remote service is asked first with kube's SubjectAccessReview
 * (v1beta1 by default: groups under `group`); its allow allows, its deny refuses without asking RBAC,
 * its no opinion leaves the request to RBAC, and a webhook that cannot be reached makes a request
 * nobody allowed a 500. Answers are reused for the TTLs.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Authenticator } from '../../src/auth/authenticator.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

const byHeader: Authenticator = {
  async authenticate(req: IncomingMessage) {
    const who = req.headers['x-test-user'];
    if (typeof who !== 'string') return { name: 'system:admin', uid: '', groups: ['system:masters', 'system:authenticated'], extra: {} };
    return { name: who, uid: '', groups: ['system:authenticated'], extra: {} };
  },
};

let srv: TestServer;
let hook: Server;
let dir: string;
const seen: any[] = [];

before(async () => {
  hook = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const review = JSON.parse(body);
      seen.push(review);
      const user = review.spec.user;
      const status =
        user === 'hook-yes'
          ? { allowed: true, reason: 'hook says yes' }
          : user === 'hook-no'
            ? { allowed: false, denied: true, reason: 'hook says no' }
            : { allowed: false, reason: 'hook does not know' };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ...review, status }));
    });
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const port = (hook.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), 'capstan-webhook-'));
  const configFile = join(dir, 'webhook.kubeconfig');
  writeFileSync(
    configFile,
    `apiVersion: v1\nkind: Config\nclusters:\n- name: hook\n  cluster:\n    server: http://127.0.0.1:${port}/authorize\nusers:\n- name: apiserver\n  user:\n    token: secret\ncontexts:\n- name: hook\n  context: {cluster: hook, user: apiserver}\ncurrent-context: hook\n`,
  );
  srv = await startTestServer(
    { authorizationMode: 'Webhook,RBAC', authorizationWebhook: { configFile, version: 'v1beta1', authorizedTtlMs: 60_000, unauthorizedTtlMs: 0 } },
    undefined,
    { authenticator: byHeader },
  );
});
after(async () => {
  await srv?.stop();
  hook?.close();
  rmSync(dir, { recursive: true, force: true });
});

const as = (user: string) => ({ headers: { 'x-test-user': user } });

test("the webhook's allow, deny and no opinion, in the chain's order", async () => {
  assert.equal((await api(srv.url, '/api/v1/namespaces/default/configmaps', as('hook-yes'))).status, 200);
  const review = seen.at(-1);
  assert.deepEqual(review, {
    apiVersion: 'authorization.k8s.io/v1beta1',
    kind: 'SubjectAccessReview',
    metadata: { creationTimestamp: null },
    spec: {
      user: 'hook-yes',
      group: ['system:authenticated'],
      resourceAttributes: { namespace: 'default', verb: 'list', group: '', version: 'v1', resource: 'configmaps', subresource: '', name: '' },
    },
    status: { allowed: false },
  });
  // /version is allowed to every authenticated user by RBAC, but the webhook's deny comes first.
  const denied = await api(srv.url, '/version', as('hook-no'));
  assert.equal(denied.status, 403);
  assert.equal(denied.body.message, 'forbidden: User "hook-no" cannot get path "/version": hook says no');
  assert.equal((await api(srv.url, '/version', as('someone'))).status, 200);
  const refused = await api(srv.url, '/api/v1/namespaces/default/secrets', as('someone'));
  assert.equal(refused.status, 403);
  assert.equal(
    refused.body.message,
    'secrets is forbidden: User "someone" cannot list resource "secrets" in API group "" in the namespace "default": hook does not know',
  );
});

test('allowed answers are reused for the authorized TTL', async () => {
  const before = seen.length;
  assert.equal((await api(srv.url, '/api/v1/namespaces/default/configmaps', as('hook-yes'))).status, 200);
  assert.equal(seen.length, before);
});

test('an unreachable webhook: 500 for what nobody else allows, RBAC still allows what it allows', async () => {
  await new Promise<void>((r) => hook.close(() => r()));
  hook.closeAllConnections();
  assert.equal((await api(srv.url, '/version', as('nobody-else'))).status, 200);
  const r = await api(srv.url, '/api/v1/namespaces/default/secrets', as('nobody-else'));
  assert.equal(r.status, 500);
  assert.equal(r.body.reason, 'InternalError');
  assert.match(r.body.message, /^Internal error occurred: Post "http:\/\/127\.0\.0\.1:\d+\/authorize": /);
});
