/**
 * The Helm chart installed, upgraded and uninstalled against a live API server, then its pod template
 * run for real (issue 26). Not part of `npm test` (it needs helm, podman, root and the built image):
 * scripts/chart-test.sh runs it with `node --test dist/test/podman/chart-run.js`, CAPSTAN_HELM and
 * CAPSTAN_IMAGE set.
 *
 * - The target is a Capstan this file starts: it validates every object the chart renders as
 *   kube-apiserver does, answers helm's `lookup`, and stores helm's release Secrets.
 * - Every values combination docs/production.md lists is installed, upgraded (the replica count and
 *   another value changed) and uninstalled; after each step the stored objects are compared with
 *   `helm get manifest`, and the Secrets the chart generates keep their contents across the upgrade.
 * - Then one release (3 replicas x 2 workers, Redis password from an existing Secret) runs as a
 *   kubelet would run it: test/podman/pod-template.ts turns the stored Deployment's pod template and
 *   the stored Secrets into podman containers on podman's bridge network, one address per pod, with a
 *   redis-server in a network namespace of its own. The template's startup, liveness and readiness
 *   probes run against each pod; traffic goes to all three (admin token, anonymous refusals, writes
 *   through one pod read through the others, a service account token issued by one pod accepted by
 *   another, /metrics with the chart's metrics token); the admin kubeconfig is built with the
 *   commands the chart's NOTES print; SIGTERM makes /readyz fail first, then each pod exits 0.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dump, loadAll } from 'js-yaml';
import { spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';
import { planPod, probeUrl, type PodPlan, type PodSpec, type Probe, type Sources } from './pod-template.js';
import { containerIp, https, isRunning, podman, podmanOk, PODMAN_ULIMITS, run, spawnOwned, waitExit, type HttpsReply, type Run } from './podman.js';
import { SERVER_NODE_FLAGS } from '../../src/cluster/node-flags.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CHART = join(ROOT, 'deploy', 'helm', 'capstan');
const HELM = process.env.CAPSTAN_HELM ?? 'helm';
const IMAGE = process.env.CAPSTAN_IMAGE ?? '';
const SUFFIX = Math.random().toString(36).slice(2, 8);
const work = mkdtempSync(join(tmpdir(), 'capstan-chart-run-'));

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
}

interface SecretObject {
  metadata: { name: string };
  type?: string;
  data?: Record<string, string>;
}

let host: CapstanProcess | undefined;
let kubeconfig = '';

function helm(args: string[]): Promise<Run> {
  return run(HELM, args, 300_000, {
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig,
      HELM_CACHE_HOME: join(work, 'helm-cache'),
      HELM_CONFIG_HOME: join(work, 'helm-config'),
      HELM_DATA_HOME: join(work, 'helm-data'),
    },
  });
}

async function helmOk(args: string[]): Promise<string> {
  const r = await helm(args);
  assert.equal(r.code, 0, `helm ${args.join(' ')}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

function kubectl(args: string[], input?: string): Promise<Run> {
  return run('kubectl', ['--kubeconfig', kubeconfig, ...args], 120_000, { input });
}

async function kubectlOk(args: string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** The release's manifest as helm recorded it, one object per document. */
async function manifestOf(release: string, namespace: string): Promise<Manifest[]> {
  const text = await helmOk(['get', 'manifest', release, '-n', namespace]);
  return loadAll(text).filter((d): d is Manifest => typeof d === 'object' && d !== null && 'kind' in d);
}

