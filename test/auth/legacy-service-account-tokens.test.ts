/**
 * Legacy Secret-based service account tokens as kube-apiserver 1.36 with kube-controller-manager
 * handles them: a Secret of type kubernetes.io/service-account-token naming an existing account
 * gets a token (claims as the reference's: `iss: kubernetes/serviceaccount`, the
 * `kubernetes.io/serviceaccount/*` claims, `sub`, no expiry), `ca.crt`, `namespace` and the
 * account's uid annotation; the token authenticates (TokenReview) as the account, records the day
 * in the `kubernetes.io/legacy-token-last-used` label, is refused while the Secret has
 * `kubernetes.io/legacy-token-invalid-since` or holds another token, and once the account is
 * deleted (its Secrets go with it).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { eventually } from '../helpers/redis-workers.js';

const ns = 'authz-legacy';
let srv: TestServer;
let certDir: string;

const json = { 'content-type': 'application/json' };
const secrets = `/api/v1/namespaces/${ns}/secrets`;

async function post(path: string, body: unknown): Promise<any> {
  const r = await api(srv.url, path, { method: 'POST', headers: json, body: JSON.stringify(body) });
  assert.equal(r.status, 201, r.text);
  return r.body;
}

/** Watches `path` (a single object's collection, by name) until `done` holds for an event's object, or it is deleted. */
async function waitFor(name: string, done: (obj: any) => boolean): Promise<any> {
  const list = await api(srv.url, `${secrets}?fieldSelector=metadata.name=${name}`);
  const first = list.body.items[0];
  if (first === undefined || done(first)) return first;
  const res = await fetch(`${srv.url}${secrets}?watch=1&fieldSelector=metadata.name=${name}&resourceVersion=${list.body.metadata.resourceVersion}`);
  const reader = res.body?.getReader();
  assert.ok(reader);
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done: ended } = await reader.read();
      assert.equal(ended, false, 'the watch ended first');
      buffered += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const event = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (event.type === 'DELETED') return undefined;
        if (done(event.object)) return event.object;
      }
    }
  } finally {
    await reader.cancel();
  }
}

async function review(token: string): Promise<any> {
  const r = await post('/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
  return r.status;
}

function tokenSecret(name: string, account: string): unknown {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, annotations: { 'kubernetes.io/service-account.name': account } },
    type: 'kubernetes.io/service-account-token',
  };
}

const decode = (b64: string): string => Buffer.from(b64, 'base64').toString('utf8');

before(async () => {
  certDir = mkdtempSync(join(tmpdir(), 'capstan-legacy-'));
  srv = await startTestServer({ securePort: 0, certDir });
  await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});
after(async () => {
  await srv?.stop();
  rmSync(certDir, { recursive: true, force: true });
});

test('the tokens controller fills a token Secret as kube-controller-manager does, and the token authenticates', async () => {
  const account = await post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot' } });
  await post(secrets, tokenSecret('bot-token', 'bot'));
  const secret = await waitFor('bot-token', (s) => s.data?.token !== undefined);
  assert.deepEqual(Object.keys(secret.data).sort(), ['ca.crt', 'namespace', 'token']);
  assert.equal(decode(secret.data.namespace), ns);
  assert.match(decode(secret.data['ca.crt']), /^-----BEGIN CERTIFICATE-----/);
  assert.equal(secret.metadata.annotations['kubernetes.io/service-account.uid'], account.metadata.uid);
  const token = decode(secret.data.token);
  const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
  assert.deepEqual(claims, {
    iss: 'kubernetes/serviceaccount',
    'kubernetes.io/serviceaccount/namespace': ns,
    'kubernetes.io/serviceaccount/secret.name': 'bot-token',
    'kubernetes.io/serviceaccount/service-account.name': 'bot',
    'kubernetes.io/serviceaccount/service-account.uid': account.metadata.uid,
    sub: `system:serviceaccount:${ns}:bot`,
  });

  const ok = await review(token);
  assert.equal(ok.authenticated, true, JSON.stringify(ok));
  assert.deepEqual(ok.user, {
    username: `system:serviceaccount:${ns}:bot`,
    uid: account.metadata.uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
  });
  const today = new Date().toISOString().slice(0, 10);
  const used = await waitFor('bot-token', (s) => s.metadata.labels?.['kubernetes.io/legacy-token-last-used'] !== undefined);
  assert.equal(used.metadata.labels['kubernetes.io/legacy-token-last-used'], today);

  // Marked invalid: refused with kube's message, until the label goes.
  const mark = (value: string | null): Promise<unknown> =>
    api(srv.url, `${secrets}/bot-token`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { labels: { 'kubernetes.io/legacy-token-invalid-since': value } } }),
    });
  // kube caches successful authentications for 10 s (kube-apiserver 1.36.4 does the same): the mark
  // refuses the token once the cached answer expires.
  await mark('2026-01-01');
  let refused = await review(token);
  await eventually(
    async () => {
      refused = await review(token);
      return refused.authenticated === undefined;
    },
    'the cached token to expire',
    30_000,
  );
  assert.match(
    refused.error,
    /the token in secret authz-legacy\/bot-token for service account authz-legacy\/bot has been marked invalid\. Use tokens from the TokenRequest API or manually created secret-based tokens, or remove the 'kubernetes.io\/legacy-token-invalid-since' label from the secret to temporarily allow use of this token/,
  );
  await mark(null);
  assert.equal((await review(token)).authenticated, true);

  // Deleting the account deletes its token Secrets, and the token with them.
  const del = await api(srv.url, `/api/v1/namespaces/${ns}/serviceaccounts/bot`, { method: 'DELETE' });
  assert.equal(del.status, 200, del.text);
  assert.equal(await waitFor('bot-token', () => false), undefined);
  let gone = await review(token);
  await eventually(
    async () => {
      gone = await review(token);
      return gone.authenticated === undefined;
    },
    'the cached token to expire',
    30_000,
  );
  assert.match(gone.error, /Token has been invalidated/);
});

test("a Secret for a missing account is deleted; a Secret holding another token is not the token's", async () => {
  await post(secrets, tokenSecret('nobody-token', 'nobody'));
  assert.equal(await waitFor('nobody-token', () => false), undefined);

  await post(`/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bot2' } });
  await post(secrets, tokenSecret('bot2-token', 'bot2'));
  const secret = await waitFor('bot2-token', (s) => s.data?.token !== undefined);
  const token = decode(secret.data.token);
  const replaced = await api(srv.url, `${secrets}/bot2-token`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ data: { token: Buffer.from('other').toString('base64') } }),
  });
  assert.equal(replaced.status, 200, replaced.text);
  const r = await review(token);
  assert.equal(r.authenticated, undefined);
  assert.match(r.error, /Token does not match server's copy/);
});
