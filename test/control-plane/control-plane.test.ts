/**
 * The whole control plane on Capstan, as docs/control-plane.md runs it: scripts/control-plane.sh
 * starts Capstan (embedded store, RBAC, none of its own kube-controller-manager controllers),
 * the real kube-controller-manager (protobuf, --use-service-account-credentials), kube-scheduler
 * (JSON here, to cover both encodings) and kwok with two simulated nodes, each with its own client
 * certificate from Capstan's CA. Then a user's first workload runs (workload-scenario.ts), a CSR is
 * signed by kube-controller-manager, and the components' logs are checked for errors.
 *
 * The binaries come from ~/.cache/kube-reference/bin (or KUBE_BIN), which ../shared/reference/build.sh
 * fills in 10-20 minutes on two cores: too long for `npm test`, so without them this file is skipped
 * with the reason; scripts/ci-control-plane.sh builds them and runs it.
 */
import '../helpers/reflect-metadata-shim.js';
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { kubectlFor, type Kubectl } from '../e2e/kubectl.js';
import { uniqueName } from '../helpers/capstan.js';
import { KNOWN_CONTROLLER_NAMES } from '../../src/controllers/controller-names.js';
import { runWorkloadScenario } from './workload-scenario.js';
import { countStaleCacheRequeues, errorLines } from './component-logs.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const BIN = process.env.KUBE_BIN ?? join(homedir(), '.cache', 'kube-reference', 'bin');
const BINARIES = ['kube-controller-manager', 'kube-scheduler', 'kwok'];
const missing = BINARIES.filter((b) => !existsSync(join(BIN, b)));
const SKIP =
  missing.length > 0
    ? `${missing.join(', ')} not in ${BIN}: run ../shared/reference/build.sh (10-20 min) or scripts/ci-control-plane.sh, or set KUBE_BIN`
    : false;

/** klog lines that are not failures, each seen against the reference kube-apiserver as well. */
const EXPECTED_LOG_LINES = [
  // Stale-cache requeues: counted separately (the write-to-watch race; see countStaleCacheRequeues).
  /is not as new as written version/,
  // Without --requestheader-client-ca-file there is no front-proxy CA to load (the same with kube-apiserver).
  /missing content for CA bundle \\?"client-ca::kube-system::extension-apiserver-authentication::requestheader-client-ca-file/,
  /The manifest file is empty, ignoring/,
  /Flexvolume plugin directory at .* does not exist/,
  // The Deployment controller's own optimistic-concurrency retries.
  /Operation cannot be fulfilled on .*: the object has been modified; please apply your changes to the latest version and try again/,
];

