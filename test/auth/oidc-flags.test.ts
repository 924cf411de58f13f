/**
 * The `--oidc-*` flags and the token webhook flags as kube-apiserver 1.36 takes them: kubectl with a
 * static OIDC token (`--token`, and a kubeconfig holding it) against an issuer served by this test,
 * kube's legacy username prefix, groups prefix, required claims and signing algorithms; a
 * TokenReview webhook (v1) called with a client certificate from its kubeconfig, its cache TTL, and
 * kube's error when it cannot be reached; `--anonymous-auth=true` turned off beside AlwaysAllow.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';
import { newKey, TestIssuer } from '../helpers/oidc-issuer.js';
import { TestTokenWebhook } from '../helpers/token-review-webhook.js';
import { eventually } from '../helpers/redis-workers.js';
import { kubectlFor } from '../e2e/kubectl.js';
import { httpsRequest } from './https-client.js';

const ADMIN_TOKEN = 'admin-token-oidc-flags';

describe('--oidc-* flags with kubectl; the token webhook (v1, client certificate, cache TTL)', () => {
  let dir: string;
  let issuer: TestIssuer;
  let webhook: TestTokenWebhook;
  let proc: CapstanProcess;
  let url: string;
  let ca: string;

  function kubeconfig(name: string, token?: string): string {
    const path = join(dir, `${name}.kubeconfig`);
    const user = token === undefined ? '{}' : `{token: "${token}"}`;
    writeFileSync(
      path,
      [
        'apiVersion: v1',
        'kind: Config',
        `clusters: [{name: c, cluster: {server: "${url}", certificate-authority-data: ${Buffer.from(ca).toString('base64')}}}]`,
        `users: [{name: u, user: ${user}}]`,
        'contexts: [{name: c, context: {cluster: c, user: u}}]',
        'current-context: c',
        '',
      ].join('\n'),
    );
    return path;
  }

  async function review(token: string): Promise<any> {
    const r = await httpsRequest(
      `${url}/apis/authentication.k8s.io/v1/tokenreviews`,
      { ca },
      {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      },
    );
    assert.equal(r.status, 201, r.text);
    return r.body.status;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-oidc-flags-'));
    issuer = await TestIssuer.start();
    webhook = await TestTokenWebhook.start((token) => {
      if (token === 'wh-good') return { status: { authenticated: true, user: { username: 'from-webhook', groups: ['g1'] } } };
      return { status: { authenticated: false } };
    }, true);
    writeFileSync(join(dir, 'issuer-ca.crt'), issuer.ca.cert);
    writeFileSync(join(dir, 'tokens.csv'), `${ADMIN_TOKEN},admin,admin-uid,system:masters\n`);
    await webhook.writeKubeconfig(join(dir, 'webhook.kubeconfig'), { clientCertificate: true });
    proc = await spawnCapstan([
      '--port=0',
      `--cert-dir=${join(dir, 'pki')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--oidc-issuer-url=${issuer.url}`,
      '--oidc-client-id=kubectl-client',
      `--oidc-ca-file=${join(dir, 'issuer-ca.crt')}`,
      '--oidc-groups-claim=groups',
      '--oidc-groups-prefix=oidc:',
      '--oidc-required-claim=hd=example.com',
      '--oidc-signing-algs=RS256',
      '--oidc-signing-algs=ES256',
      `--authentication-token-webhook-config-file=${join(dir, 'webhook.kubeconfig')}`,
      '--authentication-token-webhook-version=v1',
      '--authentication-token-webhook-cache-ttl=1s',
      // Given explicitly, and still turned off by the default AlwaysAllow mode (kube's ApplyAuthorization).
      '--anonymous-auth=true',
    ]);
    url = /"secureUrl":"([^"]+)"/.exec(proc.stderr())?.[1] ?? '';
    ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
    const probe = issuer.token({ aud: 'kubectl-client', sub: 'probe', hd: 'example.com' });
    await eventually(async () => (await review(probe)).authenticated === true, 'the issuer', 60_000);
  });

  after(async () => {
    await proc?.stop();
    await issuer?.close();
    await webhook?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('kubectl with --token and with a kubeconfig holding the OIDC token: names prefixed with the issuer URL, groups with --oidc-groups-prefix', async () => {
    const token = issuer.token({ aud: 'kubectl-client', sub: 'alice', groups: ['dev', 'ops'], hd: 'example.com' });
    const expected = { username: `${issuer.url}#alice`, groups: ['oidc:dev', 'oidc:ops', 'system:authenticated'] };
    const withFlag = JSON.parse(await kubectlFor(kubeconfig('no-user')).ok(['auth', 'whoami', '-o', 'json', `--token=${token}`]));
    assert.deepEqual(withFlag.status.userInfo, expected);
    const fromKubeconfig = JSON.parse(await kubectlFor(kubeconfig('oidc-user', token)).ok(['auth', 'whoami', '-o', 'json']));
    assert.deepEqual(fromKubeconfig.status.userInfo, expected);
    const expired = issuer.token({ aud: 'kubectl-client', sub: 'alice', hd: 'example.com', exp: 1700000000 });
    const refused = await kubectlFor(kubeconfig('expired-user', expired)).run(['get', 'namespaces']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /error: You must be logged in to the server/);
  });

  test('--anonymous-auth=true with --authorization-mode=AlwaysAllow: kube turns anonymous requests off and warns', async () => {
    for (const path of ['/version', '/livez', '/api/v1/namespaces']) {
      const r = await httpsRequest(`${url}${path}`, { ca });
      assert.equal(r.status, 401, path);
      assert.equal(r.body.reason, 'Unauthorized');
    }
    assert.match(
      proc.stderr(),
      /AnonymousAuth is not allowed with the AlwaysAllow authorizer\. Resetting AnonymousAuth to false\. You should use a different authorizer/,
    );
  });

  test('--oidc-signing-algs and --oidc-required-claim refuse tokens with kube errors', async () => {
    const es384 = issuer.token({ aud: 'kubectl-client', sub: 'alice', hd: 'example.com' }, newKey('key-384', 'ES384'));
    assert.deepEqual(await review(es384), {
      user: {},
      error: '[invalid bearer token, oidc: verify token: oidc: id token signed with unsupported algorithm, expected ["RS256" "ES256"] got "ES384"]',
    });
    assert.deepEqual(await review(issuer.token({ aud: 'kubectl-client', sub: 'alice' })), {
      user: {},
      error: '[invalid bearer token, oidc: required claim hd not present in ID token]',
    });
  });

  test('the webhook is called with its kubeconfig client certificate and TokenReview v1; refusals are reused for the cache TTL only', async () => {
    const r = await review('wh-good');
    assert.deepEqual(r, {
      authenticated: true,
      user: { username: 'from-webhook', groups: ['g1', 'system:authenticated'] },
      audiences: ['https://kubernetes.default.svc.cluster.local'],
    });
    assert.equal(webhook.callsFor('wh-good')[0].body.apiVersion, 'authentication.k8s.io/v1');
    assert.equal(webhook.callsFor('wh-good')[0].headers.authorization, undefined);
    await review('wh-nobody');
    await review('wh-nobody');
    assert.equal(webhook.callsFor('wh-nobody').length, 1);
    // After --authentication-token-webhook-cache-ttl (1s) the webhook is asked again.
    await eventually(async () => {
      await review('wh-nobody');
      return webhook.callsFor('wh-nobody').length === 2;
    }, 'the cached refusal to expire');
  });

  test("an unreachable webhook: the token is refused with Go's connection error", async () => {
    const port = new URL(webhook.url).port;
    await webhook.close();
    assert.deepEqual(await review('wh-after-close'), {
      user: {},
      error: `[invalid bearer token, Post "https://127.0.0.1:${port}/review?timeout=30s": dial tcp 127.0.0.1:${port}: connect: connection refused]`,
    });
  });
});
