/**
 * The chart's control plane (values `controlPlane`, templates controller-manager-deployment.yaml and
 * scheduler-deployment.yaml): what it renders, which values it refuses, that the manifests are
 * accepted by `kubectl apply --dry-run=server`, and the rendered commands themselves run locally:
 * Capstan with its rendered flags (memory storage), two kube-controller-manager replicas and a
 * kube-scheduler with theirs (paths mapped to local files, ports to free loopback ones), which elect
 * leaders through their Leases and run a Deployment. The last part needs the binaries of
 * ../shared/reference/build.sh (~/.cache/kube-reference/bin or KUBE_BIN) and is skipped without them.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { dump as yamlDump, loadAll as yamlLoadAll } from 'js-yaml';
import { api, CAPSTAN_MAIN, startTestServer, uniqueName } from '../helpers/capstan.js';
import { kubectlFor } from '../e2e/kubectl.js';
import { runHelm } from './helm-run.js';
import { generateCA, generateLeaf } from '../../src/tls/certificates.js';
import { clientKubeconfig } from '../../src/cli/client-kubeconfig-command.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CHART = join(ROOT, 'deploy', 'helm', 'capstan');
const BIN = process.env.KUBE_BIN ?? join(homedir(), '.cache', 'kube-reference', 'bin');

const CONTROL_PLANE = [
  'controlPlane.controllerManager.enabled=true',
  'controlPlane.scheduler.enabled=true',
  'controlPlane.clientCA.secretName=components-ca',
  'tls.secretName=capstan-tls',
  'serviceAccountKey.secretName=capstan-sa',
];

let helm: string | undefined;
let skipReason: string | undefined;

async function helmRun(args: string[]): Promise<string> {
  assert.ok(helm);
  return runHelm(helm, args);
}

async function render(values: string[], namespace = 'capstan'): Promise<any[]> {
  const args = ['template', 'rel', CHART, '--namespace', namespace];
  for (const v of values) args.push('--set', v);
  return yamlLoadAll(await helmRun(args)).filter((d) => typeof d === 'object' && d !== null) as any[];
}

function deployment(ms: any[], name: string): any {
  const d = ms.find((m) => m.kind === 'Deployment' && m.metadata.name === name);
  assert.ok(d, `Deployment ${name} is rendered (have ${ms.map((m) => `${m.kind}/${m.metadata.name}`).join(', ')})`);
  return d;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 0));
    });
  });
}

describe('helm chart: kube-controller-manager and kube-scheduler beside Capstan', { timeout: 20 * 60_000 }, () => {
  before(
    () => {
      const r = spawnSync('bash', [join(ROOT, 'scripts', 'ensure-helm.sh')], { encoding: 'utf8', timeout: 15 * 60_000 });
      if (r.status === 0) helm = r.stdout.trim().split('\n').pop();
      else if (r.status === 3) skipReason = `helm is not installed and cannot be built here: ${r.stderr.trim()}`;
      else throw new Error(`scripts/ensure-helm.sh failed (${String(r.status ?? r.signal)}): ${r.stderr}`);
    },
    { timeout: 16 * 60_000 },
  );

  test('renders both components with their kubeconfig Secrets, leader election and probes; Capstan leaves the controllers to them', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const lint = await helmRun(['lint', '--strict', CHART, ...CONTROL_PLANE.flatMap((v) => ['--set', v])]);
    assert.doesNotMatch(lint, /\[(WARNING|ERROR)\]/, lint);
    const ms = await render([...CONTROL_PLANE, 'controlPlane.controllerManager.clusterSigning.secretName=signing-ca']);
    const kcm = deployment(ms, 'rel-capstan-kube-controller-manager');
    const scheduler = deployment(ms, 'rel-capstan-kube-scheduler');
    for (const [d, port, secret] of [
      [kcm, 10257, 'rel-capstan-kube-controller-manager-kubeconfig'],
      [scheduler, 10259, 'rel-capstan-kube-scheduler-kubeconfig'],
    ] as const) {
      assert.equal(d.spec.replicas, 2);
      const pod = d.spec.template.spec;
      assert.equal(pod.automountServiceAccountToken, false);
      assert.equal(pod.securityContext.runAsNonRoot, true);
      const c = pod.containers[0];
      assert.ok(c.args.includes('--leader-elect=true'));
      assert.ok(c.args.includes('--kubeconfig=/etc/kubernetes/kubeconfig/kubeconfig'));
      assert.ok(c.args.includes('--authentication-kubeconfig=/etc/kubernetes/kubeconfig/kubeconfig'));
      assert.deepEqual(c.ports[0], { name: 'https', containerPort: port, protocol: 'TCP' });
      assert.deepEqual(c.livenessProbe.httpGet, { path: '/healthz', port: 'https', scheme: 'HTTPS' });
      assert.equal(pod.volumes.find((v: any) => v.name === 'kubeconfig').secret.secretName, secret);
      assert.deepEqual(d.spec.selector.matchLabels, d.spec.template.metadata.labels);
    }
    const kcmArgs: string[] = kcm.spec.template.spec.containers[0].args;
    for (const flag of [
      '--use-service-account-credentials=true',
      '--service-account-private-key-file=/etc/kubernetes/service-account/sa.key',
      '--root-ca-file=/etc/kubernetes/root-ca/ca.crt',
      '--cluster-signing-cert-file=/etc/kubernetes/cluster-signing/tls.crt',
      '--controllers=*',
    ]) {
      assert.ok(kcmArgs.includes(flag), `${flag} in ${kcmArgs.join(' ')}`);
    }
    const volumes = Object.fromEntries(kcm.spec.template.spec.volumes.map((v: any) => [v.name, v.secret?.secretName]));
    assert.deepEqual(volumes, {
      kubeconfig: 'rel-capstan-kube-controller-manager-kubeconfig',
      'service-account-key': 'capstan-sa',
      'root-ca': 'capstan-tls',
      'cluster-signing': 'signing-ca',
      tmp: undefined,
    });
    const capstan = deployment(ms, 'rel-capstan').spec.template.spec;
    assert.ok(capstan.containers[0].args.includes('--controllers='));
    assert.ok(capstan.containers[0].args.includes('--client-ca-file=/etc/capstan/client-ca/ca.crt'));
    assert.equal(capstan.volumes.find((v: any) => v.name === 'client-ca').secret.secretName, 'components-ca');
    // Without the control plane, Capstan's flags are what they were.
    const plain = deployment(await render([]), 'rel-capstan').spec.template.spec.containers[0].args;
    assert.ok(!plain.some((a: string) => a.startsWith('--controllers') || a.startsWith('--client-ca-file')));
  });

  test('values that cannot work are refused with the reason', async (t) => {
    if (skipReason) return t.skip(skipReason);
    await assert.rejects(render(['controlPlane.scheduler.enabled=true', 'tls.secretName=x']), /set controlPlane\.clientCA\.secretName/);
    await assert.rejects(render(['controlPlane.scheduler.enabled=true', 'controlPlane.clientCA.secretName=x']), /set tls\.secretName/);
    await assert.rejects(
      render(['controlPlane.controllerManager.enabled=true', 'controlPlane.clientCA.secretName=x', 'tls.secretName=y']),
      /set serviceAccountKey\.secretName/,
    );
  });

  test('kubectl apply --dry-run=server accepts every rendered manifest', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const server = await startTestServer();
    try {
      const ns = uniqueName('helm-cp');
      const created = await api(server.url, '/api/v1/namespaces', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ metadata: { name: ns } }),
      });
      assert.equal(created.status, 201);
      const ms = await render(CONTROL_PLANE, ns);
      const r = await kubectlFor(server.kubeconfig).run(['apply', '--dry-run=server', '-f', '-'], {
        input: ms.map((m) => yamlDump(m)).join('---\n'),
        timeoutMs: 60_000,
      });
      assert.equal(r.code, 0, `kubectl apply failed: ${r.stderr}${r.stdout}`);
      for (const name of ['rel-capstan', 'rel-capstan-kube-controller-manager', 'rel-capstan-kube-scheduler']) {
        assert.match(r.stdout, new RegExp(`deployment.apps/${name} created \\(server dry run\\)`));
      }
    } finally {
      await server.stop();
    }
  });

  describe(
    'the rendered commands, run locally',
    { skip: ['kube-controller-manager', 'kube-scheduler'].some((b) => !existsSync(join(BIN, b))) ? `no binaries in ${BIN}` : false },
    () => {
      let work: string;
      const children: ChildProcess[] = [];
      const logs = new Map<ChildProcess, string>();
      after(async () => {
        for (const c of children) {
          if (c.exitCode === null && c.signalCode === null) {
            const exited = new Promise((r) => c.once('exit', r));
            c.kill('SIGTERM');
            await exited;
          }
        }
        if (work !== undefined) rmSync(work, { recursive: true, force: true });
      });

      /** The container's args with the Secrets' mount paths mapped to `files` and ports to `ports`. */
      const localArgs = (args: string[], files: Record<string, string>, ports: Record<string, number>): string[] =>
        args.map((a) => {
          const eq = a.indexOf('=');
          const [flag, value] = eq < 0 ? [a, ''] : [a.slice(0, eq), a.slice(eq + 1)];
          if (files[value] !== undefined) return `${flag}=${files[value]}`;
          if (flag === '--bind-address') return `${flag}=127.0.0.1`;
          if (ports[flag] !== undefined) return `${flag}=${ports[flag]}`;
          if (value.startsWith('/tmp/')) return `${flag}=${join(work, value.slice(5))}`;
          return a;
        });
      const run = (command: string, args: string[]): ChildProcess => {
        const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
        logs.set(child, '');
        const keep = (d: Buffer): void => void logs.set(child, (logs.get(child) ?? '') + d.toString());
        child.stdout?.on('data', keep);
        child.stderr?.on('data', keep);
        children.push(child);
        return child;
      };
      const until = async (what: string, check: () => Promise<boolean>, child?: ChildProcess): Promise<void> => {
        for (let i = 0; i < 1200; i++) {
          if (await check().catch(() => false)) return;
          if (child !== undefined && child.exitCode !== null) assert.fail(`${what}: the process exited: ${logs.get(child) ?? ''}`);
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.fail(`timed out waiting for ${what}${[...logs.values()].map((l) => `\n----\n${l.slice(-3000)}`).join('')}`);
      };

      test('Capstan, two kube-controller-manager replicas and kube-scheduler: one leader each, and a Deployment gets its Pods scheduled', async (t) => {
        if (skipReason) return t.skip(skipReason);
        work = mkdtempSync(join(tmpdir(), 'capstan-helm-cp-'));
        // The chart's Secrets, as files: a serving pair (with its CA), the components' CA, the token key.
        const servingCA = await generateCA('serving-ca');
        const serving = await generateLeaf(servingCA, { usage: 'server', commonName: 'capstan', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
        const clientCA = await generateCA('components-ca');
        const saKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
        const file = (name: string, content: string): string => {
          const path = join(work, name);
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, content, { mode: 0o600 });
          return path;
        };
        const files: Record<string, string> = {
          '/etc/capstan/tls/tls.crt': file('tls/tls.crt', serving.cert),
          '/etc/capstan/tls/tls.key': file('tls/tls.key', serving.key),
          '/etc/capstan/service-account/sa.key': file('sa/sa.key', saKey),
          '/etc/capstan/client-ca/ca.crt': file('client-ca/ca.crt', clientCA.cert),
          '/etc/kubernetes/service-account/sa.key': join(work, 'sa/sa.key'),
          '/etc/kubernetes/root-ca/ca.crt': file('root-ca/ca.crt', servingCA.cert),
          // The chart's admin token Secret (kube's static token file); this test authenticates by certificate.
          '/etc/capstan/admin/tokens.csv': file('admin/tokens.csv', `${randomBytes(16).toString('hex')},chart-admin,chart-admin,"system:masters"\n`),
        };
        const ms = await render([...CONTROL_PLANE, 'storage=memory', 'replicaCount=1', 'workers=1']);
        const capstanPort = await freePort();
        const capstanArgs: string[] = deployment(ms, 'rel-capstan').spec.template.spec.containers[0].args;
        const capstan = run(process.execPath, [CAPSTAN_MAIN, ...localArgs(capstanArgs, files, { '--secure-port': capstanPort })]);
        const server = `https://127.0.0.1:${capstanPort}`;
        // Every client, the administrator included, has a certificate of the components' CA, which Capstan trusts.
        file('ca.crt', clientCA.cert);
        file('ca.key', clientCA.key);
        const kubeconfigFor = (user: string, groups: string[]): Promise<string> =>
          clientKubeconfig({
            server,
            user,
            groups,
            caCertFile: join(work, 'ca.crt'),
            caKeyFile: join(work, 'ca.key'),
            serverCaFile: join(work, 'root-ca/ca.crt'),
            days: 1,
            out: undefined,
          });
        const controllerManagers: ChildProcess[] = [];
        const admin = file('admin.kubeconfig', await kubeconfigFor('admin', ['system:masters']));
        const k = kubectlFor(admin);
        await until('Capstan answers', async () => (await k.run(['get', '--raw', '/readyz'])).code === 0, capstan);
        for (const [component, user] of [
          ['kube-controller-manager', 'system:kube-controller-manager'],
          ['kube-scheduler', 'system:kube-scheduler'],
        ]) {
          files['/etc/kubernetes/kubeconfig/kubeconfig'] = file(`${component}.kubeconfig`, await kubeconfigFor(user, []));
          const d = deployment(ms, `rel-capstan-${component}`);
          // Both controller-manager replicas (leader election), one scheduler.
          const replicas = component === 'kube-controller-manager' ? d.spec.replicas : 1;
          for (let i = 0; i < replicas; i++) {
            const port = await freePort();
            const args = localArgs(d.spec.template.spec.containers[0].args, files, { '--secure-port': port }).map((a) =>
              a.startsWith('--cert-dir=') ? `${a}-${i}` : a,
            );
            const child = run(join(BIN, component), args);
            if (component === 'kube-controller-manager') controllerManagers.push(child);
            await until(`${component} ${i} /healthz`, async () => healthz(port), child);
          }
        }
        const holders: string[] = [];
        // Both replicas take part in the election; the Lease names the one leader (hostname_uuid).
        for (const c of controllerManagers) {
          await until('each kube-controller-manager replica contends for the Lease', async () =>
            (logs.get(c) ?? '').includes('Attempting to acquire leader lease'),
          );
        }
        for (const lease of ['kube-controller-manager', 'kube-scheduler']) {
          await until(`the ${lease} Lease has a holder`, async () => {
            const r = await k.run(['get', 'lease', '-n', 'kube-system', lease, '-o', 'jsonpath={.spec.holderIdentity}']);
            if (r.code !== 0 || r.stdout === '') return false;
            holders.push(r.stdout);
            return true;
          });
        }
        const resources = { cpu: '4', memory: '8Gi', pods: '110' };
        const node = {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name: 'helm-node' },
          status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: resources, capacity: resources },
        };
        await k.ok(['apply', '-f', '-'], { input: JSON.stringify(node) });
        await k.ok(['create', 'deployment', 'web', '--image=registry.k8s.io/pause:3.10', '--replicas=2']);
        await until('two pods of web, scheduled to the node', async () => {
          const pods = JSON.parse(await k.ok(['get', 'pods', '-l', 'app=web', '-o', 'json'])).items as any[];
          return pods.length === 2 && pods.every((p) => p.spec.nodeName === 'helm-node');
        });
        t.diagnostic(`leaders: ${holders.join(', ')}`);
      });
    },
  );
});

/** Whether a component's /healthz answers ok over HTTPS (self-signed). */
async function healthz(port: number): Promise<boolean> {
  const r = spawnSync('curl', ['-ksf', `https://127.0.0.1:${port}/healthz`], { encoding: 'utf8', timeout: 5000 });
  return r.status === 0;
}