describe('kube-controller-manager, kube-scheduler and kwok on Capstan', { skip: SKIP, timeout: 15 * 60_000 }, () => {
  let work: string;
  let child: ChildProcess | undefined;
  let k: Kubectl;
  let output = '';

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'capstan-control-plane-'));
    child = spawn('bash', [join(ROOT, 'scripts', 'control-plane.sh'), '--port', '0', '--nodes', '2', '--work-dir', work, '--bin', BIN], {
      env: { ...process.env, SCHEDULER_ARGS: '--kube-api-content-type=application/json' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`control plane not ready in 5 min:\n${output}`)), 5 * 60_000);
      const check = (): void => {
        if (output.includes('control-plane: ready')) {
          clearTimeout(timer);
          resolve();
        }
      };
      child?.stdout?.on('data', check);
      child?.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`scripts/control-plane.sh exited ${String(code)}:\n${output}`));
      });
    });
    k = kubectlFor(join(work, 'admin.kubeconfig'));
  });

  // The script stops everything when one component exits, and says which and why: a test that failed
  // because of that carries the script's words, not only its own symptom (connection refused).
  afterEach(() => {
    if (child !== undefined && child.exitCode !== null) {
      throw new Error(`scripts/control-plane.sh exited ${String(child.exitCode)} during the test:\n${output.slice(-4000)}`);
    }
  });

  after(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((resolve) => child?.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    // CONTROL_PLANE_KEEP_WORK=1 keeps the certificates, kubeconfigs and every component's log.
    if (work !== undefined && process.env.CONTROL_PLANE_KEEP_WORK !== '1') rmSync(work, { recursive: true, force: true });
  });

  const log = (name: string): string => readFileSync(join(work, `${name}.log`), 'utf8');

  test("each component has its own identity from Capstan's CA, and kube-controller-manager's controllers act as their ServiceAccounts", async () => {
    for (const [kubeconfig, user] of [
      ['kcm.kubeconfig', 'system:kube-controller-manager'],
      ['scheduler.kubeconfig', 'system:kube-scheduler'],
      ['kwok.kubeconfig', 'kwok-controller'],
    ]) {
      const whoami = JSON.parse(await kubectlFor(join(work, kubeconfig)).ok(['auth', 'whoami', '-o', 'json']));
      assert.equal(whoami.status.userInfo.username, user);
    }
    // --use-service-account-credentials: one ServiceAccount per controller, bound by kube's bootstrap RBAC;
    // kube-controller-manager creates each as it starts that controller, which may follow 'ready'.
    const wanted = ['deployment-controller', 'replicaset-controller', 'job-controller', 'generic-garbage-collector', 'namespace-controller', 'node-controller'];
    let accounts: string[] = [];
    for (let i = 0; i < 600; i++) {
      accounts = ((await k.json(['get', 'serviceaccounts', '-n', 'kube-system'])).items as any[]).map((a) => a.metadata.name as string);
      if (wanted.every((sa) => accounts.includes(sa))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const sa of wanted) assert.ok(accounts.includes(sa), `kube-system/${sa} exists (have ${accounts.join(', ')})`);
  });

  test("Capstan runs none of kube-controller-manager's controllers: no Capstan controller-manager Lease, KCM and the scheduler lead through theirs", async () => {
    const capstanLease = await k.run(['get', 'lease', '-n', 'kube-system', 'capstan-controller-manager']);
    assert.notEqual(capstanLease.code, 0);
    assert.match(capstanLease.stderr, /NotFound/);
    for (const lease of ['kube-controller-manager', 'kube-scheduler']) {
      const l = await k.json(['get', 'lease', '-n', 'kube-system', lease]);
      assert.ok(l.spec.holderIdentity, `${lease} has a holder`);
      assert.equal(l.spec.leaseDurationSeconds, 15);
    }
    // Every controller Capstan can run carries a name kube-controller-manager 1.36 knows, so the split is by the same names.
    const help = spawnSync(join(BIN, 'kube-controller-manager'), ['--help'], { encoding: 'utf8' }).stdout;
    const all = /All controllers: ([^\n]*)/.exec(help.replace(/\n\s+/g, ' '))?.[1] ?? '';
    for (const c of KNOWN_CONTROLLER_NAMES) assert.ok(all.split(/,\s*/).includes(c.name), `${c.name} is a kube-controller-manager controller`);
  });

  test('a Deployment, its rollout, undo and scale-down, a Service, a Job, a drain and garbage collection work', async (t) => {
    const before = countStaleCacheRequeues(log('kube-controller-manager'));
    const steps = await runWorkloadScenario(join(work, 'admin.kubeconfig'), uniqueName('cp'));
    for (const s of steps) t.diagnostic(`${s.step}: ${s.ms} ms`);
    const after = countStaleCacheRequeues(log('kube-controller-manager'));
    const requeues = Object.entries(after).map(([r, n]) => `${r} ${n - (before[r] ?? 0)}`);
    t.diagnostic(`stale-cache requeues: ${requeues.join(', ') || 'none'}`);
    assert.deepEqual(
      steps.map((s) => s.step),
      [
        'deployment of 3 available',
        'service endpoints',
        'rolling update',
        'undo',
        'scale down to 1',
        'job completes',
        'drain a node',
        'garbage collection of a deleted deployment',
        'namespace deleted',
      ],
    );
  });

  test("kubectl logs, exec and port-forward reach a pod through its node's kubelet API (kwok's)", async () => {
    const ns = uniqueName('kubelet');
    await k.ok(['create', 'namespace', ns]);
    await k.ok(['wait', '--for=create', `serviceaccount/default`, '-n', ns, '--timeout=60s']);
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web', namespace: ns },
      spec: { nodeName: 'kwok-node-1', containers: [{ name: 'app', image: 'nginx' }] },
    };
    await k.ok(['apply', '-f', '-'], { input: JSON.stringify(pod) });
    assert.equal(await k.ok(['logs', '-n', ns, 'web']), 'kwok serves this log for every pod\n');
    // WebSocket from kubectl 1.30 on, SPDY before (the Cloud SDK keeps kubectl.1.27 beside kubectl): both reach the kubelet.
    const sdk = dirname(realpathSync(spawnSync('which', ['kubectl'], { encoding: 'utf8' }).stdout.trim()));
    const binaries = ['kubectl', join(sdk, 'kubectl.1.27')].filter((b) => b === 'kubectl' || existsSync(b));
    for (const binary of binaries) {
      const exec = await k.run(['exec', '-i', '-n', ns, 'web', '--', 'sh', '-c', 'read line; echo "got $line"; echo oops >&2'], { input: 'hello\n', binary });
      assert.equal(exec.code, 0, `${binary}: ${exec.stderr}`);
      assert.equal(exec.stdout, 'got hello\n');
      assert.equal(exec.stderr, 'oops\n');
    }
    // kubectl 1.31+ first asks for a WebSocket tunnel, which kube-apiserver turns into SPDY for the
    // kubelet and Capstan passes on: kwok refuses it (and logs an error), and kubectl falls back to
    // SPDY. The oldest kubectl here asks for SPDY at once (docs/api-coverage.md, "The kubelet").
    const forward = k.spawn(['port-forward', '-n', ns, 'pod/web', '0:80'], binaries[binaries.length - 1]);
    try {
      const [line] = await forward.waitForLines(1, 30_000);
      const local = /127\.0\.0\.1:(\d+)/.exec(line)?.[1];
      assert.ok(local !== undefined, line);
      // kwok forwards every port to the API server: its /livez answers through the tunnel.
      const livez = spawnSync('curl', ['-ksf', `https://127.0.0.1:${local}/livez`], { encoding: 'utf8' });
      assert.equal(livez.stdout, 'ok');
    } finally {
      forward.child.kill();
    }
    await k.ok(['delete', 'namespace', ns, '--wait=false']);
  });

  test('kube-controller-manager signs an approved CSR with the cluster signing CA, and the certificate authenticates', async () => {
    const name = uniqueName('csr');
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${name},O=team`, keys, signingAlgorithm: alg });
    const manifest = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request: Buffer.from(csr.toString('pem')).toString('base64'), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] },
    };
    await k.ok(['create', '-f', '-'], { input: JSON.stringify(manifest) });
    await k.ok(['certificate', 'approve', name]);
    let pem = '';
    for (let i = 0; i < 300 && pem === ''; i++) {
      const got = await k.json(['get', 'csr', name]);
      if (got.status?.certificate) pem = Buffer.from(got.status.certificate, 'base64').toString();
      else await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(pem !== '', 'the CSR got a certificate');
    const cert = new X509Certificate(pem);
    assert.ok(cert.checkIssued(new X509Certificate(readFileSync(join(work, 'pki', 'ca.crt')))), "issued by Capstan's CA");
    const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
    const keyPem = `-----BEGIN PRIVATE KEY-----\n${(der.toString('base64').match(/.{1,64}/g) ?? []).join('\n')}\n-----END PRIVATE KEY-----\n`;
    const admin = readFileSync(join(work, 'admin.kubeconfig'), 'utf8');
    const server = /server: (\S+)/.exec(admin)?.[1] ?? '';
    const ca = /certificate-authority-data: (\S+)/.exec(admin)?.[1] ?? '';
    const kubeconfig = join(work, `${name}.kubeconfig`);
    writeFileSync(
      kubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: ${server}, certificate-authority-data: ${ca}}}]\n` +
        `users: [{name: u, user: {client-certificate-data: ${Buffer.from(pem).toString('base64')}, client-key-data: ${Buffer.from(keyPem).toString('base64')}}}]\n` +
        'contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n',
    );
    const whoami = JSON.parse(await kubectlFor(kubeconfig).ok(['auth', 'whoami', '-o', 'json']));
    assert.equal(whoami.status.userInfo.username, name);
    assert.deepEqual(whoami.status.userInfo.groups, ['team', 'system:authenticated']);
    await k.ok(['delete', 'csr', name]);
  });

  test('kube-controller-manager, kube-scheduler and kwok logged no errors but the expected ones', () => {
    for (const component of ['kube-controller-manager', 'kube-scheduler']) {
      assert.deepEqual(errorLines(log(component), EXPECTED_LOG_LINES), [], `${component}: unexpected errors`);
    }
    const kwokErrors = log('kwok')
      .split('\n')
      .filter((l) => /level=ERROR|"level":"error"/i.test(l));
    assert.deepEqual(kwokErrors, [], 'kwok: errors');
  });
});
