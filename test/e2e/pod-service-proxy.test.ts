/**
 * The pods/proxy and services/proxy subresources over HTTP, against a real backend: an HTTP server
 * on one of this machine's non-loopback addresses, which a Pod names in its status (set through
 * pods/status), so no pod runner is needed. Expected answers are kube-apiserver 1.36.4's to the
 * same requests (status codes, messages, the headers a backend sees, Location rewriting).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { networkInterfaces } from 'node:os';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Authenticator } from '../../src/auth/authenticator.js';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';

/** A non-internal IPv4 address of this machine that is not link-local (Go's global unicast). */
function hostAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal && !a.address.startsWith('169.254.')) return a.address;
  }
  return undefined;
}

const byHeader: Authenticator = {
  async authenticate(req: IncomingMessage) {
    const who = req.headers['x-test-user'];
    if (typeof who !== 'string') return { name: 'system:admin', uid: '', groups: ['system:masters', 'system:authenticated'], extra: {} };
    return { name: who, uid: '', groups: ['system:authenticated'], extra: {} };
  },
};

const ip = hostAddress();
const NS = 'proxy-e2e';
const PODS = `/api/v1/namespaces/${NS}/pods`;
const SERVICES = `/api/v1/namespaces/${NS}/services`;

/** What the backend was asked: `/hang` requests wait for the client, and tell when it has gone. */
const hanging: { arrived?: () => void; closed?: () => void } = {};
/** The second half of `/stream`'s answer waits for this to be called. */
let streamRest: (() => void) | undefined;

function backend(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const url = req.url ?? '';
    if (url.startsWith('/redirect')) {
      res.writeHead(302, { Location: '/target/x?y=1' }).end();
    } else if (url.startsWith('/hang')) {
      res.on('close', () => hanging.closed?.());
      hanging.arrived?.();
    } else if (url.startsWith('/cut')) {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('partial', () => req.socket.destroy());
    } else if (url.startsWith('/page')) {
      // The page of kube's conformance test "should proxy through a service and a pod".
      const page = Buffer.from('<a href="/rewriteme">test</a>');
      const gzipped = url.includes('gz');
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ...(gzipped ? { 'Content-Encoding': 'gzip' } : {}) });
      res.end(gzipped ? gzipSync(page) : page);
    } else if (url.startsWith('/stream')) {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('first;');
      streamRest = () => res.end('second');
    } else {
      res.writeHead(201, { 'Content-Type': 'application/json', 'X-Backend': 'yes', 'Access-Control-Allow-Origin': '*' });
      res.end(JSON.stringify({ method: req.method, url, headers: req.headers, body: Buffer.concat(chunks).toString() }));
    }
  });
}

