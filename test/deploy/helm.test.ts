/**
 * The Helm chart (deploy/helm/capstan): `helm lint`, `helm template` with the main value
 * combinations, and the rendered manifests applied to a running Capstan with
 * `kubectl apply --dry-run=server`. helm is built from the Go module proxy by scripts/ensure-helm.sh
 * when it is not installed (cached; the first build takes a few minutes); the tests skip only when
 * that build is impossible (exit 3: no Go toolchain or no proxy).
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dump as yamlDump, loadAll as yamlLoadAll } from 'js-yaml';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { kubectlFor } from '../e2e/kubectl.js';
import { runHelm } from './helm-run.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CHART = join(ROOT, 'deploy', 'helm', 'capstan');

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

let helm: string | undefined;
let skipReason: string | undefined;

function findHelm(): void {
  const r = spawnSync('bash', [join(ROOT, 'scripts', 'ensure-helm.sh')], { encoding: 'utf8', timeout: 15 * 60_000 });
  if (r.status === 0) {
    helm = r.stdout.trim().split('\n').pop();
    return;
  }
  if (r.status === 3) {
    skipReason = `helm is not installed and cannot be built here: ${r.stderr.trim()}`;
    return;
  }
  throw new Error(`scripts/ensure-helm.sh failed (${String(r.status ?? r.signal)}): ${r.stderr}`);
}

async function helmRun(args: string[]): Promise<string> {
  assert.ok(helm);
  return runHelm(helm, args);
}

async function render(setValues: string[] = [], namespace = 'capstan'): Promise<Manifest[]> {
  const args = ['template', 'rel', CHART, '--namespace', namespace];
  for (const s of setValues) args.push('--set', s);
  const out = await helmRun(args);
  return yamlLoadAll(out).filter((d): d is Manifest => typeof d === 'object' && d !== null);
}

function find(manifests: Manifest[], kind: string, name?: string): Manifest {
  const m = manifests.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  assert.ok(m, `${kind}${name ? ` ${name}` : ''} is rendered (got ${manifests.map((x) => x.kind).join(', ')})`);
  return m;
}

describe('helm chart deploy/helm/capstan', { timeout: 20 * 60_000 }, () => {
  before(() => findHelm(), { timeout: 16 * 60_000 });

  test('helm lint passes with default and full-featured values', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const plain = await helmRun(['lint', '--strict', CHART]);
    assert.match(plain, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    assert.doesNotMatch(plain, /\[(WARNING|ERROR)\]/, plain);
    const full = await helmRun([
      'lint',
      '--strict',
      CHART,
      '--set',
      'redis.bundled.enabled=true',
      '--set',
      'autoscaling.enabled=true',
      '--set',
      'serviceMonitor.enabled=true',
      '--set',
      'redis.tls.enabled=true',
      '--set',
      'redis.tls.caSecret=redis-ca',
    ]);
    assert.match(full, /1 chart\(s\) linted, 0 chart\(s\) failed/);
    assert.doesNotMatch(full, /\[(WARNING|ERROR)\]/, full);
  });

  test('default values: Deployment, Service, PodDisruptionBudget, ServiceAccount', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const ms = await render();
    assert.deepEqual(ms.map((m) => `${m.kind}/${m.metadata.name}`).sort(), [
      'Deployment/rel-capstan',
      'PodDisruptionBudget/rel-capstan',
      'Secret/rel-capstan-admin',
      'Secret/rel-capstan-metrics',
      'Secret/rel-capstan-service-account',
      'Secret/rel-capstan-tls',
      'Service/rel-capstan',
      'ServiceAccount/rel-capstan',
    ]);
    const dep = find(ms, 'Deployment');
    assert.equal(dep.spec.replicas, 2);
    const pod = dep.spec.template.spec;
    assert.equal(pod.securityContext.runAsNonRoot, true);
    const c = pod.containers[0];
    assert.equal(c.livenessProbe.httpGet.path, '/livez');
    assert.equal(c.readinessProbe.httpGet.path, '/readyz');
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    for (const flag of [
      '--bind-address=0.0.0.0',
      '--storage=redis',
      '--workers=2',
      '--redis-url=redis://redis:6379',
      '--shutdown-delay-duration=5s',
      '--authorization-mode=Node,RBAC',
      '--anonymous-auth=true',
      '--enable-admission-plugins=NodeRestriction',
      '--token-auth-file=/etc/capstan/admin/tokens.csv',
      '--tls-cert-file=/etc/capstan/tls/tls.crt',
      '--service-account-signing-key-file=/etc/capstan/service-account/sa.key',
    ]) {
      assert.ok(c.args.includes(flag), `args include ${flag}: ${c.args.join(' ')}`);
    }
    assert.ok(c.resources.requests.cpu);
    const svc = find(ms, 'Service');
    assert.deepEqual(svc.spec.selector, dep.spec.selector.matchLabels);
    assert.deepEqual(find(ms, 'PodDisruptionBudget').spec.selector.matchLabels, dep.spec.selector.matchLabels);
  });

  test('redis password from a Secret, TLS, feature gates, workers per pod', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const ms = await render([
      'redis.url=redis://redis.example:6380',
      'redis.existingSecret=my-redis',
      'redis.existingSecretPasswordKey=pw',
      'redis.tls.enabled=true',
      'redis.tls.caSecret=redis-ca',
      'workers=4',
      'featureGates.WatchList=true',
      'featureGates.APIResponseCompression=false',
    ]);
    assert.ok(!ms.some((m) => m.kind === 'Secret' && m.metadata.name.endsWith('-redis')), 'an existing Redis password Secret is referenced, not created');
    const c = find(ms, 'Deployment').spec.template.spec.containers[0];
    assert.ok(c.args.includes('--redis-url=rediss://redis.example:6380'), c.args.join(' '));
    assert.ok(c.args.includes('--workers=4'));
    assert.ok(c.args.includes('--feature-gates=APIResponseCompression=false,WatchList=true'));
    const pw = c.env.find((e: { name: string }) => e.name === 'CAPSTAN_REDIS_PASSWORD');
    assert.deepEqual(pw.valueFrom.secretKeyRef, { name: 'my-redis', key: 'pw' });
    assert.ok(c.env.some((e: { name: string; value?: string }) => e.name === 'NODE_EXTRA_CA_CERTS' && e.value === '/etc/capstan/redis-ca/ca.crt'));
  });

  test('bundled Redis: StatefulSet with AOF appendfsync always, Service, PVC, generated password Secret', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const ms = await render(['redis.bundled.enabled=true']);
    const sts = find(ms, 'StatefulSet');
    const args: string[] = sts.spec.template.spec.containers[0].args;
    assert.equal(args[args.indexOf('--appendonly') + 1], 'yes');
    assert.equal(args[args.indexOf('--appendfsync') + 1], 'always');
    assert.equal(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage, '1Gi');
    const redisSvc = find(ms, 'Service', 'rel-capstan-redis');
    assert.deepEqual(redisSvc.spec.selector, sts.spec.selector.matchLabels);
    const secret = find(ms, 'Secret', 'rel-capstan-redis');
    assert.ok(Buffer.from(secret.data?.['redis-password'] ?? '', 'base64').length >= 16);
    const c = find(ms, 'Deployment').spec.template.spec.containers[0];
    assert.ok(c.args.includes('--redis-url=redis://rel-capstan-redis:6379'), c.args.join(' '));
  });

  test('autoscaling and ServiceMonitor are optional', async (t) => {
    if (skipReason) return t.skip(skipReason);
    const ms = await render(['autoscaling.enabled=true', 'serviceMonitor.enabled=true']);
    const hpa = find(ms, 'HorizontalPodAutoscaler');
    assert.equal(hpa.spec.scaleTargetRef.name, find(ms, 'Deployment').metadata.name);
    assert.equal(find(ms, 'Deployment').spec.replicas, undefined, 'the HPA owns the replica count');
    assert.equal(find(ms, 'ServiceMonitor').spec.endpoints[0].path, '/metrics');
  });

  test('storage=memory with more than one replica is refused', async (t) => {
    if (skipReason) return t.skip(skipReason);
    await assert.rejects(render(['storage=memory']), /storage=memory keeps data inside one pod/);
    const ms = await render(['storage=memory', 'replicaCount=1', 'workers=1']);
    assert.ok(find(ms, 'Deployment').spec.template.spec.containers[0].args.includes('--storage=memory'));
  });

  describe('kubectl apply --dry-run=server against Capstan', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(async () => {
      await server?.stop();
    });

    test('every rendered manifest is accepted and nothing is persisted', async (t) => {
      if (skipReason) return t.skip(skipReason);
      const ns = uniqueName('helm');
      const created = await api(server.url, '/api/v1/namespaces', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }),
      });
      assert.equal(created.status, 201);
      // ServiceMonitor is a Prometheus Operator CRD that Capstan does not serve.
      const ms = await render(['redis.bundled.enabled=true', 'autoscaling.enabled=true'], ns);
      const input = ms.map((m) => yamlDump(m)).join('---\n');
      const r = await kubectlFor(server.kubeconfig).run(['apply', '--dry-run=server', '-f', '-'], { input, timeoutMs: 60_000 });
      assert.equal(r.code, 0, `kubectl apply failed: ${r.stderr}${r.stdout}`);
      for (const m of ms) {
        assert.match(r.stdout, new RegExp(`${m.metadata.name} created \\(server dry run\\)`), `${m.kind} ${m.metadata.name} accepted`);
      }
      const dep = await api(server.url, `/apis/apps/v1/namespaces/${ns}/deployments/rel-capstan`);
      assert.equal(dep.status, 404, 'a dry run persists nothing');
    });
  });
});
