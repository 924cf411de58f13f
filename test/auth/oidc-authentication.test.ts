/**
 * `--authentication-config` as kube-apiserver 1.36 serves it, against OIDC issuers and a TokenReview
 * webhook served by this test over HTTPS (their own CAs and keys): CEL claim mappings, claim and
 * user validation rules, required claims, discoveryURL, several audiences, JWKS rotation and kube's
 * refresh limit, the anonymous section's path conditions, the token webhook's body, caching and
 * failures, and the file reloaded while the server runs. Expected error texts are kube's (the ones
 * marked `reference` were captured from kube-apiserver 1.36.4 with the same configuration).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';
import { newKey, TestIssuer, type IssuerKey } from '../helpers/oidc-issuer.js';
import { TestTokenWebhook, type WebhookAnswer } from '../helpers/token-review-webhook.js';
import { httpsRequest } from './https-client.js';
import { eventually } from '../helpers/redis-workers.js';

const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
const API_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';
const ADMIN_TOKEN = 'admin-token-oidc-test';

function indent(text: string, spaces: number): string {
  return text
    .trim()
    .split('\n')
    .map((l) => ' '.repeat(spaces) + l)
    .join('\n');
}

describe('--authentication-config: JWT issuers, CEL, reload, anonymous conditions; the token webhook', () => {
  let dir: string;
  let issuer: TestIssuer;
  let tenant: TestIssuer;
  let webhook: TestTokenWebhook;
  let proc: CapstanProcess;
  let url: string;
  let ca: string;
  let configPath: string;
  let jti = 0;
  let flaky = 0;

  function configYaml(o: { prefix: string; anonymousPaths: string[]; extraRule?: string }): string {
    return `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${issuer.url}
    audiences: [capstan]
    certificateAuthority: |
${indent(issuer.ca.cert, 6)}
  claimMappings:
    username:
      expression: '"${o.prefix}" + claims.sub'
    groups:
      expression: 'claims.?roles.orValue([]).map(r, "role:" + r)'
    uid:
      claim: uid
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant
    - key: example.com/dotted
      valueExpression: 'claims.?foo__dot__bar.orValue("")'
  claimValidationRules:
  - expression: 'claims.tenant != "blocked"'
    message: tenant is blocked
  - claim: hd
    requiredValue: example.com
${o.extraRule ?? ''}
  userValidationRules:
  - expression: '!user.username.startsWith("${o.prefix}system:")'
    message: no system names
- issuer:
    url: ${tenant.url}
    discoveryURL: ${tenant.url.replace('/tenant', '')}/discovery/elsewhere
    audiences: [a, b]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
${indent(tenant.ca.cert, 6)}
  claimMappings:
    username:
      claim: email
      prefix: ""
    groups:
      claim: groups
      prefix: "g:"
anonymous:
  enabled: true
  conditions:
${o.anonymousPaths.map((p) => `  - path: ${p}`).join('\n')}
`;
  }

  /** A token of the first issuer with the claims every rule asks for, and `claims` added. */
  function aliceToken(claims: Record<string, unknown> = {}, key?: IssuerKey): string {
    jti++;
    return issuer.token({ aud: 'capstan', sub: 'alice', uid: 'u-1', tenant: 'acme', hd: 'example.com', jti: `jti-${jti}`, ...claims }, key);
  }

  async function whoami(token: string): Promise<{ status: number; user: any; body: any }> {
    const r = await httpsRequest(
      `${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      { ca },
      {
        headers: { authorization: `Bearer ${token}` },
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      },
    );
    return { status: r.status, user: r.body?.status?.userInfo, body: r.body };
  }

  async function review(token: string, audiences?: string[]): Promise<any> {
    const r = await httpsRequest(
      `${url}/apis/authentication.k8s.io/v1/tokenreviews`,
      { ca },
      {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token, ...(audiences === undefined ? {} : { audiences }) } },
      },
    );
    assert.equal(r.status, 201, r.text);
    return r.body.status;
  }

  /** kube's refusal: 401 Unauthorized for the request, `[invalid bearer token, <error>]` in a TokenReview. */
  async function assertRefused(token: string, error: string): Promise<void> {
    const r = await httpsRequest(`${url}/api`, { ca }, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, UNAUTHORIZED);
    assert.deepEqual(await review(token), { user: {}, error: `[invalid bearer token, ${error}]` });
  }

  /** Replaces the configuration file as editors and ConfigMap volumes do (never seen half written). */
  function replaceConfig(text: string): void {
    writeFileSync(`${configPath}.tmp`, text);
    renameSync(`${configPath}.tmp`, configPath);
  }

  function logCount(message: string): number {
    return proc
      .stderr()
      .split('\n')
      .filter((l) => l.includes(`"msg":"${message}"`)).length;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-oidc-'));
    issuer = await TestIssuer.start();
    tenant = await TestIssuer.start('/tenant');
    webhook = await TestTokenWebhook.start((token): WebhookAnswer => {
      if (token.startsWith('wh-good')) {
        return {
          status: {
            authenticated: true,
            user: { username: `webhook:${token}`, uid: 'wh-uid', groups: ['wh-group'], extra: { 'example.com/source': ['webhook'] } },
          },
        };
      }
      if (token === 'wh-revoked') return { status: { authenticated: false, error: 'token revoked' } };
      if (token === 'wh-flaky' && flaky++ === 0) return { httpError: 500, text: 'boom' };
      if (token === 'wh-flaky') return { status: { authenticated: true, user: { username: 'flaky' } } };
      if (token === 'wh-down') return { httpError: 503, text: 'down' };
      if (token === 'wh-other-audience') return { status: { authenticated: true, user: { username: 'x' }, audiences: ['vault'] } };
      return { status: { authenticated: false } };
    });
    configPath = join(dir, 'authentication.yaml');
    writeFileSync(configPath, configYaml({ prefix: 'oidc:', anonymousPaths: ['/livez'] }));
    writeFileSync(join(dir, 'tokens.csv'), `${ADMIN_TOKEN},admin,admin-uid,system:masters\n`);
    await webhook.writeKubeconfig(join(dir, 'webhook.kubeconfig'), { token: 'webhook-secret' });
    proc = await spawnCapstan([
      '--port=0',
      `--cert-dir=${join(dir, 'pki')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--authentication-config=${configPath}`,
      `--authentication-token-webhook-config-file=${join(dir, 'webhook.kubeconfig')}`,
    ]);
    url = /"secureUrl":"([^"]+)"/.exec(proc.stderr())?.[1] ?? '';
    ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
    // The issuers' discovery runs in the background from start: wait until both answered.
    const probe = aliceToken();
    await eventually(async () => (await whoami(probe)).status === 201, 'the first issuer', 60_000);
    const tenantProbe = tenant.token({ aud: 'a', email: 'probe@example.com' });
    await eventually(async () => (await whoami(tenantProbe)).status === 201, 'the second issuer', 60_000);
  });

  after(async () => {
    await proc?.stop();
    await issuer?.close();
    await tenant?.close();
    await webhook?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a token of the first issuer: CEL claim mappings make the user, with the credential id of its jti', async () => {
    const token = aliceToken({ roles: ['admin', 'dev'], 'foo.bar': 'dotted' });
    const r = await whoami(token);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.user, {
      username: 'oidc:alice',
      uid: 'u-1',
      groups: ['role:admin', 'role:dev', 'system:authenticated'],
      extra: { 'authentication.kubernetes.io/credential-id': [`JTI=jti-${jti}`], 'example.com/tenant': ['acme'], 'example.com/dotted': ['dotted'] },
    });
    assert.deepEqual((await review(token)).audiences, [API_AUDIENCE]);
  });

  test("validation rules, required claims and the token's own checks refuse it with kube's errors", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        { tenant: 'blocked' },
        `oidc: error evaluating claim validation expression: validation expression 'claims.tenant != "blocked"' failed: tenant is blocked`,
      ],
      [{ hd: undefined }, 'oidc: required claim hd not present in ID token'],
      [{ hd: 'other.com' }, 'oidc: required claim hd value does not match. Got = other.com, want = example.com'],
      [
        { sub: 'system:admin' },
        `oidc: error evaluating user info validation rule: validation expression '!user.username.startsWith("oidc:system:")' failed: no system names`,
      ],
      // An extra mapping's failure is reported without the oidc prefix, as kube reports it.
      [{ tenant: undefined }, "expression 'claims.tenant' resulted in error: no such key: tenant"],
      // reference
      [{ exp: 1700000000 }, 'oidc: verify token: oidc: token is expired (Token Expiry: 2023-11-14 22:13:20 +0000 UTC)'],
      // reference
      [{ aud: ['x', 'y'] }, 'oidc: verify token: oidc: expected audience "capstan" got ["x" "y"]'],
      // reference
      [{ sub: 5 }, 'oidc: verify token: oidc: failed to unmarshal claims: json: cannot unmarshal number into Go struct field idToken.sub of type string'],
    ];
    for (const [claims, error] of cases) await assertRefused(aliceToken(claims), error);
  });

  test('the second issuer: discovery from its discoveryURL, any of several audiences, the email claim only when verified', async () => {
    const bob = (claims: Record<string, unknown>): string =>
      tenant.token({ sub: 'b-1', email: 'bob@example.com', email_verified: true, groups: ['x', 'y'], ...claims });
    const r = await whoami(bob({ aud: ['b'] }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.user, { username: 'bob@example.com', groups: ['g:x', 'g:y', 'system:authenticated'] });
    await assertRefused(bob({ aud: 'a', email_verified: false }), 'oidc: email not verified');
    await assertRefused(bob({ aud: ['c'] }), 'oidc: verify token: oidc: expected audience in ["a" "b"] got ["c"]');
    assert.ok((tenant.hits.get('/discovery/elsewhere') ?? 0) >= 1);
    assert.equal(tenant.count('/.well-known/openid-configuration'), 0);
  });

  test('JWKS: an unknown key makes the issuer be asked again (rotation), but not while the cached keys are fresh', async () => {
    const before = issuer.count('/keys');
    assert.ok(before >= 1, 'the keys were fetched for the first token');
    const second = newKey('key-2', 'ES256');
    issuer.published = [issuer.signingKey, second];
    assert.equal((await whoami(aliceToken({ sub: 'rotated' }, second))).user?.username, 'oidc:rotated');
    assert.equal(issuer.count('/keys'), before + 1);
    // From now on the keys may be cached for an hour: the next unknown key is fetched once, then no more.
    issuer.jwksCacheControl = 'public, max-age=3600';
    const third = newKey('key-3', 'PS256');
    issuer.published = [issuer.signingKey, second, third];
    assert.equal((await whoami(aliceToken({ sub: 'third' }, third))).user?.username, 'oidc:third');
    assert.equal(issuer.count('/keys'), before + 2);
    const fourth = newKey('key-4');
    issuer.published = [...issuer.published, fourth];
    const refused = aliceToken({ sub: 'fourth' }, fourth);
    await assertRefused(refused, 'oidc: verify token: failed to verify signature: failed to verify id token signature');
    assert.equal(issuer.count('/keys'), before + 2);
  });

  test('anonymous conditions: only the listed paths serve requests without credentials', async () => {
    const livez = await httpsRequest(`${url}/livez`, { ca });
    assert.equal(livez.status, 200);
    assert.equal((await httpsRequest(`${url}/livez?verbose`, { ca })).status, 200);
    for (const path of ['/readyz', '/api', '/version']) {
      const r = await httpsRequest(`${url}${path}`, { ca });
      assert.equal(r.status, 401, path);
      assert.deepEqual(r.body, UNAUTHORIZED);
    }
    assert.equal((await httpsRequest(`${url}/livez`, { ca }, { headers: { authorization: 'Bearer garbage' } })).status, 401);
  });

  test("a token no issuer knows goes to the webhook: kube's TokenReview, the webhook's user, its answer cached", async () => {
    const r = await whoami('wh-good-1');
    assert.equal(r.status, 201);
    assert.deepEqual(r.user, {
      username: 'webhook:wh-good-1',
      uid: 'wh-uid',
      groups: ['wh-group', 'system:authenticated'],
      extra: { 'example.com/source': ['webhook'] },
    });
    assert.equal((await whoami('wh-good-1')).status, 201);
    const calls = webhook.callsFor('wh-good-1');
    assert.equal(calls.length, 1, 'the second request was answered from the cache');
    assert.equal(calls[0].path, '/review?timeout=30s');
    assert.equal(calls[0].headers.authorization, 'Bearer webhook-secret');
    assert.equal(calls[0].headers['content-type'], 'application/json');
    // reference: kube-apiserver 1.36.4 sends exactly this body.
    assert.deepEqual(calls[0].body, {
      kind: 'TokenReview',
      apiVersion: 'authentication.k8s.io/v1beta1',
      metadata: {},
      spec: { token: 'wh-good-1', audiences: [API_AUDIENCE] },
      status: { user: {} },
    });
  });

  test('webhook refusals: one with an error is not cached, one without is; an answer for other audiences authenticates nobody', async () => {
    await assertRefused('wh-revoked', 'token revoked');
    assert.equal(webhook.callsFor('wh-revoked').length, 2);
    for (let i = 0; i < 2; i++) {
      const r = await httpsRequest(`${url}/api`, { ca }, { headers: { authorization: 'Bearer wh-unknown' } });
      assert.equal(r.status, 401);
    }
    assert.equal(webhook.callsFor('wh-unknown').length, 1);
    assert.deepEqual(await review('wh-other-audience'), { user: {}, error: 'invalid bearer token' });
    // A JWT an issuer refused is still offered to the webhook (kube's union goes on after an error).
    const expired = aliceToken({ exp: 1700000000 });
    await assertRefused(expired, 'oidc: verify token: oidc: token is expired (Token Expiry: 2023-11-14 22:13:20 +0000 UTC)');
    assert.equal(webhook.callsFor(expired).length, 1);
  });

  test('a failing webhook: a 500 is retried, a 503 is not; failures are never cached', async () => {
    const flakyUser = await whoami('wh-flaky');
    assert.equal(flakyUser.user?.username, 'flaky');
    assert.equal(webhook.callsFor('wh-flaky').length, 2);
    // reference
    await assertRefused('wh-down', 'the server is currently unable to handle the request');
    assert.equal(webhook.callsFor('wh-down').length, 2);
  });

  test('the file is reloaded when it changes; a file kube would refuse is logged and skipped', async () => {
    replaceConfig(configYaml({ prefix: 're:', anonymousPaths: ['/livez'] }));
    await eventually(() => logCount('reloaded authentication config') >= 1, 'the reload', 60_000);
    assert.equal((await whoami(aliceToken())).user?.username, 're:alice');
    const failures = logCount('failed to validate authentication config');
    replaceConfig(configYaml({ prefix: 'x:', anonymousPaths: ['/livez'], extraRule: '  - expression: claims.sub' }));
    await eventually(() => logCount('failed to validate authentication config') > failures, 'the refusal', 60_000);
    assert.match(proc.stderr(), /jwt\[0\]\.claimValidationRules\[2\]\.expression: Invalid value: \\"claims.sub\\": must evaluate to bool/);
    replaceConfig(configYaml({ prefix: 'x:', anonymousPaths: ['/livez', '/readyz'] }));
    await eventually(() => logCount('failed to validate authentication config') > failures + 1, 'the second refusal', 60_000);
    assert.match(proc.stderr(), /anonymous: Forbidden: changed from initial configuration file/);
    assert.equal((await whoami(aliceToken())).user?.username, 're:alice');
    assert.equal((await httpsRequest(`${url}/readyz`, { ca })).status, 401);
  });
});