describe('pods/proxy and services/proxy', { skip: ip === undefined ? 'no non-loopback IPv4 address on this machine' : false }, () => {
  let srv: TestServer;
  let server: Server;
  let port = 0;
  const json = { 'content-type': 'application/json' };
  const post = (path: string, body: unknown) => api(srv.url, path, { method: 'POST', headers: json, body: JSON.stringify(body) });

  before(async () => {
    server = createServer(backend);
    // An upgrade: the backend switches protocols and echoes what it then reads.
    server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${req.headers.upgrade}\r\nConnection: Upgrade\r\nX-Path: ${req.url}\r\n\r\n`);
      socket.on('data', (d: Buffer) => socket.write(`echo:${d.toString()}`));
      // The server keeps its upgraded sockets half-open: this one ends with its peer.
      socket.on('end', () => socket.end());
    });
    await new Promise<void>((resolve) => server.listen(0, ip, resolve));
    port = (server.address() as AddressInfo).port;
    srv = await startTestServer({ authorizationMode: 'RBAC' }, undefined, { authenticator: byHeader });
    assert.equal((await post('/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
    // The namespace's ServiceAccount may not be there yet: the Pods below need it.
    const sa = await post(`/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } });
    assert.ok(sa.status === 201 || sa.status === 409, sa.text);
    const pod = (name: string, ports: unknown[]) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'x', ports }] } });
    for (const [name, podIP] of [
      ['web', ip],
      ['loop', '127.0.0.1'],
      ['noip', ''],
    ]) {
      assert.equal((await post(PODS, pod(name ?? '', [{ containerPort: port, name: 'http' }]))).status, 201);
      if (podIP === '') continue;
      const status = await api(srv.url, `${PODS}/${name}/status`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ status: { podIP, podIPs: [{ ip: podIP }] } }),
      });
      assert.equal(status.status, 200, status.text);
    }
    const service = (name: string) => ({ metadata: { name }, spec: { ports: [{ name: 'http', port: 80, targetPort: port }] } });
    for (const name of ['svc', 'empty']) assert.equal((await post(SERVICES, service(name))).status, 201);
    const subsets = [{ addresses: [{ ip, targetRef: { kind: 'Pod', name: 'web', namespace: NS } }], ports: [{ name: 'http', port }] }];
    assert.equal((await post(`/api/v1/namespaces/${NS}/endpoints`, { metadata: { name: 'svc' }, subsets })).status, 201);
    assert.equal((await post(`/api/v1/namespaces/${NS}/endpoints`, { metadata: { name: 'empty' } })).status, 201);
    // alice may only read through the pod proxy.
    const RBAC = '/apis/rbac.authorization.k8s.io/v1';
    const rules = [{ apiGroups: [''], resources: ['pods/proxy'], verbs: ['get'] }];
    assert.equal((await post(`${RBAC}/namespaces/${NS}/roles`, { metadata: { name: 'proxy-get' }, rules })).status, 201);
    const binding = {
      metadata: { name: 'alice' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'proxy-get' },
      subjects: [{ kind: 'User', name: 'alice' }],
    };
    assert.equal((await post(`${RBAC}/namespaces/${NS}/rolebindings`, binding)).status, 201);
  });
  after(async () => {
    await srv?.stop();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  test('GET without a port uses the first container port; no path redirects to a slash; the query is passed on', async () => {
    const bare = await fetch(`${srv.url}${PODS}/web/proxy?a=1&path=zz`, { redirect: 'manual' });
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get('location'), `${PODS}/web/proxy/?a=1&path=zz`);
    const res = await api(srv.url, `${PODS}/web/proxy/?a=1&path=zz`, { headers: { authorization: 'Bearer secret' } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('x-backend'), 'yes');
    // kube drops the backend's CORS headers.
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    // The `path` query option does not name a path: the subpath does, and the query goes on as it came.
    assert.equal(res.body.url, '/?a=1&path=zz');
    assert.equal(res.body.headers['x-forwarded-uri'], `${PODS}/web/proxy/`);
    assert.ok(typeof res.body.headers['x-forwarded-for'] === 'string');
    assert.equal(res.body.headers.authorization, undefined);
  });

  test('name:port and scheme:name:port with a path; every proxied method carries its body', async () => {
    const res = await api(srv.url, `${PODS}/http:web:${port}/proxy/a%2Fb/c?x=1`);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.url, '/a/b/c?x=1');
    assert.equal(res.body.headers['x-forwarded-uri'], `${PODS}/http:web:${port}/proxy/a/b/c`);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const sent = await api(srv.url, `${PODS}/web:${port}/proxy/m?q=2`, { method, headers: { 'content-type': 'text/plain' }, body: `body of ${method}` });
      assert.equal(sent.status, 201, `${method}: ${sent.text}`);
      assert.deepEqual(
        [sent.body.method, sent.body.url, sent.body.body, sent.body.headers['content-type']],
        [method, '/m?q=2', `body of ${method}`, 'text/plain'],
      );
    }
  });

  test("a redirect's Location is put under the proxy path", async () => {
    const res = await fetch(`${srv.url}${PODS}/web/proxy/redirect`, { redirect: 'manual' });
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), `${PODS}/web/proxy/target/x?y=1`);
  });

  test('the links of an HTML page are put under the proxy path, in its own encoding', async () => {
    const plain = await fetch(`${srv.url}${PODS}/web:${port}/proxy/page`);
    assert.equal(await plain.text(), `<a href="${PODS}/web:${port}/proxy/rewriteme">test</a>`);
    const target = new URL(`${srv.url}${SERVICES}/svc:http/proxy/pagegz`);
    const gzipped = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      const client = request({ host: target.hostname, port: target.port, path: target.pathname }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      });
      client.on('error', reject);
      client.end();
    });
    assert.equal(gzipped.encoding, 'gzip');
    assert.equal(gunzipSync(gzipped.body).toString(), `<a href="${SERVICES}/svc:http/proxy/rewriteme">test</a>`);
  });

  test("kube's errors: invalid name forms, unknown pods, addresses not allowed, nothing listening, dry run", async () => {
    const cases: [string, number, string][] = [
      [`${PODS}/a:b:c:d/proxy/`, 400, 'invalid pod request "a:b:c:d"'],
      [`${PODS}/ftp:web:1/proxy/`, 400, 'invalid pod request "ftp:web:1"'],
      [`${PODS}/nope/proxy/`, 404, 'pods "nope" not found'],
      [`${PODS}/noip/proxy/`, 400, 'address not allowed'],
      [`${PODS}/loop/proxy/`, 400, 'address not allowed'],
      [`${PODS}/web:1/proxy/`, 503, `error trying to reach service: dial tcp ${ip}:1: connect: connection refused`],
      [`${PODS}/web:99999/proxy/`, 503, 'error trying to reach service: dial tcp: address 99999: invalid port'],
      [`${PODS}/web/proxy/x?dryRun=All`, 400, 'dryRun is not supported'],
    ];
    for (const [path, code, message] of cases) {
      const res = await api(srv.url, path);
      assert.equal(res.status, code, `${path}: ${res.text}`);
      assert.equal(res.body.message, message, path);
      assert.equal(res.body.reason, code === 400 ? 'BadRequest' : code === 404 ? 'NotFound' : 'ServiceUnavailable', path);
    }
  });

  test('services/proxy goes to a ready pod address of the named port; none is 503', async () => {
    for (const id of ['svc:http', 'svc:80', `http:svc:http`]) {
      const res = await api(srv.url, `${SERVICES}/${id}/proxy/p?q=1`, { method: 'POST', body: 'to the service' });
      assert.equal(res.status, 201, `${id}: ${res.text}`);
      assert.deepEqual([res.body.url, res.body.body], ['/p?q=1', 'to the service']);
    }
    const cases: [string, number, string][] = [
      [`${SERVICES}/svc/proxy/`, 503, 'no endpoints available for service "svc"'],
      [`${SERVICES}/svc:81/proxy/`, 503, 'no service port 81 found for service "svc"'],
      [`${SERVICES}/empty:http/proxy/`, 503, 'no endpoints available for service "empty"'],
      [`${SERVICES}/ghost:80/proxy/`, 404, 'services "ghost" not found'],
      [`${SERVICES}/a:b:c:d/proxy/`, 400, 'invalid service request "a:b:c:d"'],
    ];
    for (const [path, code, message] of cases) {
      const res = await api(srv.url, path);
      assert.equal(res.status, code, `${path}: ${res.text}`);
      assert.equal(res.body.message, message, path);
    }
  });

  test('authorization is per HTTP verb on pods/proxy; OPTIONS has no verb', async () => {
    const as = (method: string) => api(srv.url, `${PODS}/web/proxy/x`, { method, headers: { 'x-test-user': 'alice' } });
    // The binding reaches the authorizer through the change stream.
    const deadline = Date.now() + 10_000;
    while ((await as('GET')).status !== 201) {
      assert.ok(Date.now() < deadline, 'alice never got through the pod proxy');
      await new Promise((resolve) => setImmediate(resolve));
    }
    const forbidden = (verb: string) => `pods "web" is forbidden: User "alice" cannot ${verb} resource "pods/proxy" in API group "" in the namespace "${NS}"`;
    for (const [method, verb] of [
      ['POST', 'create'],
      ['OPTIONS', ''],
    ]) {
      const res = await as(method ?? '');
      assert.equal(res.status, 403, res.text);
      assert.equal(res.body.message, forbidden(verb ?? ''));
    }
    const svc = await api(srv.url, `${SERVICES}/svc:http/proxy/`, { headers: { 'x-test-user': 'alice' } });
    assert.equal(svc.status, 403, svc.text);
  });

  test('an upgrade request is spliced to the backend once it switches protocols; one that cannot connect is 500', async () => {
    const target = new URL(srv.url);
    const exchange = (path: string, after: (socket: ReturnType<typeof connect>, seen: string) => boolean): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect(Number(target.port), target.hostname, () =>
          socket.write(`GET ${path} HTTP/1.1\r\nHost: ${target.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`),
        );
        let seen = '';
        socket.on('data', (d: Buffer) => {
          seen += d.toString();
          if (after(socket, seen)) socket.end();
        });
        socket.on('error', reject);
        socket.on('close', () => resolve(seen));
      });
    let pinged = false;
    const spliced = await exchange(`${PODS}/web/proxy/ws?q=1`, (socket, seen) => {
      if (!pinged && seen.includes('\r\n\r\n')) {
        pinged = true;
        socket.write('ping');
      }
      return seen.endsWith('echo:ping');
    });
    assert.match(spliced, /^HTTP\/1\.1 101 Switching Protocols\r\n/);
    // kube sends the location's path alone on this path, without the query.
    assert.match(spliced, /\r\nX-Path: \/ws\r\n/);
    assert.ok(spliced.endsWith('echo:ping'), spliced);
    const refused = await exchange(`${PODS}/web:1/proxy/ws`, () => false);
    assert.match(refused, /^HTTP\/1\.1 500 /);
    const status = JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4));
    assert.deepEqual(status, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `error dialing backend: dial tcp ${ip}:1: connect: connection refused`,
      code: 500,
    });
  });

  test('answers stream: the first part arrives before the backend has finished', async () => {
    const res = await fetch(`${srv.url}${PODS}/web/proxy/stream`);
    assert.equal(res.status, 200);
    const reader = res.body?.getReader();
    assert.ok(reader !== undefined);
    const first = await reader.read();
    assert.equal(Buffer.from(first.value ?? []).toString(), 'first;');
    streamRest?.();
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += Buffer.from(part.value).toString();
    assert.equal(rest, 'second');
  });

  test('a backend that closes mid-answer cuts the answer; a client that leaves closes the backend request', async () => {
    const cut = await fetch(`${srv.url}${PODS}/web/proxy/cut`);
    assert.equal(cut.status, 200);
    await assert.rejects(cut.text());
    const arrived = new Promise<void>((resolve) => (hanging.arrived = resolve));
    const closed = new Promise<void>((resolve) => (hanging.closed = resolve));
    const target = new URL(`${srv.url}${PODS}/web/proxy/hang`);
    const client = request({ host: target.hostname, port: target.port, path: target.pathname });
    client.on('error', () => undefined);
    client.end();
    await arrived;
    client.destroy();
    await closed;
    // The server still serves.
    assert.equal((await api(srv.url, `${PODS}/web/proxy/`)).status, 201);
  });
});
