/**
 * CertificateSigningRequests end to end over HTTPS, as on kube-apiserver 1.36 with
 * kube-controller-manager (messages compared with the shared reference): an approved
 * kube-apiserver-client CSR gets a certificate from the certificatesigningrequest-signing-controller
 * that authenticates as the CSR's subject (CN user, O groups) and lasts as `expirationSeconds` asks;
 * a CSR records its requester; a kubelet-serving certificate keeps the request's subjectAltNames;
 * a CSR with usages its signer refuses gets a Failed condition; the certificate admission plugins
 * refuse system:masters client CSRs, approval without `approve` on the signer, and a certificate
 * written without `sign` on the signer. Then an RSA CA given by --cluster-signing-cert-file/-key-file
 * signs, capped by --cluster-signing-duration. (The shared reference runs kube-controller-manager
 * without signing flags, so only the admission messages could be compared there.)
 */
import '../helpers/reflect-metadata-shim.js';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { spawnCapstan, uniqueName, type CapstanProcess } from '../helpers/capstan.js';
import { httpsRequest, type TlsIdentity } from '../auth/https-client.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

interface KeyAndRequest {
  key: string;
  request: string;
}

/** A fresh P-256 key and a PEM CSR for `subject`, both as a client would make them. */
async function keyAndRequest(subject: string, extensions: x509.Extension[] = []): Promise<KeyAndRequest> {
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys, signingAlgorithm: ALG, extensions });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  const key = `-----BEGIN PRIVATE KEY-----\n${(der.toString('base64').match(/.{1,64}/g) ?? []).join('\n')}\n-----END PRIVATE KEY-----\n`;
  return { key, request: csr.toString('pem') };
}

function csrBody(name: string, request: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: Buffer.from(request).toString('base64'), signerName: CLIENT_SIGNER, usages: ['client auth', 'digital signature'], ...spec },
  };
}

