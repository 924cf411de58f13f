/**
 * The webhook client (src/webhook/webhook-client.ts) against a real HTTPS server in the test process:
 * URL and Service references (resolved through EndpointSlices, then Endpoints), the CA bundle as the
 * only trust root, the service DNS name as the TLS server name, and Go-worded errors for refused
 * connections, timeouts, untrusted or misnamed certificates, and non-2xx answers; a call whose
 * kept-alive connection the server closed is sent again once, on a new connection.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createServer } from 'node:net';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { StorageServiceResolver, WebhookClient } from '../../src/webhook/webhook-client.js';
import { generateCertificates, startWebhookServer, type TestWebhookServer } from '../helpers/webhook-server.js';
import { webhookCallError } from '../helpers/webhook-server.js';

let server: TestWebhookServer;
const storage = new MemoryStorage({ historyMs: 60_000 });
const client = new WebhookClient(new StorageServiceResolver(storage));

before(async () => {
  server = await startWebhookServer(['localhost', 'hooks.wh-ns.svc']);
  server.handle('/echo', (call) => ({ got: call.body, timeout: call.query.get('timeout'), host: call.headers.host }));
  server.handle('/slow', () => undefined);
  server.handle('/fail', (_call, res) => res.writeHead(500, { 'Content-Type': 'text/plain' }).end('boom'));
  server.handle('/status', (_call, res) =>
    res
      .writeHead(403, { 'Content-Type': 'application/json' })
      .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'nope', reason: 'Forbidden', code: 403 })),
  );
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
  await storage.create('services', 'wh-ns/legacy', {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'legacy', namespace: 'wh-ns' },
    spec: { ports: [{ port: 8443 }] },
  });
  await storage.create('endpoints', 'wh-ns/legacy', {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: 'legacy', namespace: 'wh-ns' },
    subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: server.port }] }],
  });
});

after(async () => {
  client.close();
  await server.stop();
  await storage.close();
});

test('a URL webhook gets the JSON body with the timeout parameter and its answer comes back parsed', async () => {
  const answer = await client.post({ url: `https://localhost:${server.port}/echo`, caBundle: server.certs.caBundle }, { hello: 'world' }, { timeoutMs: 2500 });
  assert.deepEqual(answer, { got: { hello: 'world' }, timeout: '3s', host: `localhost:${server.port}` });
});

test('an IP URL verifies the IP SAN', async () => {
  const answer = await client.post({ url: `${server.url}/echo`, caBundle: server.certs.caBundle }, {}, { timeoutMs: 10_000 });
  assert.equal((answer as { timeout: string }).timeout, '10s');
});

test('a service reference resolves through the EndpointSlice and verifies NAME.NAMESPACE.svc', async () => {
  const answer = await client.post(
    { service: { namespace: 'wh-ns', name: 'hooks', path: '/echo' }, caBundle: server.certs.caBundle },
    { a: 1 },
    { timeoutMs: 1000 },
  );
  assert.deepEqual(answer, { got: { a: 1 }, timeout: '1s', host: 'hooks.wh-ns.svc:443' });
});

test('a service without slices resolves through its Endpoints; a misnamed certificate is refused as Go refuses it', async () => {
  const err = await webhookCallError(
    client.post({ service: { namespace: 'wh-ns', name: 'legacy', path: '/echo', port: 8443 }, caBundle: server.certs.caBundle }, {}, { timeoutMs: 1000 }),
  );
  assert.equal(
    err.message,
    'Post "https://legacy.wh-ns.svc:8443/echo?timeout=1s": tls: failed to verify certificate: x509: certificate is valid for localhost, hooks.wh-ns.svc, 127.0.0.1, not legacy.wh-ns.svc',
  );
  assert.deepEqual(err.status, { code: 503, reason: 'ServiceUnavailable', message: 'error calling webhook' });
});

test('service resolution failures read as kube words them', async () => {
  const missing = await webhookCallError(client.post({ service: { namespace: 'wh-ns', name: 'nosuch' } }, {}, { timeoutMs: 1000 }));
  assert.equal(missing.message, 'Post "https://nosuch.wh-ns.svc:443/?timeout=1s": service "nosuch" not found');
  const noPort = await webhookCallError(client.post({ service: { namespace: 'wh-ns', name: 'hooks', port: 9 } }, {}, { timeoutMs: 1000 }));
  assert.equal(noPort.message, 'Post "https://hooks.wh-ns.svc:9/?timeout=1s": no service port 9 found for service "hooks"');
});

test('a certificate from another CA is signed by unknown authority', async () => {
  const other = await generateCertificates(['localhost']);
  const err = await webhookCallError(client.post({ url: `${server.url}/echo`, caBundle: other.caBundle }, {}, { timeoutMs: 1000 }));
  assert.equal(err.message, `Post "${server.url}/echo?timeout=1s": tls: failed to verify certificate: x509: certificate signed by unknown authority`);
});

test('a refused connection and a timeout', async () => {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((r) => probe.close(() => r()));
  const refused = await webhookCallError(client.post({ url: `https://127.0.0.1:${port}/x` }, {}, { timeoutMs: 1000 }));
  assert.equal(refused.message, `Post "https://127.0.0.1:${port}/x?timeout=1s": dial tcp 127.0.0.1:${port}: connect: connection refused`);
  const slow = await webhookCallError(client.post({ url: `${server.url}/slow`, caBundle: server.certs.caBundle }, {}, { timeoutMs: 200 }));
  assert.equal(slow.message, `Post "${server.url}/slow?timeout=1s": context deadline exceeded`);
  assert.equal(slow.timedOut, true);
});

test('non-2xx answers: a Status is the webhook status; anything else is client-go generic response', async () => {
  const ca = server.certs.caBundle;
  const failed = await webhookCallError(client.post({ url: `${server.url}/fail`, caBundle: ca }, {}, { timeoutMs: 1000 }));
  assert.equal(failed.message, 'an error on the server ("boom") has prevented the request from succeeding');
  assert.equal(failed.status.code, 500);
  const status = await webhookCallError(client.post({ url: `${server.url}/status`, caBundle: ca }, {}, { timeoutMs: 1000 }));
  assert.deepEqual(status.status, { code: 403, reason: 'Forbidden', message: 'nope' });
  const notFound = await webhookCallError(client.post({ url: `${server.url}/missing`, caBundle: ca }, {}, { timeoutMs: 1000 }));
  assert.equal(notFound.message, 'the server could not find the requested resource');
});

test("a kept-alive connection closed under a call is replaced once, as Go's transport replaces it; a new one is not", async () => {
  // A client of its own, so that the pooled connection is the one this test made.
  const own = new WebhookClient(new StorageServiceResolver(storage));
  const ca = server.certs.caBundle;
  const served = new WeakSet<object>();
  let closes = 0;
  // Answers on a connection's first request; closes the connection at once when it carries another.
  server.handle('/close-reused', (call, res) => {
    if (served.has(res.socket as object)) {
      closes++;
      res.socket?.destroy();
      return undefined;
    }
    served.add(res.socket as object);
    return { got: call.body };
  });
  server.handle('/close-always', (_call, res) => {
    res.socket?.destroy();
    return undefined;
  });
  try {
    assert.deepEqual(await own.post({ url: `${server.url}/close-reused`, caBundle: ca }, { n: 1 }, { timeoutMs: 2000 }), { got: { n: 1 } });
    // The second call goes out on the kept-alive connection, which the server closes: it is sent
    // again on a new connection, and that answer is the call's.
    assert.deepEqual(await own.post({ url: `${server.url}/close-reused`, caBundle: ca }, { n: 2 }, { timeoutMs: 2000 }), { got: { n: 2 } });
    assert.equal(closes, 1);
    // A connection closed on its first request is the call's failure, not sent again.
    own.close();
    const before = server.calls.length;
    const err = await webhookCallError(own.post({ url: `${server.url}/close-always`, caBundle: ca }, {}, { timeoutMs: 2000 }));
    assert.equal(err.message, `Post "${server.url}/close-always?timeout=2s": read: connection reset by peer`);
    assert.equal(server.calls.length - before, 1, 'one call reached the server');
  } finally {
    own.close();
  }
});
