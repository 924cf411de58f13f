/**
 * envtest's webhook configurations: the caBundle is the webhook's serving certificate itself (not a
 * CA), which Go trusts and OpenSSL does not, and the URL path starts with `//`, which client-go
 * cleans. The webhook client accepts the first exactly as Go does and sends the cleaned path.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { StorageServiceResolver, WebhookClient } from '../../src/webhook/webhook-client.js';
import { generateCertificates, startWebhookServer, type TestWebhookServer } from '../helpers/webhook-server.js';
import { webhookCallError } from '../helpers/webhook-server.js';

let server: TestWebhookServer;
const storage = new MemoryStorage({ historyMs: 60_000 });
const client = new WebhookClient(new StorageServiceResolver(storage));
const leafBundle = (pem: string): string => Buffer.from(pem).toString('base64');

before(async () => {
  server = await startWebhookServer(['localhost']);
  server.handle('/validate', (call) => ({ path: call.path }));
});

after(async () => {
  client.close();
  await server.stop();
  await storage.close();
});

test('a caBundle holding the serving certificate itself is trusted, and //path is sent as /path', async () => {
  const answer = await client.post({ url: `https://127.0.0.1:${server.port}//validate`, caBundle: leafBundle(server.certs.certPem) }, {}, { timeoutMs: 5000 });
  assert.deepEqual(answer, { path: '/validate' });
  const byName = await client.post(
    { url: `https://localhost:${server.port}/./x/../validate`, caBundle: leafBundle(server.certs.certPem) },
    {},
    { timeoutMs: 5000 },
  );
  assert.deepEqual(byName, { path: '/validate' });
});

test('another leaf in the caBundle is not trusted, and nothing reaches the server', async () => {
  const other = await generateCertificates(['localhost']);
  const before = server.calls.length;
  const err = await webhookCallError(
    client.post({ url: `https://127.0.0.1:${server.port}/validate`, caBundle: leafBundle(other.certPem) }, {}, { timeoutMs: 5000 }),
  );
  assert.equal(
    err.message,
    `Post "https://127.0.0.1:${server.port}/validate?timeout=5s": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
  );
  assert.equal(server.calls.length, before);
});

test('a trusted leaf is still checked against the host name', async () => {
  // A Service reference: the server's certificate names localhost, not hooks.wh-ns.svc.
  await storage.create('services', 'wh-ns/hooks', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'hooks', namespace: 'wh-ns' },
    spec: { type: 'ClusterIP', ports: [{ name: 'https', port: 443, targetPort: 8443 }] },
  });
  await storage.create('endpointslices.discovery.k8s.io', 'wh-ns/hooks-abc', {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'hooks-abc', namespace: 'wh-ns', labels: { 'kubernetes.io/service-name': 'hooks' } },
    addressType: 'IPv4',
    ports: [{ name: 'https', port: server.port }],
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
  });
  const before = server.calls.length;
  const err = await webhookCallError(
    client.post(
      { service: { namespace: 'wh-ns', name: 'hooks', path: '/validate', port: 443 }, caBundle: leafBundle(server.certs.certPem) },
      {},
      { timeoutMs: 5000 },
    ),
  );
  assert.match(err.message, /tls: failed to verify certificate: x509: certificate is valid for .*, not hooks\.wh-ns\.svc/);
  assert.equal(server.calls.length, before);
});
