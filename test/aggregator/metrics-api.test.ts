/**
 * metrics.k8s.io through Capstan: a standard-library extension API server
 * (test/aggregator/go-metrics-fixture, built by scripts/build-go-metrics-fixture.sh) serves
 * NodeMetrics and PodMetrics from fixtures, registered as metrics-server registers itself
 * (`insecureSkipTLSVerify`, a Service in kube-system), so that `kubectl top` and raw metrics reads work.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { generateCertificates } from '../helpers/webhook-server.js';
import { eventually, restFor, type Rest } from '../e2e/rest.js';

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let dir: string;
let server: TestServer;
let rest: Rest;
let fixture: ChildProcess;
let namespace: string;
const suffix = Math.random().toString(36).slice(2, 7);
const nodes = [`metrics-a-${suffix}`, `metrics-b-${suffix}`];

function kubectl(...args: string[]): Promise<string> {
  return run('kubectl', ['--kubeconfig', server.kubeconfig, ...args], { encoding: 'utf8' }).then((r) => r.stdout);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'capstan-metrics-'));
  server = await startTestServer({ securePort: 0, certDir: join(dir, 'pki') });
  rest = restFor(server.url);
  namespace = await rest.namespace('metrics');
  for (const name of nodes) {
    await rest.create('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      status: { capacity: { cpu: '4', memory: '8Gi' }, allocatable: { cpu: '4', memory: '8Gi' } },
    });
  }
  const certs = await generateCertificates(['metrics-server.kube-system.svc']);
  writeFileSync(join(dir, 'tls.crt'), certs.certPem);
  writeFileSync(join(dir, 'tls.key'), certs.keyPem);
  writeFileSync(
    join(dir, 'fixtures.json'),
    JSON.stringify({
      nodes: [
        { name: nodes[0], cpu: '250m', memory: '1Gi' },
        { name: nodes[1], cpu: '1', memory: '2Gi' },
      ],
      pods: [{ namespace, name: 'web-1', containers: [{ name: 'app', cpu: '12m', memory: '20Mi' }] }],
    }),
  );
  const { stdout } = await run('bash', [join(ROOT, 'scripts', 'build-go-metrics-fixture.sh')]);
  const portFile = join(dir, 'port');
  fixture = spawn(
    stdout.trim(),
    [
      `-tls-cert-file=${join(dir, 'tls.crt')}`,
      `-tls-private-key-file=${join(dir, 'tls.key')}`,
      `-requestheader-client-ca-file=${join(dir, 'pki', 'front-proxy', 'ca.crt')}`,
      `-fixtures=${join(dir, 'fixtures.json')}`,
      `-port-file=${portFile}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const port = await eventually('the fixture server', async () =>
    existsSync(portFile) && readFileSync(portFile, 'utf8') !== '' ? Number(readFileSync(portFile, 'utf8')) : undefined,
  );
  await rest.create('/api/v1/namespaces/kube-system/services', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: `metrics-server-${suffix}` },
    spec: { type: 'ExternalName', externalName: 'localhost' },
  });
  await rest.create('/apis/apiregistration.k8s.io/v1/apiservices', {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: 'v1beta1.metrics.k8s.io' },
    spec: {
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      service: { namespace: 'kube-system', name: `metrics-server-${suffix}`, port },
      insecureSkipTLSVerify: true,
      groupPriorityMinimum: 100,
      versionPriority: 100,
    },
  });
});

after(async () => {
  fixture?.kill();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('kubectl top and raw metrics reads go through Capstan to the metrics API server', async () => {
  await eventually('the APIService to pass', async () => {
    const r = await rest.get('/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io');
    return (r.body.status?.conditions ?? []).some((c: { reason: string }) => c.reason === 'Passed') ? true : undefined;
  });
  const raw = JSON.parse(await kubectl('get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes'));
  assert.equal(raw.kind, 'NodeMetricsList');
  assert.deepEqual(
    raw.items.map((i: { metadata: { name: string }; usage: unknown }) => [i.metadata.name, i.usage]),
    [
      [nodes[0], { cpu: '250m', memory: '1Gi' }],
      [nodes[1], { cpu: '1', memory: '2Gi' }],
    ],
  );
  const top = await kubectl('top', 'node', nodes[0], '--no-headers');
  assert.match(top, new RegExp(`^${nodes[0]}\\s+250m\\s+6%\\s+1024Mi\\s+12%\\s*$`));
  const pods = await kubectl('top', 'pod', '-n', namespace, '--no-headers', '--containers');
  assert.match(pods, /^web-1\s+app\s+12m\s+20Mi\s*$/);
  const missing = await kubectl('get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes/nope').then(
    () => '',
    (err: { stderr: string }) => err.stderr,
  );
  assert.match(missing, /nodemetrics\.metrics\.k8s\.io "nope" not found/);
  // Aggregated discovery from the server's own aggregated document.
  const items = await eventually('aggregated discovery', async () => {
    const r = await rest.get('/apis', { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    return r.body.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'metrics.k8s.io') ? r.body.items : undefined;
  });
  const last = items[items.length - 1];
  assert.equal(last.metadata.name, 'metrics.k8s.io', 'groupPriorityMinimum 100 sorts last');
  assert.deepEqual(
    last.versions[0].resources.map((r: { resource: string; scope: string }) => `${r.resource}/${r.scope}`),
    ['nodes/Cluster', 'pods/Namespaced'],
  );
});