describe('CertificateSigningRequest signing and certificate admission', () => {
  let dir: string;
  let proc: CapstanProcess;
  let url: string;
  let ca: string;
  let admin: TlsIdentity;
  const created: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'capstan-csr-'));
    proc = await spawnCapstan(['--port=0', `--cert-dir=${join(dir, 'pki')}`, '--authorization-mode=RBAC', '--controllers=*,-root-ca-cert-publisher']);
    url = /"secureUrl":"([^"]+)"/.exec(proc.stderr())?.[1] ?? '';
    assert.ok(url !== '', proc.stderr());
    ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
    admin = { ca, cert: readFileSync(join(dir, 'pki', 'admin.crt'), 'utf8'), key: readFileSync(join(dir, 'pki', 'admin.key'), 'utf8') };
  });
  after(async () => {
    await proc?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function create(name: string, request: string, spec: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    const r = await httpsRequest(`${url}${CSRS}`, admin, { body: csrBody(name, request, spec), headers });
    if (r.status === 201) created.push(name);
    return r;
  }

  async function approve(name: string, headers: Record<string, string> = {}) {
    const current = await httpsRequest(`${url}${CSRS}/${name}`, admin);
    const csr = current.body;
    csr.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'CertsTest', message: 'approved by the test' }] };
    return httpsRequest(`${url}${CSRS}/${name}/approval`, admin, { method: 'PUT', body: csr, headers });
  }

  /** Reads the CSR until `done` holds for it (the controller acts on the approval's watch event). */
  async function until(name: string, done: (csr: any) => boolean): Promise<any> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = await httpsRequest(`${url}${CSRS}/${name}`, admin);
      if (done(r.body)) return r.body;
      assert.ok(Date.now() < deadline, `CSR ${name} never reached the expected state: ${r.text}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  test('an approved kube-apiserver-client CSR is signed; its certificate authenticates as CN/O and lasts expirationSeconds', async () => {
    const name = uniqueName('certs-client');
    const { key, request } = await keyAndRequest('CN=certs-user, O=certs-dev, O=certs-ops');
    assert.equal((await create(name, request, { expirationSeconds: 900 })).status, 201);
    const approved = await approve(name);
    assert.equal(approved.status, 200, approved.text);
    const csr = await until(name, (c) => typeof c.status?.certificate === 'string');
    const pem = Buffer.from(csr.status.certificate, 'base64').toString('utf8');
    const cert = new x509.X509Certificate(pem);
    assert.equal(cert.issuer, new x509.X509Certificate(ca).subject);
    // kube: backdated five minutes, and (under eight hours) expiring expirationSeconds after signing.
    assert.equal((cert.notAfter.getTime() - cert.notBefore.getTime()) / 1000, 900 + 300);
    assert.equal(cert.getExtension(x509.BasicConstraintsExtension)?.ca, false);
    assert.deepEqual([...(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [])].map(String), ['1.3.6.1.5.5.7.3.2']);
    const who = await httpsRequest(
      `${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
      { ca, cert: pem, key },
      { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
    );
    assert.equal(who.status, 201, who.text);
    assert.deepEqual(who.body.status.userInfo, { username: 'certs-user', groups: ['certs-dev', 'certs-ops', 'system:authenticated'] });
    // A CSR records its requester (kube's PrepareForCreate), whatever the body says.
    const again = uniqueName('certs-again');
    const bootstrapper = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: again },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:node-bootstrapper' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'certs-user' }],
    };
    assert.equal((await httpsRequest(`${url}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, admin, { body: bootstrapper })).status, 201);
    const body = csrBody(again, (await keyAndRequest('CN=certs-user')).request, { username: 'someone-else', groups: ['x'] });
    // RBAC decides from each process's watched copy of the bindings: the new one may take a moment.
    let mine = await httpsRequest(`${url}${CSRS}`, { ca, cert: pem, key }, { body });
    for (const deadline = Date.now() + 10_000; mine.status === 403 && Date.now() < deadline;)
      mine = await httpsRequest(`${url}${CSRS}`, { ca, cert: pem, key }, { body });
    assert.equal(mine.status, 201, mine.text);
    created.push(again);
    assert.equal(mine.body.spec.username, 'certs-user');
    assert.deepEqual(mine.body.spec.groups, ['certs-dev', 'certs-ops', 'system:authenticated']);
  });

  test('expirationSeconds below ten minutes gets ten minutes', async () => {
    const name = uniqueName('certs-short');
    const { request } = await keyAndRequest('CN=certs-short');
    assert.equal((await create(name, request, { expirationSeconds: 600 })).status, 201);
    assert.equal((await approve(name)).status, 200);
    const csr = await until(name, (c) => typeof c.status?.certificate === 'string');
    const cert = new x509.X509Certificate(Buffer.from(csr.status.certificate, 'base64').toString('utf8'));
    assert.equal((cert.notAfter.getTime() - cert.notBefore.getTime()) / 1000, 600 + 300);
  });

  test('usages the signer refuses: a Failed condition with kube reason and message, no certificate', async () => {
    const name = uniqueName('certs-usage');
    const { request } = await keyAndRequest('CN=certs-usage');
    assert.equal((await create(name, request, { usages: ['client auth', 'server auth'] })).status, 201);
    assert.equal((await approve(name)).status, 200);
    const csr = await until(name, (c) => (c.status?.conditions ?? []).some((x: any) => x.type === 'Failed'));
    const failed = csr.status.conditions.find((x: any) => x.type === 'Failed');
    assert.equal(failed.status, 'True');
    assert.equal(failed.reason, 'SignerValidationFailure');
    assert.equal(failed.message, 'invalid usage for client certificate: server auth');
    assert.equal(csr.status.certificate, undefined);
  });

  test("kubelet-serving: signed with the request's subjectAltNames; refused usages get kube's message", async () => {
    const sans = new x509.SubjectAlternativeNameExtension([
      { type: 'dns', value: 'certs-node.example' },
      { type: 'ip', value: '10.0.0.7' },
    ]);
    const serving = { signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'] };
    const good = uniqueName('certs-serving');
    assert.equal((await create(good, (await keyAndRequest('CN=system:node:certs-node, O=system:nodes', [sans])).request, serving)).status, 201);
    const bad = uniqueName('certs-serving-bad');
    assert.equal(
      (await create(bad, (await keyAndRequest('CN=system:node:certs-node, O=system:nodes', [sans])).request, { ...serving, usages: ['server auth'] })).status,
      201,
    );
    assert.equal((await approve(good)).status, 200);
    assert.equal((await approve(bad)).status, 200);
    const signed = await until(good, (c) => typeof c.status?.certificate === 'string');
    const cert = new x509.X509Certificate(Buffer.from(signed.status.certificate, 'base64').toString('utf8'));
    assert.equal(cert.subject, 'CN=system:node:certs-node, O=system:nodes');
    assert.deepEqual(cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON(), [
      { type: 'dns', value: 'certs-node.example' },
      { type: 'ip', value: '10.0.0.7' },
    ]);
    const refused = await until(bad, (c) => (c.status?.conditions ?? []).some((x: any) => x.type === 'Failed'));
    assert.equal(
      refused.status.conditions.find((x: any) => x.type === 'Failed').message,
      'usages did not match [digital signature key encipherment server auth]',
    );
  });

  test('CertificateSubjectRestriction refuses system:masters for kube-apiserver-client', async () => {
    const name = uniqueName('certs-masters');
    const { request } = await keyAndRequest('CN=certs-root, O=system:masters');
    const r = await create(name, request);
    assert.equal(r.status, 403, r.text);
    assert.equal(r.body.reason, 'Forbidden');
    assert.equal(
      r.body.message,
      `certificatesigningrequests.certificates.k8s.io "${name}" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed`,
    );
  });

  test('CertificateApproval and CertificateSigning need approve and sign on the signer (or DOMAIN/*)', async () => {
    const user = uniqueName('certs-approver');
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: user },
      rules: [
        {
          apiGroups: ['certificates.k8s.io'],
          resources: ['certificatesigningrequests', 'certificatesigningrequests/approval', 'certificatesigningrequests/status'],
          verbs: ['get', 'update'],
        },
      ],
    };
    const binding = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: user },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    };
    assert.equal((await httpsRequest(`${url}/apis/rbac.authorization.k8s.io/v1/clusterroles`, admin, { body: role })).status, 201);
    assert.equal((await httpsRequest(`${url}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, admin, { body: binding })).status, 201);
    const as = { 'impersonate-user': user };
    const name = uniqueName('certs-approval');
    const { request } = await keyAndRequest('CN=certs-approval');
    assert.equal((await create(name, request)).status, 201);

    const refused = await approve(name, as);
    assert.equal(refused.status, 403, refused.text);
    assert.equal(
      refused.body.message,
      `certificatesigningrequests.certificates.k8s.io "${name}" is forbidden: user not permitted to approve requests with signerName "${CLIENT_SIGNER}"`,
    );

    const signed = await httpsRequest(`${url}${CSRS}/${name}`, admin);
    signed.body.status = { certificate: Buffer.from(admin.cert ?? '').toString('base64') };
    const unsigned = await httpsRequest(`${url}${CSRS}/${name}/status`, admin, { method: 'PUT', body: signed.body, headers: as });
    assert.equal(unsigned.status, 403, unsigned.text);
    assert.equal(
      unsigned.body.message,
      `certificatesigningrequests.certificates.k8s.io "${name}" is forbidden: user not permitted to sign requests with signerName "${CLIENT_SIGNER}"`,
    );

    // approve on the domain's wildcard is enough.
    role.rules.push({ apiGroups: ['certificates.k8s.io'], resources: ['signers'], resourceNames: ['kubernetes.io/*'], verbs: ['approve'] } as never);
    const current = await httpsRequest(`${url}/apis/rbac.authorization.k8s.io/v1/clusterroles/${user}`, admin);
    assert.equal(
      (
        await httpsRequest(`${url}/apis/rbac.authorization.k8s.io/v1/clusterroles/${user}`, admin, {
          method: 'PUT',
          body: { ...role, metadata: current.body.metadata },
        })
      ).status,
      200,
    );
    const deadline = Date.now() + 10_000;
    let allowed = await approve(name, as);
    while (allowed.status === 403 && Date.now() < deadline) allowed = await approve(name, as);
    assert.equal(allowed.status, 200, allowed.text);
    await until(name, (c) => typeof c.status?.certificate === 'string');
  });
});

