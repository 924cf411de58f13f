/**
 * HTTP/2 on the secure port, as kube-apiserver serves it: a client offering `h2` in ALPN gets HTTP/2
 * (Go clients then multiplex every request over one connection), with kube's stream window and 1,000
 * streams (or --http2-max-streams-per-connection), every request and watch served over streams of one
 * connection, HTTP/1.1 still served on the same port, and `--disable-http2-serving=true` offering
 * HTTP/1.1 only. The server runs as its own process, as clients meet it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { connect as tlsConnect } from 'node:tls';
import { request } from 'node:https';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCapstan, type CapstanProcess } from '../helpers/capstan.js';
import { parseArgs } from '../../src/cli/flags.js';

interface Pki {
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

async function withServer(args: string[], body: (server: CapstanProcess, pki: Pki) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'capstan-h2-'));
  const server = await spawnCapstan(['--secure-port=0', `--cert-dir=${join(dir, 'pki')}`, '--log-format=json', ...args]);
  const file = (name: string): Buffer => readFileSync(join(dir, 'pki', name));
  try {
    await body(server, { ca: file('ca.crt'), cert: file('admin.crt'), key: file('admin.key') });
  } finally {
    assert.equal(await server.stop(), 0);
    rmSync(dir, { recursive: true, force: true });
  }
}

function session(url: string, pki: Pki): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = connect(url, { ...pki });
    s.once('remoteSettings', () => resolve(s));
    s.once('error', reject);
  });
}

interface Reply {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

function call(s: ClientHttp2Session, method: string, path: string, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ':method': method, ':path': path, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const stream = s.request(headers);
    let status = 0;
    let got: Record<string, unknown> = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      status = Number(h[':status']);
      got = h;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve({ status, headers: got, body: Buffer.concat(chunks).toString('utf8') }));
    stream.on('error', reject);
    stream.end(body);
  });
}

function alpn(url: string, pki: Pki, protocols: string[]): Promise<string | false> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: hostname, port: Number(port), ...pki, ALPNProtocols: protocols }, () => {
      resolve(socket.alpnProtocol ?? false);
      socket.end();
    });
    socket.once('error', reject);
  });
}

const CM = '/api/v1/namespaces/default/configmaps';

test('HTTP/2: kube SETTINGS, requests and a watch as streams of one connection, HTTP/1.1 beside it', { timeout: 120_000 }, async () => {
  await withServer([], async (server, pki) => {
    assert.equal(await alpn(server.url, pki, ['h2', 'http/1.1']), 'h2');
    assert.equal(await alpn(server.url, pki, ['http/1.1']), 'http/1.1');
    const s = await session(server.url, pki);
    try {
      assert.equal(s.remoteSettings.maxConcurrentStreams, 1000);
      assert.equal(s.remoteSettings.initialWindowSize, 256 * 1024);

      // A watch on one stream sees a create made on another stream of the same connection.
      const watch = s.request({ ':method': 'GET', ':path': `${CM}?watch=true&fieldSelector=metadata.name%3Dh2-watched` });
      const watchStatus = new Promise<number>((resolve) => watch.once('response', (h) => resolve(Number(h[':status']))));
      let received = '';
      const added = new Promise<Record<string, unknown>>((resolve) => {
        watch.on('data', (c: Buffer) => {
          received += c.toString('utf8');
          const line = received.split('\n').find((l) => l.includes('"ADDED"'));
          if (line !== undefined) resolve(JSON.parse(line) as Record<string, unknown>);
        });
      });
      assert.equal(await watchStatus, 200);
      const created = await call(s, 'POST', CM, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'h2-watched' }, data: { a: 'b' } }));
      assert.equal(created.status, 201, created.body);
      assert.equal(created.headers['content-type'], 'application/json');
      assert.equal(created.headers['connection'], undefined);
      const event = await added;
      assert.equal((event.object as { metadata: { name: string } }).metadata.name, 'h2-watched');
      watch.close(constants.NGHTTP2_CANCEL);

      // 100 requests at once on the one connection: all answered.
      const many = await Promise.all(
        Array.from({ length: 100 }, (_, i) => call(s, 'POST', CM, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `h2-${i}` } }))),
      );
      assert.deepEqual(
        many.map((r) => r.status),
        many.map(() => 201),
      );
      const list = await call(s, 'GET', `${CM}?limit=500`);
      assert.equal(list.status, 200);
      assert.equal((JSON.parse(list.body) as { items: unknown[] }).items.length >= 101, true);

      // Errors are kube Status objects, gzip is negotiated as over HTTP/1.1.
      const missing = await call(s, 'GET', `${CM}/nope`);
      assert.equal(missing.status, 404);
      assert.equal((JSON.parse(missing.body) as { reason: string }).reason, 'NotFound');

      // Impersonation headers are read over HTTP/2 too.
      const whoami = await new Promise<Reply>((resolve, reject) => {
        const stream = s.request({
          ':method': 'POST',
          ':path': '/apis/authentication.k8s.io/v1/selfsubjectreviews',
          'content-type': 'application/json',
          'impersonate-user': 'jane',
        });
        let status = 0;
        const chunks: Buffer[] = [];
        stream.on('response', (h) => (status = Number(h[':status'])));
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => resolve({ status, headers: {}, body: Buffer.concat(chunks).toString('utf8') }));
        stream.on('error', reject);
        stream.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
      });
      assert.equal(whoami.status, 201, whoami.body);
      assert.equal((JSON.parse(whoami.body) as { status: { userInfo: { username: string } } }).status.userInfo.username, 'jane');
    } finally {
      s.close();
    }

    // HTTP/1.1 on the same port (Node's HTTPS client offers no ALPN).
    const h1 = await new Promise<number>((resolve, reject) => {
      const req = request(`${server.url}${CM}/h2-watched`, { ...pki }, (res) => {
        res.resume();
        assert.equal(res.httpVersion, '1.1');
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(h1, 200);
  });
});

test('--http2-max-streams-per-connection sets the SETTINGS; --disable-http2-serving=true offers HTTP/1.1 only', { timeout: 120_000 }, async () => {
  await withServer(['--http2-max-streams-per-connection=250'], async (server, pki) => {
    const s = await session(server.url, pki);
    assert.equal(s.remoteSettings.maxConcurrentStreams, 250);
    s.close();
  });
  await withServer(['--disable-http2-serving=true'], async (server, pki) => {
    assert.equal(await alpn(server.url, pki, ['h2', 'http/1.1']), 'http/1.1');
  });
});

test("a change that reaches one watch goes out before its write's response, however many watches are open", { timeout: 120_000 }, async () => {
  await withServer([], async (server, pki) => {
    // 300 watches that no change below reaches (another namespace): open, but with nothing to write.
    const idle = await session(server.url, pki);
    const s = await session(server.url, pki);
    try {
      const opened = Array.from({ length: 300 }, () => {
        const w = idle.request({ ':method': 'GET', ':path': '/api/v1/namespaces/kube-public/configmaps?watch=true' });
        return new Promise<number>((resolve) => w.once('response', (h) => resolve(Number(h[':status']))));
      });
      assert.deepEqual(new Set(await Promise.all(opened)), new Set([200]));

      // One watch on the writer's own connection, as client-go holds them; each write's event must
      // come before its answer is complete on that connection.
      const order: string[] = [];
      const watch = s.request({ ':method': 'GET', ':path': `${CM}?watch=true&labelSelector=flush%3Dorder` });
      assert.equal(await new Promise<number>((resolve) => watch.once('response', (h) => resolve(Number(h[':status'])))), 200);
      let received = '';
      watch.on('data', (c: Buffer) => {
        received += c.toString('utf8');
        const lines = received.split('\n');
        received = lines.pop() ?? '';
        for (const line of lines) order.push(`event ${(JSON.parse(line) as { object: { metadata: { name: string } } }).object.metadata.name}`);
      });
      for (let i = 0; i < 10; i++) {
        const name = `flush-order-${i}`;
        const post = s.request({ ':method': 'POST', ':path': CM, 'content-type': 'application/json', accept: 'application/json' });
        // A client has its answer once the body has ended (client-go reads it whole).
        let code = 0;
        post.once('response', (h) => (code = Number(h[':status'])));
        const status = new Promise<number>((resolve) =>
          post.once('end', () => {
            order.push(`response ${name}`);
            resolve(code);
          }),
        );
        post.resume();
        post.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { flush: 'order' } } }));
        assert.equal(await status, 201);
      }
      watch.close(constants.NGHTTP2_CANCEL);
      assert.deepEqual(order, Array.from({ length: 10 }, (_, i) => [`event flush-order-${i}`, `response flush-order-${i}`]).flat());
    } finally {
      s.close();
      idle.close();
    }
  });
});

/** A non-internal IPv4 address of this machine (a pod's address must not be loopback to be proxied). */
function hostAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal && !a.address.startsWith('169.254.')) return a.address;
  }
  return undefined;
}

