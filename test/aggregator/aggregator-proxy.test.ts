/**
 * The aggregation layer against an extension API server over real HTTPS (test/helpers/extension-server.ts),
 * reached through an ExternalName Service: the authentication ConfigMap, the availability controller's
 * conditions, the proxy (front-proxy identity and headers, authorization at the aggregator, streamed
 * watches, spliced upgrades, refused redirects, kube's 503s), and discovery and OpenAPI merged.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { hostAddress, startExtensionServer, type ExtensionServer } from '../helpers/extension-server.js';
import { assertStatus, eventually, restFor, type Rest } from '../e2e/rest.js';

const GROUP = 'widgets.example.com';
const VERSION = 'v1';
const BASE = `/apis/${GROUP}/${VERSION}`;
const NAME = `${VERSION}.${GROUP}`;

let dir: string;
let server: TestServer;
let rest: Rest;
let ext: ExtensionServer;
let namespace: string;

function apiService(name: string, group: string, version: string, service: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name },
    spec: { group, version, service, groupPriorityMinimum: 2000, versionPriority: 100, ...extra },
  };
}

async function condition(name: string): Promise<Record<string, string> | undefined> {
  const r = await rest.get(`/apis/apiregistration.k8s.io/v1/apiservices/${name}`);
  return (r.body?.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Available');
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'capstan-aggregator-'));
  server = await startTestServer({ securePort: 0, certDir: join(dir, 'pki'), authorizationMode: 'RBAC' });
  rest = restFor(server.url);
  const frontProxyCA = readFileSync(join(dir, 'pki', 'front-proxy', 'ca.crt'), 'utf8');
  namespace = await rest.namespace('ext');
  ext = await startExtensionServer(GROUP, VERSION, frontProxyCA, `widgets.${namespace}.svc`);
  await rest.create(`/api/v1/namespaces/${namespace}/services`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'widgets' },
    spec: { type: 'ExternalName', externalName: 'localhost' },
  });
  await rest.create(
    '/apis/apiregistration.k8s.io/v1/apiservices',
    apiService(NAME, GROUP, VERSION, { namespace, name: 'widgets', port: ext.port }, { caBundle: ext.certs.caBundle }),
  );
});

after(async () => {
  await ext.stop();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('extension-apiserver-authentication is published with the front-proxy CA and kube keys', async () => {
  const cm = await eventually('the ConfigMap', async () => {
    const r = await rest.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
    return r.status === 200 ? r.body : undefined;
  });
  assert.deepEqual(Object.keys(cm.data), [
    'client-ca-file',
    'requestheader-allowed-names',
    'requestheader-client-ca-file',
    'requestheader-extra-headers-prefix',
    'requestheader-group-headers',
    'requestheader-username-headers',
  ]);
  assert.equal(cm.data['requestheader-client-ca-file'], readFileSync(join(dir, 'pki', 'front-proxy', 'ca.crt'), 'utf8'));
  assert.equal(cm.data['requestheader-allowed-names'], '["front-proxy-client"]');
  assert.equal(cm.data['requestheader-username-headers'], '["X-Remote-User"]');
  assert.equal(cm.data['requestheader-group-headers'], '["X-Remote-Group"]');
  assert.equal(cm.data['requestheader-extra-headers-prefix'], '["X-Remote-Extra-"]');
  assert.equal(cm.data['client-ca-file'], readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8'));
});

test('the APIService passes the availability checks and is defaulted and validated as kube does', async () => {
  const available = await eventually('Available', async () => ((await condition(NAME))?.reason === 'Passed' ? await condition(NAME) : undefined));
  assert.equal(available.status, 'True');
  assert.equal(available.message, 'all checks passed');
  const check = ext.requests.find((r) => r.url === BASE);
  assert.equal(check?.headers['x-remote-user'], 'system:kube-aggregator');
  assert.equal(check?.clientName, 'front-proxy-client');
  // A service reference without port gets 443; a bad spec is refused with kube's causes.
  const created = await rest.create(
    '/apis/apiregistration.k8s.io/v1/apiservices',
    apiService('v2.defaults.example.com', 'defaults.example.com', 'v2', { namespace, name: 'none' }),
  );
  assert.equal(created.spec.service.port, 443);
  assert.deepEqual(created.status, {});
  const bad = await rest.post(
    '/apis/apiregistration.k8s.io/v1/apiservices',
    apiService(
      'v1.bad.example.com',
      'bad.example.com',
      'v1',
      { namespace: '', name: 'x', port: 70000 },
      { groupPriorityMinimum: 0, caBundle: 'YQ==', insecureSkipTLSVerify: true },
    ),
  );
  assertStatus(bad, 422, 'Invalid');
  assert.deepEqual(
    bad.body.details.causes.map((c: { field: string; message: string }) => `${c.field}: ${c.message}`),
    [
      'spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000',
      'spec.service.namespace: Required value',
      'spec.service.port: Invalid value: 70000: port is not valid: must be between 1 and 65535, inclusive',
      'spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present',
    ],
  );
  // The missing Service: ServiceNotFound, and requests get kube's 503.
  const missing = await eventually('ServiceNotFound', async () =>
    (await condition('v2.defaults.example.com'))?.reason === 'ServiceNotFound' ? await condition('v2.defaults.example.com') : undefined,
  );
  assert.equal(missing.status, 'False');
  assert.equal(missing.message, `service/none in "${namespace}" is not present`);
  const r = await rest.get('/apis/defaults.example.com/v2/things');
  assert.equal(r.status, 503);
  assert.equal(r.text, 'service unavailable\n');
  assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
  assert.equal((await rest.del('/apis/apiregistration.k8s.io/v1/apiservices/v2.defaults.example.com')).status, 200);
});

test('a ClusterIP Service: ServicePortError, EndpointsNotFound, MissingEndpoints, then Passed through its ready endpoint', async () => {
  const merge = 'application/merge-patch+json';
  const group = 'gizmos.example.com';
  const host = hostAddress();
  const gizmos = await startExtensionServer(group, 'v1', readFileSync(join(dir, 'pki', 'front-proxy', 'ca.crt'), 'utf8'), `gizmos.${namespace}.svc`, host);
  try {
    await rest.create(`/api/v1/namespaces/${namespace}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'gizmos' },
      spec: { selector: { app: 'gizmos' }, ports: [{ name: 'https', port: 443, targetPort: gizmos.port }] },
    });
    const name = `v1.${group}`;
    await rest.create(
      '/apis/apiregistration.k8s.io/v1/apiservices',
      apiService(name, group, 'v1', { namespace, name: 'gizmos', port: 8443 }, { caBundle: gizmos.certs.caBundle }),
    );
    const reasonIs = (reason: string) => async () => {
      const c = await condition(name);
      return c?.reason === reason ? c : undefined;
    };
    const where = `service/gizmos in "${namespace}"`;
    const portError = await eventually('ServicePortError', reasonIs('ServicePortError'));
    assert.deepEqual([portError.status, portError.message], ['False', `${where} is not listening on port 8443`]);
    assert.equal((await rest.patch(`/apis/apiregistration.k8s.io/v1/apiservices/${name}`, { spec: { service: { port: 443 } } }, merge)).status, 200);
    // Capstan runs no EndpointSlice controller: the Service has no slice until one is written.
    const notFound = await eventually('EndpointsNotFound', reasonIs('EndpointsNotFound'));
    assert.deepEqual([notFound.status, notFound.message], ['False', `cannot find endpointslices for ${where}`]);
    await rest.create(`/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'gizmos-1', labels: { 'kubernetes.io/service-name': 'gizmos' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [host], conditions: { ready: false } }],
      ports: [{ name: 'https', port: gizmos.port, protocol: 'TCP' }],
    });
    const missing = await eventually('MissingEndpoints', reasonIs('MissingEndpoints'));
    assert.deepEqual([missing.status, missing.message], ['False', `endpointslices for ${where} have no addresses with port name "https"`]);
    assert.equal(gizmos.requests.length, 0, 'no check reaches a Service without a ready endpoint');
    const ready = { endpoints: [{ addresses: [host], conditions: { ready: true } }] };
    assert.equal((await rest.patch(`/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices/gizmos-1`, ready, merge)).status, 200);
    // The cluster IP is reached as kube-proxy would route it: to the ready endpoint's address and port.
    const passed = await eventually('Passed', reasonIs('Passed'));
    assert.deepEqual([passed.status, passed.message], ['True', 'all checks passed']);
    assert.ok(gizmos.requests.some((r) => r.url === `/apis/${group}/v1` && r.clientName === 'front-proxy-client'));
    const proxied = await rest.get(`/apis/${group}/v1`);
    assert.equal(proxied.status, 200);
    assert.equal(proxied.body.groupVersion, `${group}/v1`);
    assert.equal((await rest.del(`/apis/apiregistration.k8s.io/v1/apiservices/${name}`)).status, 200);
  } finally {
    await gizmos.stop();
  }
});

test('requests are authorized here, then sent with the user in front-proxy headers', async () => {
  await rest.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: `${namespace}-echo` },
    rules: [{ apiGroups: [GROUP], resources: ['echo'], verbs: ['list', 'create'] }],
  });
  await rest.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: `${namespace}-echo` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${namespace}-echo` },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
  });
  const asUser = (user: string, method = 'GET', body?: string) =>
    fetch(`${server.url}${BASE}/echo?x=1`, {
      method,
      body,
      headers: {
        'Impersonate-User': user,
        'Impersonate-Group': 'team-a',
        'Impersonate-Extra-Scopes': 'read',
        'X-Remote-User': 'mallory',
        'Content-Type': 'text/plain',
      },
    });
  const seen = ext.requests.length;
  const denied = await asUser('bob');
  assert.equal(denied.status, 403);
  const status = (await denied.json()) as { message: string };
  assert.match(
    status.message,
    /^echo\.widgets\.example\.com is forbidden: User "bob" cannot list resource "echo" in API group "widgets\.example\.com" at the cluster scope/,
  );
  assert.equal(ext.requests.length, seen, 'a refused request never reaches the extension server');
  const allowed = await eventually('RBAC to allow alice', async () => {
    const r = await asUser('alice');
    return r.status === 200 ? r : undefined;
  });
  const echo = (await allowed.json()) as { url: string; headers: Record<string, string | string[]>; clientName: string };
  assert.equal(echo.url, `${BASE}/echo?x=1`);
  assert.equal(echo.clientName, 'front-proxy-client');
  assert.equal(echo.headers['x-remote-user'], 'alice');
  assert.equal(echo.headers['x-remote-group'], 'team-a, system:authenticated');
  assert.equal(echo.headers['x-remote-extra-scopes'], 'read');
  assert.equal(echo.headers['x-forwarded-uri'], `${BASE}/echo`);
  assert.equal(echo.headers['x-forwarded-for'], '127.0.0.1');
  assert.equal(echo.headers['audit-id'], allowed.headers.get('audit-id'));
  for (const h of ['authorization', 'impersonate-user', 'impersonate-group', 'impersonate-extra-scopes']) assert.equal(echo.headers[h], undefined, h);
  // A body is streamed through.
  const posted = (await (await asUser('alice', 'POST', 'hello')).json()) as { method: string; body: string };
  assert.deepEqual([posted.method, posted.body], ['POST', 'hello']);
});

test('watch events reach the client one at a time, and closing the watch closes the backend one', async () => {
  const controller = new AbortController();
  const res = await fetch(`${server.url}${BASE}/namespaces/default/widgets?watch=true`, { signal: controller.signal });
  assert.equal(res.status, 200);
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  await eventually('the backend watch', async () => (ext.watchers() === 1 ? true : undefined));
  const decoder = new TextDecoder();
  for (const n of [1, 2, 3]) {
    const event = { type: 'ADDED', object: { kind: 'Widget', metadata: { name: `w${n}` } } };
    ext.emit(event);
    const chunk = await reader.read();
    assert.deepEqual(JSON.parse(decoder.decode(chunk.value)), event);
  }
  controller.abort();
  await reader.cancel().catch(() => undefined);
  await eventually('the backend watch to end', async () => (ext.watchers() === 0 ? true : undefined));
});

/** Sends a raw request on a new connection to the plain port and returns the socket and the response head. */
async function rawUpgrade(path: string): Promise<{ head: string; rest: Buffer; socket: ReturnType<typeof connect> }> {
  const { port } = new URL(server.url);
  const socket = connect(Number(port), '127.0.0.1');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: capstan\r\nConnection: Upgrade\r\nUpgrade: test-stream\r\n\r\n`);
  let received = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    socket.on('error', reject);
    const onData = (chunk: Buffer): void => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      resolve({ head: received.subarray(0, end).toString(), rest: received.subarray(end + 4), socket });
    };
    socket.on('data', onData);
  });
}

test('upgrade requests are passed on and spliced; other upgrade requests are served as before', async () => {
  const { head, socket } = await rawUpgrade(`${BASE}/namespaces/default/widgets/w1/attach`);
  assert.match(head, /^HTTP\/1\.1 101 /);
  assert.match(head, /\r\nX-Remote-User-Seen: system:admin(\r\n|$)/i);
  const echoed = new Promise<string>((resolve) => socket.once('data', (d: Buffer) => resolve(d.toString())));
  socket.write('ping');
  assert.equal(await echoed, 'ping');
  socket.destroy();
  const local = await rawUpgrade('/api/v1/namespaces/default');
  assert.match(local.head, /^HTTP\/1\.1 200 /);
  local.socket.destroy();
});

test('discovery and OpenAPI include the aggregated group version', async () => {
  const groups = await rest.get('/apis');
  const names = groups.body.groups.map((g: { name: string }) => g.name);
  assert.ok(names.includes(GROUP), names.join(' '));
  // groupPriorityMinimum 2000 sorts after every built-in group (15800 and up).
  assert.equal(names.indexOf(GROUP), names.indexOf('flowcontrol.apiserver.k8s.io') + 1);
  const group = await rest.get(`/apis/${GROUP}`);
  assert.deepEqual(group.body, {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name: GROUP,
    versions: [{ groupVersion: `${GROUP}/${VERSION}`, version: VERSION }],
    preferredVersion: { groupVersion: `${GROUP}/${VERSION}`, version: VERSION },
  });
  // Aggregated discovery from the server's legacy document (it has no aggregated one).
  const item = await eventually('aggregated discovery', async () => {
    const r = await rest.get('/apis', { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    return r.body.items.find((i: { metadata: { name: string } }) => i.metadata.name === GROUP);
  });
  assert.deepEqual(item, {
    metadata: { name: GROUP },
    versions: [
      {
        version: VERSION,
        resources: [
          {
            resource: 'widgets',
            responseKind: { group: '', version: '', kind: 'Widget' },
            scope: 'Namespaced',
            singularResource: 'widget',
            verbs: ['get', 'list', 'watch'],
            shortNames: ['wd'],
            subresources: [{ subresource: 'status', responseKind: { group: '', version: '', kind: 'Widget' }, verbs: ['get'] }],
          },
        ],
        freshness: 'Current',
      },
    ],
  });
  // kubectl runs beside the in-process server (a synchronous child would block its event loop).
  const { stdout: resources } = await promisify(execFile)('kubectl', [
    '--kubeconfig',
    server.kubeconfig,
    'api-resources',
    `--api-group=${GROUP}`,
    '--no-headers',
  ]);
  assert.match(resources, /^widgets\s+wd\s+widgets\.example\.com\/v1\s+true\s+Widget\s*$/m);
  const v2 = await eventually('the merged OpenAPI v2', async () => {
    const r = await rest.get('/openapi/v2');
    return r.body.paths[`${BASE}/namespaces/{namespace}/widgets`] === undefined ? undefined : r.body;
  });
  assert.equal(v2.paths['/apis/unrelated.example.com/v1/things'], undefined, 'only the APIService group version is taken');
  assert.equal(v2.definitions['example.widgets.v1.Widget'].properties.metadata.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta_v2');
  assert.deepEqual(v2.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta_v2'], { type: 'object', properties: { name: { type: 'string' } } });
  assert.ok(v2.definitions['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties.uid, 'the built-in ObjectMeta stays');
  const index = await rest.get('/openapi/v3');
  const link = index.body.paths[`apis/${GROUP}/${VERSION}`]?.serverRelativeURL as string;
  assert.ok(link, 'the v3 index lists the group version');
  const v3 = await rest.get(link);
  assert.ok(v3.body.paths[`${BASE}/namespaces/{namespace}/widgets`]);
});

test('a redirect from the backend is refused with a 502', async () => {
  const r = await rest.get(`${BASE}/redirect`);
  assert.equal(r.status, 502);
  assert.equal(r.text, 'the backend attempted to redirect this request, which is not permitted');
});

test('a backend that is down: kube 503s, FailedDiscoveryCheck, a Stale discovery entry', async () => {
  await ext.stop();
  const r = await rest.get(`${BASE}/namespaces/default/widgets`);
  assert.equal(r.status, 503);
  assert.equal(r.text, `error trying to reach service: dial tcp 127.0.0.1:${ext.port}: connect: connection refused\n`);
  // A change of the Service has the controller check again at once.
  const svc = `/api/v1/namespaces/${namespace}/services/widgets`;
  assert.equal((await rest.patch(svc, { metadata: { labels: { touched: 'yes' } } })).status, 200);
  const failed = await eventually(
    'FailedDiscoveryCheck',
    async () => ((await condition(NAME))?.reason === 'FailedDiscoveryCheck' ? await condition(NAME) : undefined),
    30_000,
  );
  assert.equal(failed.status, 'False');
  const url = `https://localhost:${ext.port}${BASE}`;
  assert.match(
    failed.message,
    new RegExp(`^failing or missing response from ${url}: Get "${url}": dial tcp (127\\.0\\.0\\.1|\\[::1\\]):${ext.port}: connect: connection refused$`),
  );
  const unavailable = await rest.get(`${BASE}/namespaces/default/widgets`);
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.text, 'service unavailable\n');
  const stale = await eventually('a Stale entry', async () => {
    const d = await rest.get('/apis', { Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    const item = d.body.items.find((i: { metadata: { name: string } }) => i.metadata.name === GROUP);
    return item?.versions[0].freshness === 'Stale' ? item : undefined;
  });
  assert.deepEqual(stale.versions, [{ version: VERSION, freshness: 'Stale' }]);
  // Deleting the APIService makes the group version Capstan's again: unknown, 404.
  assert.equal((await rest.del(`/apis/apiregistration.k8s.io/v1/apiservices/${NAME}`)).status, 200);
  await eventually('the group to be gone', async () => ((await rest.get(`/apis/${GROUP}`)).status === 404 ? true : undefined));
  assert.equal((await rest.get(`${BASE}/namespaces/default/widgets`)).status, 404);
});