describe('--cluster-signing-cert-file / --cluster-signing-key-file (an RSA CA in PKCS#1)', () => {
  test('approved CSRs are signed by that CA, which --client-ca-file trusts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-csr-rsa-'));
    const { generateKeyPairSync } = await import('node:crypto');
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const rsa = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const keys = {
      privateKey: await webcrypto.subtle.importKey('pkcs8', pair.privateKey.export({ format: 'der', type: 'pkcs8' }), rsa, true, ['sign']),
      publicKey: await webcrypto.subtle.importKey('spki', pair.publicKey.export({ format: 'der', type: 'spki' }), rsa, true, ['verify']),
    };
    const caCert = await x509.X509CertificateGenerator.createSelfSigned({
      name: 'CN=certs-rsa-ca',
      keys,
      signingAlgorithm: rsa,
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 86_400_000),
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
    });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(dir, 'ca.crt'), caCert.toString('pem'));
    writeFileSync(join(dir, 'ca.key'), pair.privateKey.export({ format: 'pem', type: 'pkcs1' }));
    const proc = await spawnCapstan([
      '--port=0',
      `--cert-dir=${join(dir, 'pki')}`,
      `--client-ca-file=${join(dir, 'ca.crt')}`,
      `--cluster-signing-cert-file=${join(dir, 'ca.crt')}`,
      `--cluster-signing-key-file=${join(dir, 'ca.key')}`,
      '--cluster-signing-duration=2h',
    ]);
    try {
      const url = /"secureUrl":"([^"]+)"/.exec(proc.stderr())?.[1] ?? '';
      const ca = readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8');
      const admin = { ca, cert: readFileSync(join(dir, 'pki', 'admin.crt'), 'utf8'), key: readFileSync(join(dir, 'pki', 'admin.key'), 'utf8') };
      const name = uniqueName('certs-rsa');
      const { key, request } = await keyAndRequest('CN=certs-rsa-user, O=certs-rsa-group');
      assert.equal((await httpsRequest(`${url}${CSRS}`, admin, { body: csrBody(name, request) })).status, 201);
      const current = (await httpsRequest(`${url}${CSRS}/${name}`, admin)).body;
      current.status = { conditions: [{ type: 'Approved', status: 'True', reason: 'CertsTest', message: 'approved' }] };
      assert.equal((await httpsRequest(`${url}${CSRS}/${name}/approval`, admin, { method: 'PUT', body: current })).status, 200);
      let pem = '';
      for (const deadline = Date.now() + 10_000; pem === '' && Date.now() < deadline;) {
        const c = (await httpsRequest(`${url}${CSRS}/${name}`, admin)).body;
        if (typeof c.status?.certificate === 'string') pem = Buffer.from(c.status.certificate, 'base64').toString('utf8');
      }
      const cert = new x509.X509Certificate(pem);
      assert.equal(cert.issuer, 'CN=certs-rsa-ca');
      assert.ok(await cert.verify({ publicKey: caCert.publicKey, signatureOnly: true }));
      // No expirationSeconds: --cluster-signing-duration from signing, valid since five minutes before (under eight hours).
      assert.equal((cert.notAfter.getTime() - cert.notBefore.getTime()) / 1000, 7200 + 300);
      const who = await httpsRequest(
        `${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
        { ca, cert: pem, key },
        { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } },
      );
      assert.equal(who.status, 201, who.text);
      assert.equal(who.body.status.userInfo.username, 'certs-rsa-user');
    } finally {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