test(
  "pods/proxy from an HTTP/2 client: the backend gets the client's host as its Host header, as from HTTP/1.1",
  { timeout: 120_000, skip: hostAddress() === undefined ? 'no non-loopback IPv4 address on this machine' : false },
  async () => {
    const ip = hostAddress() ?? '';
    // agnhost's netexec, like Go's HTTP/1.1 server, refuses a request without a Host header (400).
    const backend = createHttpServer((req, res) => {
      res.writeHead(req.headers.host === undefined ? 400 : 200, { 'content-type': 'text/plain' });
      res.end(`host=${req.headers.host ?? ''}`);
    });
    await new Promise<void>((resolve) => backend.listen(0, ip, resolve));
    const port = (backend.address() as AddressInfo).port;
    try {
      await withServer([], async (server, pki) => {
        const s = await session(server.url, pki);
        try {
          const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'h2-proxied' }, spec: { containers: [{ name: 'c', image: 'x' }] } };
          assert.equal((await call(s, 'POST', '/api/v1/namespaces/default/pods', JSON.stringify(pod))).status, 201);
          const status = await new Promise<number>((resolve, reject) => {
            const stream = s.request({
              ':method': 'PATCH',
              ':path': '/api/v1/namespaces/default/pods/h2-proxied/status',
              'content-type': 'application/merge-patch+json',
            });
            stream.on('response', (h) => resolve(Number(h[':status'])));
            stream.on('error', reject);
            stream.resume();
            stream.end(JSON.stringify({ status: { podIP: ip, podIPs: [{ ip }] } }));
          });
          assert.equal(status, 200);
          const authority = new URL(server.url).host;
          const proxied = await call(s, 'GET', `/api/v1/namespaces/default/pods/h2-proxied:${port}/proxy/x`);
          assert.equal(proxied.status, 200, proxied.body);
          assert.equal(proxied.body, `host=${authority}`);
        } finally {
          s.close();
        }
      });
    } finally {
      await new Promise((resolve) => backend.close(resolve));
    }
  },
);