/** Names (`kind/name`, lowercase kind) of the manifest's objects the API server holds now. */
async function storedObjects(manifest: Manifest[], namespace: string): Promise<string[]> {
  const file = join(work, `manifest-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, manifest.map((m) => dump(m)).join('---\n'));
  const out = await kubectlOk(['get', '-f', file, '-n', namespace, '--ignore-not-found', '-o', 'name']);
  return out.split('\n').filter((l) => l !== '');
}

function expectedNames(manifest: Manifest[]): string[] {
  const plural: Record<string, string> = {
    Deployment: 'deployment.apps',
    StatefulSet: 'statefulset.apps',
    Service: 'service',
    Secret: 'secret',
    ServiceAccount: 'serviceaccount',
    PodDisruptionBudget: 'poddisruptionbudget.policy',
    HorizontalPodAutoscaler: 'horizontalpodautoscaler.autoscaling',
    ServiceMonitor: 'servicemonitor.monitoring.coreos.com',
  };
  return manifest.map((m) => `${plural[m.kind] ?? m.kind}/${m.metadata.name}`).sort();
}

async function secretsOf(namespace: string): Promise<Map<string, SecretObject>> {
  const list = JSON.parse(await kubectlOk(['get', 'secrets', '-n', namespace, '-o', 'json'])) as { items: SecretObject[] };
  return new Map(list.items.map((s) => [s.metadata.name, s]));
}

function decoded(secret: SecretObject | undefined, key: string): string {
  const value = secret?.data?.[key];
  assert.ok(value !== undefined, `Secret ${secret?.metadata.name ?? '(missing)'} has ${key}`);
  return Buffer.from(value, 'base64').toString('utf8');
}

interface DeploymentObject {
  spec: { replicas?: number; template: { spec: PodSpec } };
}

async function deploymentOf(namespace: string, name = 'rel-capstan'): Promise<DeploymentObject> {
  return JSON.parse(await kubectlOk(['get', 'deployment', name, '-n', namespace, '-o', 'json'])) as DeploymentObject;
}

function argsOf(deployment: DeploymentObject): string[] {
  return deployment.spec.template.spec.containers[0].args ?? [];
}

/** The chart's generated Secrets' data, to compare before and after an upgrade. */
async function generatedSecretData(namespace: string): Promise<Record<string, Record<string, string> | undefined>> {
  const secrets = await secretsOf(namespace);
  const out: Record<string, Record<string, string> | undefined> = {};
  for (const name of ['rel-capstan-admin', 'rel-capstan-metrics', 'rel-capstan-tls', 'rel-capstan-service-account', 'rel-capstan-redis']) {
    out[name] = secrets.get(name)?.data;
  }
  return out;
}

/** Checks the TLS Secret the chart generated: a CA and a certificate it signed for the Service's names. */
function checkGeneratedTls(secret: SecretObject | undefined, namespace: string, extraNames: string[] = []): void {
  assert.equal(secret?.type, 'kubernetes.io/tls');
  const ca = new X509Certificate(decoded(secret, 'ca.crt'));
  const cert = new X509Certificate(decoded(secret, 'tls.crt'));
  assert.ok(cert.verify(ca.publicKey), 'tls.crt is signed by ca.crt');
  for (const name of [
    'localhost',
    'rel-capstan',
    `rel-capstan.${namespace}`,
    `rel-capstan.${namespace}.svc`,
    `rel-capstan.${namespace}.svc.cluster.local`,
    ...extraNames,
  ]) {
    assert.ok(cert.checkHost(name) !== undefined, `the serving certificate is valid for ${name}: ${cert.subjectAltName ?? ''}`);
  }
  assert.ok(cert.checkIP('127.0.0.1') !== undefined, 'the serving certificate is valid for 127.0.0.1');
}

interface Combination {
  name: string;
  values: string[];
  /** Objects the combination refers to, created before the install. */
  setup?: (namespace: string) => Promise<void>;
  upgrade: string[];
  /** Checks after install and after upgrade (`phase`). */
  check: (namespace: string, phase: 'install' | 'upgrade') => Promise<void>;
  /** Objects that outlive `helm uninstall` (kind/name). */
  kept?: string[];
}

function pemOf(path: string): string {
  return readFileSync(path, 'utf8');
}

const COMBINATIONS: Combination[] = [
  {
    name: 'defaults',
    values: [],
    upgrade: ['replicaCount=3', 'logLevel=debug'],
    check: async (ns, phase) => {
      const dep = await deploymentOf(ns);
      assert.equal(dep.spec.replicas, phase === 'install' ? 2 : 3);
      const args = argsOf(dep);
      for (const flag of [
        '--authorization-mode=Node,RBAC',
        '--anonymous-auth=true',
        '--enable-admission-plugins=NodeRestriction',
        '--token-auth-file=/etc/capstan/admin/tokens.csv',
      ]) {
        assert.ok(args.includes(flag), `${flag} in ${args.join(' ')}`);
      }
      assert.ok(args.includes(phase === 'install' ? '--log-level=info' : '--log-level=debug'));
      const secrets = await secretsOf(ns);
      checkGeneratedTls(secrets.get('rel-capstan-tls'), ns);
      const token = decoded(secrets.get('rel-capstan-admin'), 'token');
      assert.match(token, /^[A-Za-z0-9]{48}$/);
      const metrics = decoded(secrets.get('rel-capstan-metrics'), 'token');
      assert.equal(
        decoded(secrets.get('rel-capstan-admin'), 'tokens.csv'),
        `${token},capstan-admin,capstan-admin,"system:masters"\n${metrics},capstan-metrics,capstan-metrics,"system:monitoring"\n`,
      );
      assert.match(decoded(secrets.get('rel-capstan-service-account'), 'sa.key'), /^-----BEGIN EC PRIVATE KEY-----/);
    },
  },
  {
    name: 'bundled-redis',
    values: ['redis.bundled.enabled=true'],
    upgrade: ['replicaCount=3', 'workers=3'],
    kept: ['secret/rel-capstan-redis'],
    check: async (ns, phase) => {
      const dep = await deploymentOf(ns);
      assert.equal(dep.spec.replicas, phase === 'install' ? 2 : 3);
      assert.ok(argsOf(dep).includes(phase === 'install' ? '--workers=2' : '--workers=3'));
      assert.ok(argsOf(dep).includes('--redis-url=redis://rel-capstan-redis:6379'));
      const sts = JSON.parse(await kubectlOk(['get', 'statefulset', 'rel-capstan-redis', '-n', ns, '-o', 'json'])) as { spec: { template: { spec: PodSpec } } };
      const redisArgs = sts.spec.template.spec.containers[0].args ?? [];
      assert.equal(redisArgs[redisArgs.indexOf('--appendfsync') + 1], 'always');
      assert.ok(decoded((await secretsOf(ns)).get('rel-capstan-redis'), 'redis-password').length >= 32);
    },
  },
  {
    name: 'memory',
    values: ['storage=memory', 'replicaCount=1', 'workers=1'],
    upgrade: ['logLevel=debug', 'shutdownDelayDuration=10s'],
    check: async (ns, phase) => {
      const dep = await deploymentOf(ns);
      assert.equal(dep.spec.replicas, 1);
      const args = argsOf(dep);
      assert.ok(args.includes('--storage=memory'));
      assert.ok(args.includes(phase === 'install' ? '--shutdown-delay-duration=5s' : '--shutdown-delay-duration=10s'));
      assert.ok(!args.some((a) => a.startsWith('--redis-url')));
      if (phase === 'upgrade') {
        // More than one pod on the memory store is refused by the chart, and the release stays as it was.
        const refused = await helm(['upgrade', 'rel', CHART, '-n', ns, '--reuse-values', '--set', 'replicaCount=2']);
        assert.notEqual(refused.code, 0);
        assert.match(refused.stderr, /storage=memory keeps data inside one pod/);
        assert.equal((await deploymentOf(ns)).spec.replicas, 1);
      }
    },
  },
  {
    name: 'bring-your-own',
    values: [
      'redis.url=redis://redis.example:6379',
      'redis.existingSecret=my-redis',
      'redis.existingSecretPasswordKey=pw',
      'tls.secretName=my-tls',
      'admin.existingSecret=my-admin',
      'admin.existingSecretKey=users.csv',
      'serviceAccountKey.secretName=my-sa',
      'serviceAccountKey.key=signing.pem',
      'serviceMonitor.enabled=true',
      'serviceMonitor.bearerTokenSecret.name=my-metrics',
    ],
    setup: async (ns) => {
      const pki = join(work, 'host-pki');
      await kubectlOk(['create', 'secret', 'generic', 'my-redis', '-n', ns, '--from-literal=pw=s3cret']);
      await kubectlOk(['create', 'secret', 'tls', 'my-tls', '-n', ns, `--cert=${join(pki, 'apiserver.crt')}`, `--key=${join(pki, 'apiserver.key')}`]);
      await kubectlOk(['create', 'secret', 'generic', 'my-admin', '-n', ns, '--from-literal=users.csv=tok,me,me,"system:masters"']);
      await kubectlOk(['create', 'secret', 'generic', 'my-sa', '-n', ns, `--from-literal=signing.pem=${pemOf(join(pki, 'service-account.key'))}`]);
      await kubectlOk(['create', 'secret', 'generic', 'my-metrics', '-n', ns, '--from-literal=token=scrape']);
    },
    upgrade: ['replicaCount=4', 'workers=4'],
    check: async (ns, phase) => {
      const manifest = await manifestOf('rel', ns);
      assert.ok(!manifest.some((m) => m.kind === 'Secret'), 'every Secret is the operator’s: the chart renders none');
      const dep = await deploymentOf(ns);
      assert.equal(dep.spec.replicas, phase === 'install' ? 2 : 4);
      const pod = dep.spec.template.spec;
      const args = argsOf(dep);
      assert.ok(args.includes('--token-auth-file=/etc/capstan/admin/users.csv'));
      assert.ok(args.includes('--service-account-signing-key-file=/etc/capstan/service-account/signing.pem'));
      const volumes = new Map((pod.volumes ?? []).map((v) => [v.name, v.secret?.secretName]));
      assert.equal(volumes.get('tls'), 'my-tls');
      assert.equal(volumes.get('admin-token'), 'my-admin');
      assert.equal(volumes.get('service-account-key'), 'my-sa');
      const env = pod.containers[0].env ?? [];
      assert.deepEqual(env.find((e) => e.name === 'CAPSTAN_REDIS_PASSWORD')?.valueFrom?.secretKeyRef, { name: 'my-redis', key: 'pw' });
      const monitor = JSON.parse(await kubectlOk(['get', 'servicemonitors.monitoring.coreos.com', 'rel-capstan', '-n', ns, '-o', 'json'])) as {
        spec: { endpoints: { bearerTokenSecret: unknown }[] };
      };
      assert.deepEqual(monitor.spec.endpoints[0].bearerTokenSecret, { name: 'my-metrics', key: 'token' });
    },
  },
  {
    name: 'sentinel-tls',
    values: [
      'redis.sentinels={sentinel-0.sentinel:26379,sentinel-1.sentinel:26379}',
      'redis.sentinelName=capstan',
      'redis.waitReplicas=1',
      'redis.tls.enabled=true',
      'redis.tls.caSecret=redis-ca',
      'redis.password=from-values',
    ],
    setup: async (ns) => {
      await kubectlOk(['create', 'secret', 'generic', 'redis-ca', '-n', ns, `--from-file=ca.crt=${join(work, 'host-pki', 'ca.crt')}`]);
    },
    upgrade: ['replicaCount=3', 'redis.waitReplicas=2'],
    kept: ['secret/rel-capstan-redis'],
    check: async (ns, phase) => {
      const dep = await deploymentOf(ns);
      assert.equal(dep.spec.replicas, phase === 'install' ? 2 : 3);
      const args = argsOf(dep);
      for (const flag of [
        '--redis-url=rediss://redis:6379',
        '--redis-sentinels=sentinel-0.sentinel:26379,sentinel-1.sentinel:26379',
        '--redis-sentinel-name=capstan',
        phase === 'install' ? '--redis-wait-replicas=1' : '--redis-wait-replicas=2',
      ]) {
        assert.ok(args.includes(flag), `${flag} in ${args.join(' ')}`);
      }
      assert.equal(decoded((await secretsOf(ns)).get('rel-capstan-redis'), 'redis-password'), 'from-values');
      const env = dep.spec.template.spec.containers[0].env ?? [];
      assert.equal(env.find((e) => e.name === 'NODE_EXTRA_CA_CERTS')?.value, '/etc/capstan/redis-ca/ca.crt');
    },
  },
  {
    name: 'autoscaled',
    values: ['autoscaling.enabled=true', 'serviceMonitor.enabled=true', 'featureGates.WatchList=true', 'tls.extraDnsNames={capstan.example.com}'],
    upgrade: ['autoscaling.minReplicas=3', 'autoscaling.maxReplicas=20', 'tls.extraDnsNames={capstan.example.com,api.example.com}'],
    check: async (ns, phase) => {
      const dep = await deploymentOf(ns);
      assert.equal(dep.spec.replicas, 1, 'the HPA owns the replica count: the chart sets none, the API server defaults 1');
      const hpa = JSON.parse(await kubectlOk(['get', 'hpa', 'rel-capstan', '-n', ns, '-o', 'json'])) as { spec: { minReplicas: number; maxReplicas: number } };
      assert.deepEqual([hpa.spec.minReplicas, hpa.spec.maxReplicas], phase === 'install' ? [2, 10] : [3, 20]);
      assert.ok(argsOf(dep).includes('--feature-gates=WatchList=true'));
      const secrets = await secretsOf(ns);
      checkGeneratedTls(secrets.get('rel-capstan-tls'), ns, phase === 'install' ? ['capstan.example.com'] : ['capstan.example.com', 'api.example.com']);
      const monitor = JSON.parse(await kubectlOk(['get', 'servicemonitors.monitoring.coreos.com', 'rel-capstan', '-n', ns, '-o', 'json'])) as {
        spec: { endpoints: { bearerTokenSecret: unknown; tlsConfig: unknown }[] };
      };
      assert.deepEqual(monitor.spec.endpoints[0].bearerTokenSecret, { name: 'rel-capstan-metrics', key: 'token' });
      assert.deepEqual(monitor.spec.endpoints[0].tlsConfig, {
        ca: { secret: { name: 'rel-capstan-tls', key: 'ca.crt' } },
        serverName: `rel-capstan.${ns}.svc`,
      });
    },
  },
];

/** The Prometheus Operator's ServiceMonitor type, as far as the chart needs it to be stored. */
const SERVICE_MONITOR_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'servicemonitors.monitoring.coreos.com' },
  spec: {
    group: 'monitoring.coreos.com',
    scope: 'Namespaced',
    names: { plural: 'servicemonitors', singular: 'servicemonitor', kind: 'ServiceMonitor', listKind: 'ServiceMonitorList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

before(async () => {
  assert.notEqual(IMAGE, '', 'CAPSTAN_IMAGE names the image (scripts/chart-test.sh builds it)');
  host = await spawnCapstan([
    '--secure-port=0',
    `--cert-dir=${join(work, 'host-pki')}`,
    `--write-kubeconfig=${join(work, 'host.kubeconfig')}`,
    '--log-format=json',
  ]);
  kubeconfig = join(work, 'host.kubeconfig');
  await kubectlOk(['apply', '-f', '-'], JSON.stringify(SERVICE_MONITOR_CRD));
  await kubectlOk(['wait', '--for=condition=Established', 'crd/servicemonitors.monitoring.coreos.com', '--timeout=60s']);
});

after(async () => {
  if (host !== undefined) assert.equal(await host.stop(), 0);
  rmSync(work, { recursive: true, force: true });
});

describe('helm install, upgrade and uninstall of each documented values combination', { concurrency: false, timeout: 20 * 60_000 }, () => {
  for (const combination of COMBINATIONS) {
    test(combination.name, async (t) => {
      const ns = `chart-${combination.name}-${SUFFIX}`;
      await kubectlOk(['create', 'namespace', ns]);
      await combination.setup?.(ns);
      const set = (values: string[]): string[] => values.flatMap((v) => ['--set', v]);

      const started = Date.now();
      const installed = await helmOk(['install', 'rel', CHART, '-n', ns, ...set(combination.values)]);
      assert.match(installed, /STATUS: deployed/);
      assert.match(installed, /REVISION: 1/);
      assert.match(installed, /Access: --authorization-mode=Node,RBAC\./);
      const manifest = await manifestOf('rel', ns);
      assert.deepEqual((await storedObjects(manifest, ns)).sort(), expectedNames(manifest), 'every rendered object is stored');
      await combination.check(ns, 'install');
      const generated = await generatedSecretData(ns);
      const installMs = Date.now() - started;

      const upgradeStarted = Date.now();
      const upgraded = await helmOk(['upgrade', 'rel', CHART, '-n', ns, '--reuse-values', ...set(combination.upgrade)]);
      assert.match(upgraded, /STATUS: deployed/);
      assert.match(upgraded, /REVISION: 2/);
      const upgradedManifest = await manifestOf('rel', ns);
      assert.deepEqual((await storedObjects(upgradedManifest, ns)).sort(), expectedNames(upgradedManifest));
      await combination.check(ns, 'upgrade');
      const regenerated = await generatedSecretData(ns);
      for (const [name, data] of Object.entries(generated)) {
        if (name === 'rel-capstan-tls' && combination.upgrade.some((v) => v.startsWith('tls.extra'))) {
          assert.notDeepEqual(regenerated[name], data, 'new certificate names renew the certificate');
        } else {
          assert.deepEqual(regenerated[name], data, `${name} keeps its contents across the upgrade`);
        }
      }
      const history = JSON.parse(await helmOk(['history', 'rel', '-n', ns, '-o', 'json'])) as { revision: number; status: string }[];
      assert.deepEqual(
        history.map((h) => [h.revision, h.status]),
        [
          [1, 'superseded'],
          [2, 'deployed'],
        ],
      );
      const upgradeMs = Date.now() - upgradeStarted;

      const uninstallStarted = Date.now();
      const removed = await helmOk(['uninstall', 'rel', '-n', ns]);
      assert.match(removed, /release "rel" uninstalled/);
      const left = await storedObjects(upgradedManifest, ns);
      assert.deepEqual(left.sort(), [...(combination.kept ?? [])].sort(), 'only what the chart keeps on purpose is left');
      const releases = await kubectlOk(['get', 'secrets', '-n', ns, '-l', 'owner=helm,name=rel', '-o', 'name']);
      assert.equal(releases.trim(), '', 'helm’s release records are gone');
      t.diagnostic(`${combination.name}: install ${installMs} ms, upgrade ${upgradeMs} ms, uninstall ${Date.now() - uninstallStarted} ms`);
      await kubectlOk(['delete', 'namespace', ns, '--wait=false']);
    });
  }
});

/** Runs one probe as kubelet does: HTTP(S) GET, no certificate verification, 200-399 is success. */
async function probeOnce(probe: Probe, url: string): Promise<HttpsReply> {
  const headers: Record<string, string> = { 'user-agent': 'kube-probe/1.36', accept: '*/*' };
  for (const h of probe.httpGet?.httpHeaders ?? []) headers[h.name.toLowerCase()] = h.value;
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (url.startsWith('https:')) return https(url, { headers, timeoutMs });
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: '' }));
    });
    req.on('timeout', () => req.destroy(new Error('probe timed out')));
    req.on('error', reject);
    req.end();
  });
}

function probeSucceeded(reply: HttpsReply | undefined): boolean {
  return reply !== undefined && reply.status >= 200 && reply.status < 400;
}

/** Runs `probe` every periodSeconds until it succeeds, failing after failureThreshold failures. */
async function probeUntilSuccess(probe: Probe, url: string, what: string, alive: () => Promise<boolean>): Promise<void> {
  const period = (probe.periodSeconds ?? 10) * 1000;
  const threshold = probe.failureThreshold ?? 3;
  await new Promise((r) => setTimeout(r, (probe.initialDelaySeconds ?? 0) * 1000));
  let last = '';
  for (let attempt = 1; attempt <= threshold; attempt++) {
    const reply = await probeOnce(probe, url).catch((err: unknown) => {
      last = err instanceof Error ? err.message : String(err);
      return undefined;
    });
    if (probeSucceeded(reply)) return;
    if (reply !== undefined) last = `${reply.status} ${reply.body.slice(0, 200)}`;
    if (!(await alive())) throw new Error(`${what}: the container stopped (last probe: ${last})`);
    await new Promise((r) => setTimeout(r, period));
  }
  throw new Error(`${what} failed ${threshold} times (last: ${last})`);
}

/** A local port forwarded to `target`, as `kubectl port-forward` gives one to a Service's pod. */
function portForward(target: string, port: number): Promise<{ port: number; server: Server }> {
  return new Promise((resolve) => {
    const server = createServer((socket) => {
      const upstream = connect(port, target);
      socket.pipe(upstream).pipe(socket);
      socket.on('error', () => upstream.destroy());
      upstream.on('error', () => socket.destroy());
    });
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ port: typeof address === 'object' && address !== null ? address.port : 0, server });
    });
  });
}

describe('the installed pod template, run for real: 3 replicas x 2 workers on one Redis', { concurrency: false, timeout: 20 * 60_000 }, () => {
  const ns = `chart-run-${SUFFIX}`;
  const anchor = `capstan-redis-pod-${SUFFIX}`;
  const password = randomBytes(18).toString('base64url');
  const pods: { plan: PodPlan; ip: string; startedAt: number }[] = [];
  let redis: { stop(): Promise<void>; output(): string } | undefined;
  let redisIp = '';
  let spec: PodSpec | undefined;
  let admin = { token: '', metricsToken: '', ca: '' };
  const service = `rel-capstan.${ns}.svc`;

  before(async () => {
    await kubectlOk(['create', 'namespace', ns]);
    await kubectlOk(['create', 'secret', 'generic', 'redis-auth', '-n', ns, `--from-literal=redis-password=${password}`]);
    // The "Redis pod": an idle container holds a network namespace with its own bridge address, and
    // the host's redis-server runs inside it, reachable by the pods and not from outside the host.
    await podmanOk([
      'run',
      '-d',
      '--name',
      anchor,
      ...PODMAN_ULIMITS,
      '--no-healthcheck',
      '--entrypoint',
      'node',
      IMAGE,
      '-e',
      'setInterval(() => {}, 1 << 30)',
    ]);
    const pid = await podmanOk(['inspect', '-f', '{{.State.Pid}}', anchor]);
    redisIp = await containerIp(anchor);
    const dir = mkdtempSync(join(work, 'redis-'));
    const redisArgs = [
      '--port',
      '6379',
      '--bind',
      '0.0.0.0',
      '--requirepass',
      password,
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
      '--logfile',
      '',
    ];
    redis = spawnOwned('nsenter', [`--net=/proc/${pid}/ns/net`, 'redis-server', ...redisArgs]);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ping = await run('redis-cli', ['-h', redisIp, '-a', password, '--no-auth-warning', 'ping'], 5000);
      if (ping.stdout.trim() === 'PONG') break;
      assert.ok(Date.now() < deadline, `redis-server in the Redis pod answers (${ping.stdout}${ping.stderr}${redis.output()})`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  after(async () => {
    for (const p of pods) await podman(['rm', '-f', '-t', '0', p.plan.name]);
    await redis?.stop();
    await podman(['rm', '-f', '-t', '0', anchor]);
    await helm(['uninstall', 'rel', '-n', ns]);
  });

  test('helm install with the built image, a Redis password from an existing Secret, 3 replicas x 2 workers', async () => {
    const colon = IMAGE.lastIndexOf(':');
    await helmOk([
      'install',
      'rel',
      CHART,
      '-n',
      ns,
      '--set',
      'replicaCount=3',
      '--set',
      'workers=2',
      '--set',
      `image.repository=${IMAGE.slice(0, colon)}`,
      '--set',
      `image.tag=${IMAGE.slice(colon + 1)}`,
      '--set',
      `redis.url=redis://${redisIp}:6379`,
      '--set',
      'redis.existingSecret=redis-auth',
    ]);
    const deployment = await deploymentOf(ns);
    assert.equal(deployment.spec.replicas, 3);
    spec = deployment.spec.template.spec;
    const secrets = await secretsOf(ns);
    admin = {
      token: decoded(secrets.get('rel-capstan-admin'), 'token'),
      metricsToken: decoded(secrets.get('rel-capstan-metrics'), 'token'),
      ca: decoded(secrets.get('rel-capstan-tls'), 'ca.crt'),
    };
  });

  test('each pod starts as the template says and passes its startup, readiness and liveness probes', async (t) => {
    assert.ok(spec !== undefined);
    const podSpec = spec;
    const sources: Sources = { secrets: new Map(), configMaps: new Map() };
    for (const [name, s] of await secretsOf(ns)) {
      sources.secrets.set(name, Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])));
    }
    const configMaps = JSON.parse(await kubectlOk(['get', 'configmaps', '-n', ns, '-o', 'json'])) as {
      items: { metadata: { name: string }; data?: Record<string, string> }[];
    };
    for (const cm of configMaps.items) sources.configMaps.set(cm.metadata.name, cm.data ?? {});
    for (let i = 0; i < 3; i++) {
      const plan = planPod(`rel-capstan-${SUFFIX}-${i}`, ns, podSpec, sources, join(work, 'volumes'));
      const startedAt = Date.now();
      await podmanOk(['run', '-d', ...PODMAN_ULIMITS, ...plan.runArgs]);
      pods.push({ plan, ip: await containerIp(plan.name), startedAt });
    }
    await Promise.all(
      pods.map(async (pod) => {
        const c = pod.plan.container;
        const alive = (): Promise<boolean> => isRunning(pod.plan.name);
        assert.ok(c.startupProbe !== undefined && c.readinessProbe !== undefined && c.livenessProbe !== undefined, 'the template has all three probes');
        await probeUntilSuccess(c.startupProbe, probeUrl(c.startupProbe, c, pod.ip), `${pod.plan.name} startup probe`, alive);
        const started = Date.now() - pod.startedAt;
        await probeUntilSuccess(c.readinessProbe, probeUrl(c.readinessProbe, c, pod.ip), `${pod.plan.name} readiness probe`, alive);
        const ready = Date.now() - pod.startedAt;
        assert.ok(probeSucceeded(await probeOnce(c.livenessProbe, probeUrl(c.livenessProbe, c, pod.ip))), `${pod.plan.name} liveness probe`);
        t.diagnostic(`${pod.plan.name} at ${pod.ip}: startup probe passed after ${started} ms, ready after ${ready} ms`);
      }),
    );
    for (const pod of pods) {
      const top = await podmanOk(['top', pod.plan.name, 'user', 'args']);
      const servers = top.split('\n').filter((l) => l.includes(`node ${SERVER_NODE_FLAGS.join(' ')} /app/dist/src/main.js`) && !l.includes('tini'));
      assert.equal(servers.length, 3, `a primary and 2 workers, each with the server's Node flags, in ${pod.plan.name}:\n${top}`);
      assert.ok(
        servers.every((l) => l.trim().startsWith('node ')),
        `every server process runs as user node (uid 1000):\n${top}`,
      );
    }
  });

  test('traffic reaches all three: the admin token works, anonymous requests are refused, every pod sees every write', async () => {
    assert.equal(pods.length, 3);
    const as = (token: string) => ({ ca: admin.ca, servername: service, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
    for (const [i, pod] of pods.entries()) {
      const base = `https://${pod.ip}:6443`;
      const who = await https(`${base}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
        ...as(admin.token),
        method: 'POST',
        body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      });
      assert.equal(who.status, 201, who.body);
      const user = (JSON.parse(who.body) as { status: { userInfo: { username: string; groups: string[] } } }).status.userInfo;
      assert.equal(user.username, 'capstan-admin');
      assert.ok(user.groups.includes('system:masters'));
      const created = await https(`${base}/api/v1/namespaces/default/configmaps`, {
        ...as(admin.token),
        method: 'POST',
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `through-pod-${i}` }, data: { pod: pod.plan.name } }),
      });
      assert.equal(created.status, 201, created.body);
      assert.equal((await https(`${base}/livez`, { ca: admin.ca, servername: service })).status, 200);
      const secrets = await https(`${base}/api/v1/namespaces/kube-system/secrets`, { ca: admin.ca, servername: service });
      assert.equal(secrets.status, 403, secrets.body);
      const binding = await https(`${base}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, {
        ca: admin.ca,
        servername: service,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRoleBinding',
          metadata: { name: `anonymous-admin-${i}` },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:unauthenticated' }],
        }),
      });
      assert.equal(binding.status, 403, binding.body);
      assert.equal((await https(`${base}/api/v1/namespaces`, as('not-the-token'))).status, 401);
      const metrics = await https(`${base}/metrics`, as(admin.metricsToken));
      assert.equal(metrics.status, 200);
      assert.match(metrics.body, /apiserver_request_total/);
      assert.equal((await https(`${base}/metrics`, { ca: admin.ca, servername: service })).status, 403);
    }
    for (const pod of pods) {
      const list = await https(`https://${pod.ip}:6443/api/v1/namespaces/default/configmaps`, as(admin.token));
      assert.equal(list.status, 200);
      const names = (JSON.parse(list.body) as { items: { metadata: { name: string } }[] }).items.map((c) => c.metadata.name);
      for (let i = 0; i < 3; i++)
        assert.ok(names.includes(`through-pod-${i}`), `${pod.plan.name} lists the ConfigMap written through pod ${i}: ${names.join(', ')}`);
      const bindings = await https(`https://${pod.ip}:6443/apis/rbac.authorization.k8s.io/v1/clusterrolebindings`, as(admin.token));
      assert.doesNotMatch(bindings.body, /anonymous-admin-/, 'no anonymous ClusterRoleBinding was stored');
    }
  });

  test('a service account token issued by one pod is accepted by another (one signing key)', async () => {
    const as = { ca: admin.ca, servername: service, headers: { authorization: `Bearer ${admin.token}`, 'content-type': 'application/json' } };
    const created = await https(`https://${pods[0].ip}:6443/api/v1/namespaces/default/serviceaccounts`, {
      ...as,
      method: 'POST',
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'robot' } }),
    });
    assert.equal(created.status, 201, created.body);
    const issued = await https(`https://${pods[1].ip}:6443/api/v1/namespaces/default/serviceaccounts/robot/token`, {
      ...as,
      method: 'POST',
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} }),
    });
    assert.equal(issued.status, 201, issued.body);
    const token = (JSON.parse(issued.body) as { status: { token: string } }).status.token;
    const who = await https(`https://${pods[2].ip}:6443/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
      ca: admin.ca,
      servername: service,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    });
    assert.equal(who.status, 201, who.body);
    assert.equal((JSON.parse(who.body) as { status: { userInfo: { username: string } } }).status.userInfo.username, 'system:serviceaccount:default:robot');
  });

  test('the admin kubeconfig made with the commands of the chart’s NOTES works', async () => {
    const notes = await helmOk(['get', 'notes', 'rel', '-n', ns]);
    const commands = notes.split('\n').filter((l) => /^ {2}(kubectl |TOKEN=)/.test(l) && !l.includes(' port-forward '));
    assert.ok(commands.length >= 6, `NOTES give the commands:\n${notes}`);
    // The port-forward the NOTES start is played by a local forwarder to the first pod.
    const forward = await portForward(pods[0].ip, 6443);
    try {
      const script = commands.join('\n').replace(/https:\/\/127\.0\.0\.1:6443/g, `https://127.0.0.1:${forward.port}`);
      const cwd = mkdtempSync(join(work, 'notes-'));
      const r = await run('bash', ['-euo', 'pipefail', '-c', script], 120_000, { cwd, env: { ...process.env, KUBECONFIG: kubeconfig } });
      assert.equal(r.code, 0, `${script}\n${r.stdout}${r.stderr}`);
      assert.match(r.stdout, /^default\s+Active/m);
      const whoami = await run(
        'kubectl',
        ['--kubeconfig', join(cwd, 'capstan.kubeconfig'), 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'],
        60_000,
      );
      assert.equal(whoami.stdout, 'capstan-admin', whoami.stderr);
    } finally {
      forward.server.close();
    }
  });

  test('SIGTERM: readiness fails first while liveness holds, then every pod exits 0 within its grace period', async () => {
    const first = pods[0];
    const c = first.plan.container;
    assert.ok(c.readinessProbe !== undefined && c.livenessProbe !== undefined);
    await podmanOk(['kill', '--signal', 'TERM', first.plan.name]);
    const readinessUrl = probeUrl(c.readinessProbe, c, first.ip);
    const deadline = Date.now() + 10_000;
    let readiness: HttpsReply | undefined;
    while (Date.now() < deadline) {
      readiness = await probeOnce(c.readinessProbe, readinessUrl).catch(() => undefined);
      if (readiness !== undefined && !probeSucceeded(readiness)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(
      readiness !== undefined && !probeSucceeded(readiness),
      `the readiness probe fails during the shutdown delay (${readiness?.status ?? 'no answer'})`,
    );
    assert.ok(probeSucceeded(await probeOnce(c.livenessProbe, probeUrl(c.livenessProbe, c, first.ip))), 'liveness holds meanwhile');
    assert.equal(await waitExit(first.plan.name, first.plan.gracePeriodSeconds * 1000), 0);
    await Promise.all(
      pods.slice(1).map(async (pod) => {
        const stopped = await podman(['stop', '-t', String(pod.plan.gracePeriodSeconds), pod.plan.name], (pod.plan.gracePeriodSeconds + 30) * 1000);
        assert.equal(stopped.code, 0, stopped.stderr);
        assert.equal(await waitExit(pod.plan.name), 0, `${pod.plan.name} exit status`);
      }),
    );
  });
});
