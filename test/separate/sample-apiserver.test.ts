/**
 * kube's sample API server (the wardle server the e2e Aggregator conformance test deploys), built
 * from the Go module proxy, behind Capstan: it configures its delegated authentication from the
 * `extension-apiserver-authentication` ConfigMap, checks tokens and permissions with Capstan, and
 * kubectl reaches flunders through Capstan (create, get, watch, label, delete, api-resources,
 * explain). The Service has no selector; its EndpointSlice names the host's address the sample
 * server listens on, as a user running an extension server on a host would register it.
 * Not run by npm test: scripts/aggregator/test-sample-apiserver.sh (npm run test:sample-apiserver) runs it,
 * after building both Go programs once.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { adminKubeconfigFor } from '../../src/cli/kubeconfig.js';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { startSampleApiServer, type SampleApiServer } from '../helpers/sample-apiserver.js';
import { generateCertificates } from '../helpers/webhook-server.js';
import { hostAddress } from '../helpers/extension-server.js';
import { eventually, restFor, type Rest } from '../e2e/rest.js';

const run = promisify(execFile);
let dir: string;
let server: TestServer;
let rest: Rest;
let wardle: SampleApiServer;
let kubeconfig: string;
let namespace: string;

function kubectl(...args: string[]): Promise<string> {
  return run('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8' }).then((r) => r.stdout);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'capstan-wardle-test-'));
  const certDir = join(dir, 'pki');
  server = await startTestServer({ securePort: 0, certDir, authorizationMode: 'RBAC' });
  rest = restFor(server.url);
  const secureUrl = server.server.secureUrl ?? '';
  const pem = (name: string): string => readFileSync(join(certDir, name), 'utf8');
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, adminKubeconfigFor(secureUrl, pem('ca.crt'), pem('admin.crt'), pem('admin.key')));
  namespace = await rest.namespace('wardle');
  const host = hostAddress();
  const certs = await generateCertificates([`api.${namespace}.svc`], [host]);
  wardle = await startSampleApiServer(host, certs.certPem, certs.keyPem, readFileSync(kubeconfig, 'utf8'));
  await rest.create(`/api/v1/namespaces/${namespace}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'api' },
    spec: { ports: [{ name: 'https', port: 7443, targetPort: wardle.port }] },
  });
  await rest.create(`/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'api-host', labels: { 'kubernetes.io/service-name': 'api' } },
    addressType: 'IPv4',
    ports: [{ name: 'https', port: wardle.port, protocol: 'TCP' }],
    endpoints: [{ addresses: [host], conditions: { ready: true } }],
  });
  await rest.create('/apis/apiregistration.k8s.io/v1/apiservices', {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: 'v1alpha1.wardle.example.com' },
    spec: {
      group: 'wardle.example.com',
      version: 'v1alpha1',
      service: { namespace, name: 'api', port: 7443 },
      caBundle: certs.caBundle,
      groupPriorityMinimum: 2000,
      versionPriority: 200,
    },
  });
});

after(async () => {
  await wardle?.stop();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the sample API server becomes Available and kubectl manages flunders through Capstan', async () => {
  await eventually(
    'the APIService to pass',
    async () => {
      const r = await rest.get('/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.wardle.example.com');
      const c = (r.body.status?.conditions ?? []).find((x: { type: string }) => x.type === 'Available');
      return c?.reason === 'Passed' ? c : undefined;
    },
    60_000,
  ).catch((err: unknown) => assert.fail(`${String(err)}\n${wardle.log().slice(-3000)}`));
  const flunder = `apiVersion: wardle.example.com/v1alpha1\nkind: Flunder\nmetadata:\n  name: f1\n  namespace: ${namespace}\n  labels: {sample-label: "true"}\n`;
  const created = await new Promise<string>((resolve, reject) => {
    const child = spawn('kubectl', ['--kubeconfig', kubeconfig, 'create', '-f', '-', '-o', 'name']);
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`kubectl create exited ${code}`))));
    child.stdin.end(flunder);
  });
  assert.equal(created.trim(), 'flunder.wardle.example.com/f1');
  // A watch from kubectl sees the label change made by another kubectl.
  const watch = spawn('kubectl', [
    '--kubeconfig',
    kubeconfig,
    'get',
    'flunders',
    '-n',
    namespace,
    '--watch-only',
    '-o',
    'jsonpath={.metadata.labels.color}{"\\n"}',
  ]);
  let watched = '';
  watch.stdout.on('data', (d: Buffer) => (watched += d.toString()));
  let n = 0;
  try {
    // Labelled again (with a new value) until the watch, once started, reports a change.
    await eventually('the watch to see a change', async () => {
      await kubectl('label', 'flunder', 'f1', '-n', namespace, '--overwrite', `color=blue-${++n}`);
      return watched.includes('blue-') ? true : undefined;
    });
  } finally {
    watch.kill();
  }
  assert.equal(await kubectl('get', 'flunders', '-n', namespace, '-o', 'jsonpath={.items[*].metadata.name}'), 'f1');
  const resources = await kubectl('api-resources', '--api-group=wardle.example.com', '--no-headers');
  assert.match(resources, /^flunders\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder\s*$/m);
  assert.match(resources, /^fischers\s+wardle\.example\.com\/v1alpha1\s+false\s+Fischer\s*$/m);
  const explained = await eventually('kubectl explain', async () => kubectl('explain', 'flunder.spec').catch(() => undefined));
  assert.match(explained, /^GROUP:\s+wardle\.example\.com$/m);
  assert.match(explained, /reference\s+<string>\n\s+A name of another flunder or fischer/);
  assert.equal((await kubectl('delete', 'flunder', 'f1', '-n', namespace, '-o', 'name')).trim(), 'flunder.wardle.example.com/f1');
  assert.equal(await kubectl('get', 'flunders', '-n', namespace, '-o', 'name'), '');
  // The sample server took the aggregator's front-proxy headers: the create was kubectl's user.
  const create = wardle.auditEvents().find((e) => e.verb === 'create' && e.objectRef?.resource === 'flunders' && e.stage === 'ResponseComplete');
  assert.equal(create?.user.username, 'capstan-admin');
  assert.ok(create?.user.groups?.includes('system:masters'), JSON.stringify(create));
});