test('--goaway-chance: now and then a request tells its connection to go away; it and a watch already open finish on it', { timeout: 120_000 }, async () => {
  assert.throws(() => parseArgs(['--goaway-chance=0.03']), /^Error: --goaway-chance can not be less than 0 or greater than 0\.02$/);
  assert.throws(() => parseArgs(['--goaway-chance=x']), /invalid argument "x" for "--goaway-chance" flag/);
  await withServer(['--goaway-chance=0.02'], async (server, pki) => {
    const s = await session(server.url, pki);
    const other = await session(server.url, pki);
    try {
      let goneAway = false;
      const goaway = new Promise<number>((resolve) =>
        s.once('goaway', (code: number) => {
          goneAway = true;
          resolve(code);
        }),
      );
      const watch = s.request({ ':method': 'GET', ':path': `${CM}?watch=true&fieldSelector=metadata.name%3Dgoaway-watched` });
      const watchStatus = new Promise<number>((resolve) => watch.once('response', (h) => resolve(Number(h[':status']))));
      let received = '';
      const added = new Promise<string>((resolve) => {
        watch.on('data', (c: Buffer) => {
          received += c.toString('utf8');
          if (received.includes('"ADDED"')) resolve(received);
        });
      });
      assert.equal(await watchStatus, 200);
      // One request in 50 on average: by 2,000 one has come but for a chance of 3e-18.
      let answered = 0;
      while (!goneAway && answered < 2000) {
        const reply = await call(s, 'GET', `${CM}?limit=1`);
        // The request that drew the GOAWAY is answered too.
        assert.equal(reply.status, 200, reply.body);
        answered++;
      }
      assert.ok(goneAway, `no GOAWAY in ${answered} requests`);
      assert.equal(await goaway, constants.NGHTTP2_NO_ERROR);
      // No new request on the old connection; the watch opened on it goes on.
      assert.throws(() => s.request({ ':method': 'GET', ':path': CM }), { code: 'ERR_HTTP2_GOAWAY_SESSION' });
      const created = await call(other, 'POST', CM, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'goaway-watched' } }));
      assert.equal(created.status, 201, created.body);
      assert.match(await added, /"name":"goaway-watched"/);
      watch.close(constants.NGHTTP2_CANCEL);
    } finally {
      s.close();
      other.close();
    }
  });
  // Off by default: 300 requests on one connection, no GOAWAY.
  await withServer([], async (server, pki) => {
    const s = await session(server.url, pki);
    let goneAway = false;
    s.once('goaway', () => (goneAway = true));
    try {
      for (let i = 0; i < 300; i++) assert.equal((await call(s, 'GET', `${CM}?limit=1`)).status, 200);
      assert.equal(goneAway, false);
    } finally {
      s.close();
    }
  });
});
