/**
 * `capstan client-kubeconfig`: flags, and the kubeconfig it writes (a client certificate for the
 * user and groups, signed by the cert-dir CA, trusting the server's CA). That the certificate
 * authenticates against a running server is shown by test/control-plane/control-plane.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load as yamlLoad } from 'js-yaml';
import { parseClientKubeconfigArgs } from '../../src/cli/client-kubeconfig-command.js';
import { generateCA } from '../../src/tls/certificates.js';
import { CAPSTAN_MAIN } from '../helpers/capstan.js';

test('flags: --server and --user are required, --group repeats, --ca-cert goes with --ca-key, --days is bounded', () => {
  const r = parseClientKubeconfigArgs(['--server', 'https://127.0.0.1:6443', '--user=system:kube-scheduler', '--group', 'a', '--group=b', '--cert-dir', '/x']);
  assert.deepEqual(r, {
    server: 'https://127.0.0.1:6443',
    user: 'system:kube-scheduler',
    groups: ['a', 'b'],
    caCertFile: '/x/ca.crt',
    caKeyFile: '/x/ca.key',
    serverCaFile: '/x/ca.crt',
    days: 365,
    out: undefined,
  });
  assert.throws(() => parseClientKubeconfigArgs(['--user', 'u']), { message: '--server must be an https:// URL' });
  assert.throws(() => parseClientKubeconfigArgs(['--server', 'http://x', '--user', 'u']), { message: '--server must be an https:// URL' });
  assert.throws(() => parseClientKubeconfigArgs(['--server', 'https://x']), { message: '--user is required' });
  assert.throws(() => parseClientKubeconfigArgs(['--server', 'https://x', '--user', 'u', '--ca-cert', 'c']), { message: '--ca-cert and --ca-key go together' });
  assert.throws(() => parseClientKubeconfigArgs(['--server', 'https://x', '--user', 'u', '--days', '0']), {
    message: '--days must be a whole number of days from 1 to 3650, got "0"',
  });
  assert.throws(() => parseClientKubeconfigArgs(['--server', 'https://x', '--user', 'u', '--nope']), { message: 'unknown flag: --nope' });
  assert.throws(() => parseClientKubeconfigArgs(['--server']), { message: 'flag needs an argument: --server' });
});

test('the command writes a kubeconfig whose certificate names the user and groups and is signed by the cert-dir CA', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-client-kubeconfig-'));
  try {
    const ca = await generateCA('test-ca');
    mkdirSync(join(dir, 'pki'));
    writeFileSync(join(dir, 'pki', 'ca.crt'), ca.cert);
    writeFileSync(join(dir, 'pki', 'ca.key'), ca.key);
    const out = join(dir, 'kcm.kubeconfig');
    const args = ['client-kubeconfig', '--cert-dir', join(dir, 'pki'), '--server', 'https://127.0.0.1:7443', '--user', 'system:kube-controller-manager'];
    const r = spawnSync(process.execPath, [CAPSTAN_MAIN, ...args, '--group', 'ops', '--out', out], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const kc = yamlLoad(readFileSync(out, 'utf8')) as any;
    assert.equal(kc['current-context'], 'capstan');
    assert.equal(kc.clusters[0].cluster.server, 'https://127.0.0.1:7443');
    assert.equal(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), ca.cert);
    assert.equal(kc.users[0].name, 'system:kube-controller-manager');
    const cert = new X509Certificate(Buffer.from(kc.users[0].user['client-certificate-data'], 'base64'));
    assert.equal(cert.subject, 'O=ops\nCN=system:kube-controller-manager');
    assert.ok(cert.checkIssued(new X509Certificate(ca.cert)));
    assert.ok(cert.checkPrivateKey(await import('node:crypto').then((c) => c.createPrivateKey(Buffer.from(kc.users[0].user['client-key-data'], 'base64')))));
    const bad = spawnSync(process.execPath, [CAPSTAN_MAIN, 'client-kubeconfig', '--cert-dir', join(dir, 'none'), '--server', 'https://x', '--user', 'u'], {
      encoding: 'utf8',
    });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /^Error: cannot read CA certificate .*none\/ca\.crt: ENOENT\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
