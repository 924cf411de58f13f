/**
 * Serving and authentication over real TLS (node's https client and kubectl), as kube-apiserver 1.36
 * answers: the admin kubeconfig's client certificate, a static token user, a client-certificate
 * user, a service account token from TokenRequest, anonymous requests, front-proxy headers,
 * impersonation, the OIDC discovery documents, 401 bodies (the reference's, captured), Audit-Id,
 * and a rotated serving certificate taken without a restart.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, verify, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';
import { kubectlFor } from '../e2e/kubectl.js';
import { generateCA, generateLeaf, type CertificateAndKey } from '../../src/tls/certificates.js';
import { httpsRequest, type TlsIdentity } from './https-client.js';
import { eventually } from '../helpers/redis-workers.js';

/** kube-apiserver 1.36's answer to a bad bearer token (captured from the reference). */
const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SSR = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

function secureUrlOf(proc: CapstanProcess): string {
  const url = /"secureUrl":"([^"]+)"/.exec(proc.stderr())?.[1];
  assert.ok(url !== undefined, proc.stderr());
  return url;
}

/** A kubeconfig with `user` credentials (token or certificate) for `url`. */
function kubeconfigWith(dir: string, name: string, url: string, ca: string, user: string[]): string {
  const path = join(dir, `${name}.kubeconfig`);
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: c, cluster: {server: "${url}", certificate-authority-data: ${b64(ca)}}}]`,
      'contexts: [{name: c, context: {cluster: c, user: u}}]',
      'current-context: c',
      'users:',
      '- name: u',
      '  user:',
      ...user.map((l) => `    ${l}`),
      '',
    ].join('\n'),
  );
  return path;
}

describe('HTTPS and the authentication chain', () => {
  let dir: string;
  let proc: CapstanProcess;
  let url: string;
  let ca: string;
  let admin: TlsIdentity;
  let clientCA: CertificateAndKey;
  let proxyCA: CertificateAndKey;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-authn-'));
    clientCA = await generateCA('test-client-ca');
    proxyCA = await generateCA('test-front-proxy-ca');
    writeFileSync(join(dir, 'client-ca.crt'), clientCA.cert);
    writeFileSync(join(dir, 'proxy-ca.crt'), proxyCA.cert);
    writeFileSync(join(dir, 'tokens.csv'), 'tok-alice,alice,alice-uid,"dev,ops"\ntok-bob,bob,bob-uid\n');
    // Under the default AlwaysAllow mode kube turns --anonymous-auth off; the configuration file's
    // anonymous section is taken as written, so anonymous requests stay on here.
    writeFileSync(join(dir, 'authn.yaml'), 'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthenticationConfiguration\nanonymous:\n  enabled: true\n');
    proc = await spawnCapstan([
      '--port=0',
      `--authentication-config=${join(dir, 'authn.yaml')}`,
      `--cert-dir=${join(dir, 'pki')}`,
      `--write-kubeconfig=${join(dir, 'admin.kubeconfig')}`,
      `--client-ca-file=${join(dir, 'client-ca.crt')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      `--requestheader-client-ca-file=${join(dir, 'proxy-ca.crt')}`,
      '--requestheader-allowed-names=front-proxy',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    ]);
    url = secureUrlOf(proc);
    ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
    admin = { ca, cert: readFileSync(join(dir, 'pki', 'admin.crt'), 'utf8'), key: readFileSync(join(dir, 'pki', 'admin.key'), 'utf8') };
  });
  after(async () => {
    await proc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function whoami(tls: TlsIdentity, headers: Record<string, string | string[]> = {}): Promise<unknown> {
    const r = await httpsRequest(`${url}${SSR}`, tls, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }, headers });
    assert.equal(r.status, 201, r.text);
    return r.body.status.userInfo;
  }

  test('the generated serving certificate verifies against the generated CA for 127.0.0.1 and localhost', async () => {
    const r = await httpsRequest(`${url}/version`, { ca });
    assert.equal(r.status, 200);
    const local = await httpsRequest(url.replace('127.0.0.1', 'localhost') + '/version', { ca });
    assert.equal(local.status, 200);
  });

  test("every response has an Audit-Id: a UUID, or the request's own Audit-ID", async () => {
    const r = await httpsRequest(`${url}/api`, { ca }, { headers: { authorization: 'Bearer nope' } });
    assert.match(String(r.headers['audit-id']), UUID);
    const own = await httpsRequest(`${url}/version`, { ca }, { headers: { 'audit-id': 'my-request-1' } });
    assert.equal(own.headers['audit-id'], 'my-request-1');
  });

  test("a garbage bearer token gets kube's 401 Status, even where anonymous requests are allowed", async () => {
    for (const path of ['/api/v1/namespaces', '/version', '/healthz']) {
      const r = await httpsRequest(`${url}${path}`, { ca }, { headers: { authorization: 'Bearer garbage' } });
      assert.equal(r.status, 401, path);
      assert.deepEqual(r.body, UNAUTHORIZED);
      assert.equal(r.headers['content-type'], 'application/json');
    }
  });

  test('a client certificate from an unknown CA gets 401', async () => {
    const stranger = await generateCA('stranger');
    const leaf = await generateLeaf(stranger, { usage: 'client', user: 'mallory', groups: ['system:masters'] });
    const r = await httpsRequest(`${url}/api`, { ca, ...leaf });
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, UNAUTHORIZED);
  });

  test('the admin kubeconfig is capstan-admin in system:masters (kubectl)', async () => {
    const k = kubectlFor(join(dir, 'admin.kubeconfig'));
    assert.match(await k.ok(['auth', 'whoami']), /Username\s+capstan-admin\s+Groups\s+\[system:masters system:authenticated\]/);
    assert.equal((await k.ok(['get', 'ns', 'kube-system', '-o', 'name'])).trim(), 'namespace/kube-system');
  });

  test('a static token user (kubectl with a token kubeconfig): name, uid, groups plus system:authenticated', async () => {
    const k = kubectlFor(kubeconfigWith(dir, 'alice', url, ca, ['token: tok-alice']));
    const out = JSON.parse(await k.ok(['auth', 'whoami', '-o', 'json'])) as { status: unknown };
    assert.deepEqual(out.status, { userInfo: { username: 'alice', uid: 'alice-uid', groups: ['dev', 'ops', 'system:authenticated'] } });
    assert.deepEqual(await whoami({ ca }, { authorization: 'Bearer tok-bob' }), { username: 'bob', uid: 'bob-uid', groups: ['system:authenticated'] });
  });

  test('a client certificate user: CN is the name, O the groups (node https and kubectl)', async () => {
    const leaf = await generateLeaf(clientCA, { usage: 'client', user: 'carol', groups: ['team-a', 'team-b'] });
    assert.deepEqual(await whoami({ ca, ...leaf }), { username: 'carol', groups: ['team-a', 'team-b', 'system:authenticated'] });
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const k = kubectlFor(kubeconfigWith(dir, 'carol', url, ca, [`client-certificate-data: ${b64(leaf.cert)}`, `client-key-data: ${b64(leaf.key)}`]));
    assert.match(await k.ok(['auth', 'whoami']), /Username\s+carol\s+Groups\s+\[team-a team-b system:authenticated\]/);
  });

  test('no credentials: system:anonymous in system:unauthenticated', async () => {
    assert.deepEqual(await whoami({ ca }), { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  test('front-proxy: a certificate of the requestheader CA with an allowed name is the user its headers name', async () => {
    const proxy = await generateLeaf(proxyCA, { usage: 'client', user: 'front-proxy', groups: [] });
    const headers = { 'X-Remote-User': 'dave', 'X-Remote-Group': ['g1', 'g2'], 'X-Remote-Extra-Scopes': 'read', 'X-Remote-Extra-Acme.com%2fproject': 'p1' };
    assert.deepEqual(await whoami({ ca, ...proxy }, headers), {
      username: 'dave',
      groups: ['g1', 'g2', 'system:authenticated'],
      extra: { scopes: ['read'], 'acme.com/project': ['p1'] },
    });
    const other = await generateLeaf(proxyCA, { usage: 'client', user: 'not-the-proxy', groups: [] });
    const refused = await httpsRequest(`${url}/api`, { ca, ...other }, { headers });
    assert.equal(refused.status, 401);
  });

  test("TokenRequest issues an RS256 JWT with kube's claims; the token authenticates, TokenReview agrees, OIDC keys verify it", async () => {
    const k = kubectlFor(join(dir, 'admin.kubeconfig'));
    await k.ok(['create', 'namespace', 'authn-sa']);
    await k.ok(['-n', 'authn-sa', 'create', 'serviceaccount', 'robot']);
    await k.ok(['-n', 'authn-sa', 'create', 'secret', 'generic', 'bound']);
    const token = (
      await k.ok(['-n', 'authn-sa', 'create', 'token', 'robot', '--duration=20m', '--bound-object-kind=Secret', '--bound-object-name=bound'])
    ).trim();
    const [h, c, sig] = token.split('.');
    const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg: string; kid: string };
    const claims = JSON.parse(Buffer.from(c, 'base64url').toString()) as Record<string, any>;
    assert.equal(header.alg, 'RS256');
    assert.deepEqual(Object.keys(claims), ['aud', 'exp', 'iat', 'iss', 'jti', 'kubernetes.io', 'nbf', 'sub']);
    assert.equal(claims.exp - claims.iat, 1200);
    assert.deepEqual(claims.aud, ['https://kubernetes.default.svc.cluster.local']);
    assert.equal(claims.sub, 'system:serviceaccount:authn-sa:robot');
    const sa = await k.json(['-n', 'authn-sa', 'get', 'serviceaccount', 'robot']);
    const secret = await k.json(['-n', 'authn-sa', 'get', 'secret', 'bound']);
    assert.deepEqual(claims['kubernetes.io'], {
      namespace: 'authn-sa',
      serviceaccount: { name: 'robot', uid: sa.metadata.uid },
      secret: { name: 'bound', uid: secret.metadata.uid },
    });

    const discovery = await httpsRequest(`${url}/.well-known/openid-configuration`, admin);
    assert.deepEqual(discovery.body, {
      issuer: 'https://kubernetes.default.svc.cluster.local',
      jwks_uri: `${url}/openid/v1/jwks`,
      response_types_supported: ['id_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
    assert.equal(discovery.headers['cache-control'], 'public, max-age=3600');
    const jwks = await httpsRequest(`${url}/openid/v1/jwks`, admin);
    assert.equal(jwks.headers['content-type'], 'application/jwk-set+json');
    const [jwk] = jwks.body.keys as Array<Record<string, string>>;
    assert.deepEqual(Object.keys(jwk), ['use', 'kty', 'kid', 'alg', 'n', 'e']);
    assert.equal(jwk.kid, header.kid);
    const key = createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' });
    assert.ok(verify('sha256', Buffer.from(`${h}.${c}`), key, Buffer.from(sig, 'base64url')));

    const asRobot = kubectlFor(kubeconfigWith(dir, 'robot', url, ca, [`token: ${token}`]));
    assert.match(await asRobot.ok(['auth', 'whoami']), /Username\s+system:serviceaccount:authn-sa:robot/);
    const review = await httpsRequest(`${url}/apis/authentication.k8s.io/v1/tokenreviews`, admin, { body: { spec: { token } } });
    assert.equal(review.status, 201);
    assert.deepEqual(review.body.status, {
      authenticated: true,
      user: {
        username: 'system:serviceaccount:authn-sa:robot',
        uid: sa.metadata.uid,
        groups: ['system:serviceaccounts', 'system:serviceaccounts:authn-sa', 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
      },
      audiences: ['https://kubernetes.default.svc.cluster.local'],
    });
    const garbage = await httpsRequest(`${url}/apis/authentication.k8s.io/v1/tokenreviews`, admin, { body: { spec: { token: 'garbage' } } });
    assert.deepEqual(garbage.body.status, { user: {}, error: 'invalid bearer token' });

    // Deleting the bound Secret invalidates the token once kube's token cache lets go of it: kube-apiserver
    // 1.36.4 keeps accepting such a token for up to 10 s (its cache of successful authentications).
    await k.ok(['-n', 'authn-sa', 'delete', 'secret', 'bound']);
    let gone = await httpsRequest(`${url}/api`, { ca }, { headers: { authorization: `Bearer ${token}` } });
    await eventually(
      async () => {
        gone = await httpsRequest(`${url}/api`, { ca }, { headers: { authorization: `Bearer ${token}` } });
        return gone.status === 401;
      },
      'the cached token to expire',
      30_000,
    );
    assert.deepEqual(gone.body, UNAUTHORIZED);
    const invalidated = await httpsRequest(`${url}/apis/authentication.k8s.io/v1/tokenreviews`, admin, { body: { spec: { token } } });
    assert.deepEqual(invalidated.body.status, { user: {}, error: '[invalid bearer token, service account token has been invalidated]' });
  });

  test('TokenRequest errors as kube words them', async () => {
    const k = kubectlFor(join(dir, 'admin.kubeconfig'));
    const short = await k.run(['create', 'token', 'default', '--duration=5m']);
    assert.match(
      short.stderr,
      /TokenRequest\.authentication\.k8s\.io "" is invalid: spec\.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes/,
    );
    const path = '/api/v1/namespaces/default/serviceaccounts/default/token';
    const kind = await httpsRequest(`${url}${path}`, admin, { body: { spec: { boundObjectRef: { kind: 'ConfigMap', apiVersion: 'v1', name: 'x' } } } });
    assert.equal(kind.status, 400);
    assert.equal(kind.body.message, 'cannot bind token to object of type /v1, Kind=ConfigMap');
    const missing = await httpsRequest(`${url}${path}`, admin, { body: { spec: { boundObjectRef: { kind: 'Secret', apiVersion: 'v1', name: 'nope' } } } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, 'secrets "nope" not found');
  });

  test('impersonation: user, groups, uid and extras; groups without a user are 400', async () => {
    assert.deepEqual(
      await whoami(admin, { 'Impersonate-User': 'erin', 'Impersonate-Group': ['g1', 'g2'], 'Impersonate-Uid': 'u-1', 'Impersonate-Extra-Scopes': ['a', 'b'] }),
      { username: 'erin', uid: 'u-1', groups: ['g1', 'g2', 'system:authenticated'], extra: { scopes: ['a', 'b'] } },
    );
    assert.deepEqual(await whoami(admin, { 'Impersonate-User': 'system:serviceaccount:ns1:sa1' }), {
      username: 'system:serviceaccount:ns1:sa1',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:ns1', 'system:authenticated'],
    });
    const k = kubectlFor(join(dir, 'admin.kubeconfig'));
    assert.match(await k.ok(['auth', 'whoami', '--as=frank', '--as-group=g3']), /Username\s+frank\s+Groups\s+\[g3 system:authenticated\]/);
    const bad = await httpsRequest(`${url}/api`, admin, { headers: { 'Impersonate-Group': 'g1' } });
    assert.equal(bad.status, 400);
    assert.equal(
      bad.body.message,
      'requested &user.DefaultInfo{Name:"", UID:"", Groups:[]string{"g1"}, Extra:map[string][]string(nil)} without impersonating a user name',
    );
  });
});

describe('--anonymous-auth=false, AlwaysDeny, --tls-cert-file rotation', () => {
  let dir: string;
  let proc: CapstanProcess;
  let url: string;
  let servingCA: CertificateAndKey;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-authn2-'));
    servingCA = await generateCA('serving-ca');
    const serving = await generateLeaf(servingCA, { usage: 'server', commonName: 'first', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.crt'), serving.cert);
    writeFileSync(join(dir, 'tls.key'), serving.key);
    writeFileSync(join(dir, 'tokens.csv'), 'tok-grace,grace,grace-uid\n');
    proc = await spawnCapstan([
      `--cert-dir=${join(dir, 'pki')}`,
      `--tls-cert-file=${join(dir, 'tls.crt')}`,
      `--tls-private-key-file=${join(dir, 'tls.key')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--anonymous-auth=false',
      '--authorization-mode=AlwaysDeny',
    ]);
    url = secureUrlOf(proc);
  });
  after(async () => {
    await proc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('without credentials: 401 (anonymous requests are off)', async () => {
    const r = await httpsRequest(`${url}/version`, { ca: servingCA.cert });
    assert.equal(r.status, 401);
    assert.deepEqual(r.body, UNAUTHORIZED);
  });

  test("impersonating without the impersonate verbs: 403 with kube's message (the first mode's refusal: constrained user-info on the request)", async () => {
    const r = await httpsRequest(`${url}/api`, { ca: servingCA.cert }, { headers: { authorization: 'Bearer tok-grace', 'Impersonate-User': 'alice' } });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'forbidden: User "grace" cannot impersonate-on:user-info:get path "/api": Everything is forbidden.',
      reason: 'Forbidden',
      details: {},
      code: 403,
    });
  });

  test('a rotated --tls-cert-file is served to new connections without a restart', async () => {
    const first = await httpsRequest(`${url}/healthz`, { ca: servingCA.cert }, { headers: { authorization: 'Bearer tok-grace' } });
    const next = await generateLeaf(servingCA, { usage: 'server', commonName: 'second', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    writeFileSync(join(dir, 'tls.key'), next.key);
    writeFileSync(join(dir, 'tls.crt'), next.cert);
    const wanted = new X509Certificate(next.cert).fingerprint256;
    assert.notEqual(first.serverFingerprint, wanted);
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await httpsRequest(`${url}/healthz`, { ca: servingCA.cert }, { headers: { authorization: 'Bearer tok-grace' } });
      if (r.serverFingerprint === wanted) break;
      assert.ok(Date.now() < deadline, 'the rotated certificate was not served within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});

describe('default flags: kube-root-ca.crt (root-ca-cert-publisher); no anonymous requests under AlwaysAllow', () => {
  let dir: string;
  let proc: CapstanProcess;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-rootca-'));
    proc = await spawnCapstan(['--secure-port=0', `--cert-dir=${join(dir, 'pki')}`, `--write-kubeconfig=${join(dir, 'admin.kubeconfig')}`]);
  });
  after(async () => {
    await proc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test("without credentials: 401, since kube turns --anonymous-auth off under the default AlwaysAllow mode, with kube's warning", async () => {
    const url = secureUrlOf(proc);
    const ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
    for (const path of ['/version', '/readyz', SSR]) {
      const r = await httpsRequest(
        `${url}${path}`,
        { ca },
        path === SSR ? { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } } : {},
      );
      assert.equal(r.status, 401, path);
      assert.deepEqual(r.body, UNAUTHORIZED);
    }
    assert.match(proc.stderr(), /"level":"warn","msg":"AnonymousAuth is not allowed with the AlwaysAllow authorizer/);
  });

  test("every namespace has it with the CA and kube's annotation; deleted or edited, it comes back", async () => {
    const k = kubectlFor(join(dir, 'admin.kubeconfig'));
    const ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
    const waitFor = async (ns: string, ok: (cm: any) => boolean): Promise<any> => {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const r = await k.run(['-n', ns, 'get', 'configmap', 'kube-root-ca.crt', '-o', 'json']);
        if (r.code === 0) {
          const cm = JSON.parse(r.stdout);
          if (ok(cm)) return cm;
        }
        assert.ok(Date.now() < deadline, `kube-root-ca.crt in ${ns}: ${r.stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    for (const ns of ['default', 'kube-system', 'kube-public']) {
      const cm = await waitFor(ns, () => true);
      assert.deepEqual(cm.data, { 'ca.crt': ca });
      assert.match(cm.metadata.annotations['kubernetes.io/description'], /^Contains a CA bundle that can be used to verify the kube-apiserver/);
    }
    await k.ok(['create', 'namespace', 'rootca-new']);
    await waitFor('rootca-new', (cm) => cm.data['ca.crt'] === ca);
    await k.ok(['-n', 'rootca-new', 'delete', 'configmap', 'kube-root-ca.crt']);
    await waitFor('rootca-new', (cm) => cm.data['ca.crt'] === ca);
    await k.ok(['-n', 'rootca-new', 'patch', 'configmap', 'kube-root-ca.crt', '--type=merge', '-p', '{"data":{"ca.crt":"tampered"}}']);
    await waitFor('rootca-new', (cm) => cm.data['ca.crt'] === ca);
  });
});
