/**
 * The kube-apiserver flags controller-runtime's envtest (v0.24) passes are accepted with kube's
 * meaning, and a --cert-dir holding envtest's serving pair is served from, the other files added.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from '../../src/cli/flags.js';
import type { ServerConfig } from '../../src/config/server-config.js';
import { ensureCertDir, servingNamesFor } from '../../src/tls/cert-dir.js';
import { generateCA, generateLeaf } from '../../src/tls/certificates.js';

function config(args: string[]): ServerConfig {
  const parsed = parseArgs(args);
  assert.equal(parsed.help, false);
  return (parsed as { config: ServerConfig }).config;
}

test("envtest's default kube-apiserver arguments are accepted with kube's meaning", () => {
  const dir = '/tmp/k8s_test_framework_1';
  const c = config([
    '--advertise-address=127.0.0.1',
    '--allow-privileged=true',
    '--authorization-mode=RBAC',
    '--bind-address=127.0.0.1',
    `--cert-dir=${dir}`,
    `--client-ca-file=${dir}/client-cert-auth-ca.crt`,
    '--disable-admission-plugins=ServiceAccount',
    '--etcd-servers=http://127.0.0.1:41327',
    '--insecure-port=0',
    '--secure-port=38715',
    '--service-account-issuer=https://127.0.0.1:38715/',
    `--service-account-key-file=${dir}/sa-signer.crt`,
    `--service-account-signing-key-file=${dir}/sa-signer.key`,
    '--service-cluster-ip-range=10.0.0.0/24',
  ]);
  assert.equal(c.port, undefined, '--insecure-port=0 turns the plain-HTTP port off, as in kube-apiserver');
  assert.equal(c.securePort, 38715);
  assert.equal(c.certDir, dir);
  assert.equal(c.clientCAFile, `${dir}/client-cert-auth-ca.crt`);
  assert.equal(c.authorizationMode, 'RBAC');
  assert.deepEqual(c.disableAdmissionPlugins, ['ServiceAccount']);
  assert.deepEqual(c.serviceAccountIssuers, ['https://127.0.0.1:38715/']);
  assert.equal(c.storage, 'memory', 'the etcd flags do not change the store');
});

test('the etcd and other compatibility flags are accepted but still checked', () => {
  const c = config([
    '--etcd-prefix=/registry',
    '--etcd-cafile=a',
    '--etcd-certfile=b',
    '--etcd-keyfile=c',
    '--storage-backend=etcd3',
    '--etcd-compaction-interval=5m',
  ]);
  assert.equal(c.storage, 'memory');
  assert.throws(() => parseArgs(['--storage-backend=etcd2']), /invalid argument "etcd2" for "--storage-backend" flag: must be etcd3/);
  assert.throws(() => parseArgs(['--allow-privileged=maybe']), /invalid argument "maybe" for "--allow-privileged" flag/);
});

test('--port 0 still picks a free port; --insecure-port N serves on N', () => {
  assert.equal(config(['--port', '0']).port, 0);
  assert.equal(config(['--insecure-port=8080']).port, 8080);
  assert.equal(config([]).port, undefined);
});

test('a --cert-dir holding only a serving pair keeps it and gets the other files beside it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-envtest-certdir-'));
  try {
    const ca = await generateCA('envtest-ca');
    const serving = await generateLeaf(ca, { usage: 'server', commonName: 'envtest', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    writeFileSync(join(dir, 'apiserver.crt'), serving.cert);
    writeFileSync(join(dir, 'apiserver.key'), serving.key);
    writeFileSync(join(dir, 'sa-signer.crt'), 'left alone');
    const files = await ensureCertDir(dir, servingNamesFor([]));
    assert.equal(files.servingCert, serving.cert);
    assert.equal(files.servingKey, serving.key);
    assert.match(files.caCert, /BEGIN CERTIFICATE/);
    assert.match(files.serviceAccountKey, /BEGIN PRIVATE KEY/);
    assert.equal(readFileSync(join(dir, 'sa-signer.crt'), 'utf8'), 'left alone');
    const again = await ensureCertDir(dir, servingNamesFor([]));
    assert.deepEqual(again, files, 'a restart reuses the completed set');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a --cert-dir holding part of the generated set is refused rather than mixed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-envtest-certdir-'));
  try {
    const ca = await generateCA('envtest-ca');
    const serving = await generateLeaf(ca, { usage: 'server', commonName: 'envtest', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
    writeFileSync(join(dir, 'apiserver.crt'), serving.cert);
    writeFileSync(join(dir, 'apiserver.key'), serving.key);
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    await assert.rejects(ensureCertDir(dir, servingNamesFor([])), /holds part of ca\.crt/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
