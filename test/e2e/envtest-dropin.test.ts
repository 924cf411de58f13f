/**
 * Capstan as a drop-in for controller-runtime's envtest: `capstan envtest-assets DIR` writes
 * kube-apiserver (Capstan) and etcd (a health-check stand-in), and an envtest suite
 * (test/clients/go-envtest, a Go test binary built by scripts/build-go-envtest.sh) passes with
 * KUBEBUILDER_ASSETS=DIR: envtest starts both, polls /healthz over HTTPS, installs a CRD through
 * CRDInstallOptions, provisions users with client certificates signed by the CA it passes in
 * --client-ca-file, and a manager reconciles; a validating webhook given in WebhookInstallOptions
 * (caBundle: the serving certificate itself, URL path `//validate-gadget`) denies as on kube; a user
 * from AddUser is forbidden until RBAC allows it.
 * Needs Go on PATH.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'node:net';
import { CAPSTAN_MAIN, spawnCapstan } from '../helpers/capstan.js';
import { freePort } from '../helpers/redis-process.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let suite = '';
let assets = '';

before(() => {
  const built = spawnSync('bash', [join(REPO, 'scripts', 'build-go-envtest.sh')], { encoding: 'utf8', timeout: 15 * 60_000 });
  assert.equal(built.status, 0, `build-go-envtest.sh failed: ${built.stderr}`);
  suite = built.stdout.trim();
  assets = mkdtempSync(join(tmpdir(), 'capstan-envtest-assets-'));
  const written = spawnSync(process.execPath, [CAPSTAN_MAIN, 'envtest-assets', assets], { encoding: 'utf8' });
  assert.equal(written.status, 0, written.stderr);
  assert.match(written.stdout, new RegExp(`KUBEBUILDER_ASSETS=${assets} go test`));
});

describe('capstan envtest-assets', () => {
  test('writes executable kube-apiserver and etcd, and links kubectl when it is on PATH', () => {
    for (const name of ['kube-apiserver', 'etcd']) assert.ok((statSync(join(assets, name)).mode & 0o111) !== 0, `${name} is executable`);
    const onPath = spawnSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).stdout.trim();
    assert.equal(existsSync(join(assets, 'kubectl')), onPath !== '');
    if (onPath !== '') assert.ok(lstatSync(join(assets, 'kubectl')).isSymbolicLink());
  });

  test('kube-apiserver --help lists the flags envtest looks for and passes', () => {
    const help = spawnSync(join(assets, 'kube-apiserver'), ['--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    // envtest's CheckFlag pattern; with --insecure-port listed it passes --insecure-port=0 (off).
    for (const flag of ['insecure-port', 'secure-port', 'cert-dir', 'client-ca-file', 'etcd-servers', 'allow-privileged', 'service-account-issuer'])
      assert.match(help.stdout, new RegExp(`^\\s*--${flag}\\b`, 'm'));
  });

  test('flags given after DIR are baked in and checked first', () => {
    const dir = mkdtempSync(join(tmpdir(), 'capstan-envtest-flags-'));
    try {
      const ok = spawnSync(process.execPath, [CAPSTAN_MAIN, 'envtest-assets', dir, '--controllers=-garbage-collector'], { encoding: 'utf8' });
      assert.equal(ok.status, 0, ok.stderr);
      assert.match(readFileSync(join(dir, 'kube-apiserver'), 'utf8'), /'--controllers=-garbage-collector' "\$@"/);
      const bad = spawnSync(process.execPath, [CAPSTAN_MAIN, 'envtest-assets', dir, '--no-such-flag'], { encoding: 'utf8' });
      assert.equal(bad.status, 2);
      assert.equal(bad.stderr, 'Error: unknown flag: --no-such-flag\n');
      const none = spawnSync(process.execPath, [CAPSTAN_MAIN, 'envtest-assets'], { encoding: 'utf8' });
      assert.equal(none.status, 2);
      assert.match(none.stderr, /^Usage: capstan envtest-assets DIR/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the etcd stand-in', () => {
  test('answers GET /health on --listen-client-urls as etcd does and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(
      join(assets, 'etcd'),
      ['--listen-peer-urls=http://localhost:0', `--advertise-client-urls=${url}`, `--listen-client-urls=${url}`, '--data-dir=/nonexistent'],
      {
        stdio: 'ignore',
      },
    );
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      let res: Response | undefined;
      const deadline = Date.now() + 10_000;
      while (res === undefined) {
        res = await fetch(`${url}/health`).catch(() => undefined);
        if (res === undefined) {
          assert.ok(Date.now() < deadline, 'the stand-in never answered');
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { health: 'true', reason: '' });
      assert.equal((await fetch(`${url}/v3/kv/range`)).status, 404);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });
});

describe("Capstan's stop", () => {
  test('closes a connection that never carried a request (Go clients leave spares) within a second or so, not after 5 s', async () => {
    const proc = await spawnCapstan(['--port', '0']);
    const { hostname, port } = new URL(proc.url);
    const spare = connect(Number(port), hostname);
    await new Promise<void>((resolve, reject) => spare.once('connect', resolve).once('error', reject));
    const closed = new Promise<number>((resolve) => spare.once('close', () => resolve(Date.now())));
    spare.on('error', () => undefined);
    const stopped = Date.now();
    assert.equal(await proc.stop(), 0);
    const waited = (await closed) - stopped;
    assert.ok(waited < 4000, `the spare connection was closed ${waited} ms after SIGTERM`);
  });
});

describe('an envtest suite with KUBEBUILDER_ASSETS from envtest-assets', () => {
  test('starts Capstan, installs the CRD and the webhook, reconciles, and AddUser users are authorized by RBAC', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'capstan-envtest-run-'));
    try {
      const child = spawn(suite, ['-test.v', '-test.count=1'], { cwd, env: { ...process.env, KUBEBUILDER_ASSETS: assets }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      assert.equal(code, 0, `envtest suite failed:\n${stdout}\n${stderr.slice(-4000)}`);
      for (const name of ['TestReconcilerOwnsConfigMap', 'TestAddUserNeedsRBAC', 'TestValidatingWebhookFromInstallOptions'])
        assert.match(stdout, new RegExp(`--- PASS: ${name}`));
      const timing = /^ENVTEST_TIMING (\{.*\})$/m.exec(stdout);
      assert.ok(timing, 'the suite prints its timing');
      const { startMs, totalMs } = JSON.parse(timing[1]) as { startMs: number; totalMs: number };
      assert.ok(startMs > 0 && totalMs >= startMs);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
