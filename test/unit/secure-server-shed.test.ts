/**
 * A busy worker's secure server asked to shed an HTTP/2 client (SecureServer.shedSession), over
 * real HTTP/2 connections: it sends GOAWAY on the connection closest to the share, ends its
 * watches, tells the primary the connection was shed, and never picks a client the primary names
 * as settling (moved lately), so the rebalancer cannot bounce one client between two workers.
 */
import '../helpers/reflect-metadata-shim.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type ClientHttp2Session } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { generateCA, generateLeaf } from '../../src/tls/certificates.js';
import { secureServer, type SecureServer } from '../../src/server/secure-server.js';
import type { ClientConnection } from '../../src/server/client-connections.js';
import { connectionMovedSignal, countWatch } from '../../src/watch/connection-moves.js';

const KWOK = 'kwok/v0.8.0 (linux/amd64) kubernetes/abc';
const SCHEDULER = 'kube-scheduler/v1.36.4 (linux/amd64) kubernetes/abc';

let server: SecureServer;
let url = '';
const opened: ClientConnection[] = [];
const gone: { session: number; shed: boolean }[] = [];
const sessions: ClientHttp2Session[] = [];

before(async () => {
  const ca = await generateCA('shed-test-ca');
  const leaf = await generateLeaf(ca, { usage: 'server', commonName: 'localhost', dnsNames: ['localhost'], ips: ['127.0.0.1'] });
  server = secureServer(
    { cert: leaf.cert, key: leaf.key, requestCert: false, rejectUnauthorized: false },
    { keepAliveTimeout: 5000, requestTimeout: 0, maxHeaderSize: 16384, IncomingMessage },
    { maxStreamsPerConnection: 0 },
    (req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/watch') {
        // A watch: open until the client goes or its connection is moved.
        const over = new AbortController();
        countWatch(req, over.signal);
        connectionMovedSignal(req)?.addEventListener('abort', () => res.end(), { once: true });
        res.writeHead(200);
        res.write('{}\n');
        res.on('close', () => over.abort());
        return;
      }
      res.writeHead(200);
      res.end('ok');
    },
    { opened: (c) => opened.push(c), gone: (session, shed) => gone.push({ session, shed: shed === true }) },
  );
  await new Promise<void>((resolve) => server.server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.server.address() as AddressInfo).port}`;
});

after(async () => {
  for (const s of sessions) s.destroy();
  await new Promise<void>((resolve) => server.server.close(() => resolve()));
});

function get(session: ClientHttp2Session, path: string, userAgent: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, 'user-agent': userAgent });
    stream.on('data', () => undefined);
    stream.on('end', () => resolve());
    stream.on('error', reject);
    stream.end();
  });
}

/** A client on its own connection with a watch open; `goaway` resolves when the server sends GOAWAY. */
async function client(userAgent: string): Promise<{ session: ClientHttp2Session; goaway: Promise<void>; watchEnded: Promise<void> }> {
  const session = connect(url, { rejectUnauthorized: false });
  session.on('error', () => undefined);
  sessions.push(session);
  const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
  await get(session, '/first', userAgent);
  const watch = session.request({ ':path': '/watch', 'user-agent': userAgent });
  watch.on('error', () => undefined);
  const watchEnded = new Promise<void>((resolve) => watch.once('close', () => resolve()));
  await new Promise<void>((resolve) => watch.once('data', () => resolve()));
  return { session, goaway, watchEnded };
}

async function requests(session: ClientHttp2Session, userAgent: string, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, () => get(session, '/work', userAgent)));
}

test('a settling client is passed over for the next closest; shed connections are reported as shed', { timeout: 60_000 }, async () => {
  const kwok = await client(KWOK);
  const scheduler = await client(SCHEDULER);
  const kwokKey = opened.find((c) => c.client.endsWith(KWOK))?.client;
  const schedulerReport = opened.find((c) => c.client.endsWith(SCHEDULER));
  assert.ok(kwokKey !== undefined && schedulerReport !== undefined, `both connections reported: ${JSON.stringify(opened)}`);

  // kwok carried the share that would even the workers out, but it was moved lately.
  await requests(kwok.session, KWOK, 44);
  await requests(scheduler.session, SCHEDULER, 29);
  assert.equal(server.shedSession(0.6, new Set([kwokKey])), true);
  await scheduler.goaway;
  await scheduler.watchEnded;
  assert.deepEqual(gone, [{ session: schedulerReport.session, shed: true }]);
  assert.equal(kwok.session.closed, false);
});

test('with only settling clients carrying requests, nothing is shed', { timeout: 60_000 }, async () => {
  const kwok = await client(`${KWOK} again`);
  await requests(kwok.session, KWOK, 10);
  const kwokKey = opened.find((c) => c.client.endsWith(KWOK))?.client ?? '';
  assert.equal(server.shedSession(0.9, new Set([kwokKey])), false);
  assert.equal(kwok.session.closed, false);
  // Not settling: the same connection is shed.
  await requests(kwok.session, KWOK, 10);
  assert.equal(server.shedSession(0.9), true);
  await kwok.goaway;
});
