/**
 * A pod's log, exec, attach and portforward reach the kubelet of its node, over HTTP against a real
 * HTTPS server standing in for the kubelet on 127.0.0.1 (the node's status names its address and
 * port). Expected answers are kube-apiserver 1.36.4's to the same requests: the kubelet paths and
 * queries it sends, its Status for each refusal, a kubelet's error answers and an unreachable kubelet.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startTestServer, type TestServer } from '../helpers/capstan.js';
import { generateCertificates } from '../helpers/webhook-server.js';
import { hostAddress } from '../helpers/extension-server.js';
import { openWebSocket } from '../helpers/websocket-client.js';

const NS = 'kubelet-e2e';
const PODS = `/api/v1/namespaces/${NS}/pods`;

/** What the kubelet stand-in was asked, in order. */
interface KubeletCall {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** The CN of the client certificate the API server presented ('' for none). */
  clientCN: string;
}

const calls: KubeletCall[] = [];
/** The rest of a followed log waits for this to be called. */
let followRest: (() => void) | undefined;

function record(req: IncomingMessage): void {
  const peer = (req.socket as TLSSocket).getPeerCertificate();
  calls.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, clientCN: typeof peer?.subject?.CN === 'string' ? peer.subject.CN : '' });
}

/** The kubelet's `/containerLogs`: a container named `errNNN` answers NNN, `follow` streams in two parts; other paths say their URL. */
function kubelet(req: IncomingMessage, res: ServerResponse): void {
  record(req);
  if (!(req.url ?? '').startsWith('/containerLogs/')) {
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`kubelet ${req.url}`);
    return;
  }
  const container = (req.url ?? '').split('?')[0].split('/')[4] ?? '';
  const code = /^err(\d{3})$/.exec(container);
  if (code !== null) {
    res.writeHead(Number(code[1]), { 'Content-Type': 'text/plain' }).end(`kubelet answers ${code[1]}`);
    return;
  }
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'X-From-Kubelet': 'yes' });
  if (container === 'big') {
    res.end('0123456789'.repeat(500));
    return;
  }
  if (container === 'follow') {
    res.write('first line\n');
    followRest = () => res.end('second line\n');
    return;
  }
  res.end('line one\nline two\n');
}

/** The kubelet's streaming endpoints: a SPDY upgrade is accepted and echoes what it reads, prefixed. */
function kubeletUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
  record(req);
  if ((req.url ?? '').includes('/refuse/')) {
    socket.end('HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 15\r\n\r\nkubelet says no');
    return;
  }
  socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: v4.channel.k8s.io\r\n\r\n');
  if (head.length > 0) socket.write(Buffer.concat([Buffer.from('echo:'), head]));
  socket.on('data', (chunk: Buffer) => socket.write(Buffer.concat([Buffer.from('echo:'), chunk])));
}

let server: TestServer;
/** A plain HTTP server on another port of the node: what a node proxy to a port other than the kubelet's reaches. */
let other: HttpServer;
/** This machine's non-loopback address: the node proxy refuses a node at 127.0.0.1, as kube does. */
const nodeIP = hostAddress();

/** A request with a JSON body (a merge patch when `contentType` says so). */
function call(method: string, path: string, body?: unknown, contentType = 'application/json'): ReturnType<typeof api> {
  return api(server.url, path, { method, headers: { 'Content-Type': contentType }, body: body === undefined ? undefined : JSON.stringify(body) });
}
let backend: Server;
let dir: string;
let port = 0;

/** A Node whose status points at the stand-in (or at `status` when given). */
async function node(name: string, status: Record<string, unknown>): Promise<void> {
  const created = await call('POST', '/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name } });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const patched = await call('PATCH', `/api/v1/nodes/${name}/status`, { status }, 'application/merge-patch+json');
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
}

async function pod(name: string, spec: Record<string, unknown>): Promise<void> {
  const res = await call('POST', PODS, { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

/** A GET with its status, Content-Type and text. */
async function get(path: string): Promise<{ status: number; type: string; text: string }> {
  const res = await fetch(`${server.url}${path}`);
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** A GET answered with a Status: its code and message. */
async function refusal(path: string, method = 'GET'): Promise<{ code: number; reason?: string; message: string; details?: unknown }> {
  const res = await call(method, path);
  const body = res.body as { code: number; reason?: string; message: string; details?: unknown };
  assert.equal(res.status, body.code);
  return { code: body.code, reason: body.reason, message: body.message, details: body.details };
}

/** An upgrade request through the API server: the raw answer head and, after a 101, the echo of `send`. */
function upgrade(path: string, send: string): Promise<{ head: string; echoed: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${server.url}${path}`);
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: { Connection: 'Upgrade', Upgrade: 'SPDY/3.1', 'X-Stream-Protocol-Version': 'v4.channel.k8s.io', Authorization: 'Bearer secret' },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ head: `${res.statusCode}`, echoed: Buffer.concat(chunks).toString() }));
    });
    req.on('upgrade', (res, socket: Socket) => {
      let echoed = '';
      socket.on('data', (c: Buffer) => {
        echoed += c.toString();
        if (echoed.length >= `echo:${send}`.length) {
          socket.destroy();
          resolve({ head: `${res.statusCode} ${res.headers.upgrade}`, echoed });
        }
      });
      socket.write(send);
    });
    req.end();
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'capstan-kubelet-'));
  const serving = await generateCertificates(['localhost'], ['127.0.0.1', nodeIP]);
  const client = await generateCertificates(['kube-apiserver-kubelet-client']);
  const file = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  backend = createServer({ cert: serving.certPem, key: serving.keyPem, requestCert: true, rejectUnauthorized: false }, kubelet);
  backend.on('upgrade', kubeletUpgrade);
  await new Promise<void>((resolve) => backend.listen(0, '0.0.0.0', resolve));
  port = (backend.address() as AddressInfo).port;
  other = createHttpServer((req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end(`other port ${req.url}`));
  await new Promise<void>((resolve) => other.listen(0, '0.0.0.0', resolve));
  server = await startTestServer({
    kubeletClientCertificate: file('client.crt', client.certPem),
    kubeletClientKey: file('client.key', client.keyPem),
    kubeletCertificateAuthority: file('ca.crt', serving.caPem),
    // The streams' audit events (a log and the connect subresources; nothing else is recorded).
    auditLogPath: join(dir, 'audit.log'),
    auditPolicyFile: file(
      'audit-policy.yaml',
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: "", resources: ["pods/log", "pods/exec"]}]\n- level: None\n',
    ),
  });
  await call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await call('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  await node('kubelet-node', { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } });
  await node('named-node', {
    addresses: [
      { type: 'InternalIP', address: '127.0.0.1' },
      { type: 'Hostname', address: 'localhost' },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: port } },
  });
  await node('bare-node', { daemonEndpoints: { kubeletEndpoint: { Port: port } } });
  await node('host-node', { addresses: [{ type: 'InternalIP', address: nodeIP }], daemonEndpoints: { kubeletEndpoint: { Port: port } } });
  await pod('one', { nodeName: 'kubelet-node', containers: [{ name: 'app', image: 'x' }] });
  await pod('multi', {
    nodeName: 'kubelet-node',
    initContainers: [{ name: 'setup', image: 'x' }],
    containers: [
      { name: 'a', image: 'x' },
      { name: 'b', image: 'x' },
    ],
  });
  await pod('errors', {
    nodeName: 'kubelet-node',
    containers: ['err404', 'err400', 'err500', 'err403', 'err503', 'follow', 'big'].map((name) => ({ name, image: 'x' })),
  });
  await pod('unbound', { containers: [{ name: 'app', image: 'x' }] });
  await pod('by-hostname', { nodeName: 'named-node', containers: [{ name: 'app', image: 'x' }] });
  await pod('addressless', { nodeName: 'bare-node', containers: [{ name: 'app', image: 'x' }] });
  await pod('lost', { nodeName: 'ghost', containers: [{ name: 'app', image: 'x' }] });
});

after(async () => {
  followRest?.();
  await server?.stop();
  await new Promise<void>((resolve) => (backend ? backend.close(() => resolve()) : resolve()));
  await new Promise<void>((resolve) => (other ? other.close(() => resolve()) : resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('pods/log through the kubelet', () => {
  test('the log streams from /containerLogs as text/plain, with the options as kube sends them and the client certificate', async () => {
    calls.length = 0;
    const plain = await get(`${PODS}/one/log`);
    assert.deepEqual(plain, { status: 200, type: 'text/plain', text: 'line one\nline two\n' });
    const all = await get(
      `${PODS}/one/log?container=app&follow=true&previous=1&timestamps=yes&sinceSeconds=10&tailLines=5&limitBytes=100&insecureSkipTLSVerifyBackend=true`,
    );
    assert.equal(all.status, 200);
    const since = await get(`${PODS}/multi/log?container=setup&sinceTime=2026-01-01T10:00:00.123%2B02:00&follow=0&timestamps=false`);
    assert.equal(since.status, 200);
    assert.deepEqual(
      calls.map((c) => `${c.method} ${c.url}`),
      [
        `GET /containerLogs/${NS}/one/app`,
        `GET /containerLogs/${NS}/one/app?follow=true&limitBytes=100&previous=true&sinceSeconds=10&tailLines=5&timestamps=true`,
        `GET /containerLogs/${NS}/multi/setup?sinceTime=2026-01-01T08%3A00%3A00Z`,
      ],
    );
    assert.ok(
      calls.every((c) => c.clientCN === 'kube-apiserver-kubelet-client'),
      'the kubelet client certificate is presented',
    );
    assert.ok(calls.every((c) => c.headers.authorization === undefined));
  });

  test('a followed log reaches the client as the kubelet writes it', async () => {
    const res = await fetch(`${server.url}${PODS}/errors/log?container=follow&follow=true`);
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    assert.equal(Buffer.from(first.value!).toString(), 'first line\n');
    // The kubelet has not ended: the second line is written only now.
    followRest!();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += Buffer.from(chunk.value).toString();
    assert.equal(rest, 'second line\n');
  });

  test('containers, nodes and options are refused with kube-apiserver statuses', async () => {
    assert.deepEqual(await refusal(`${PODS}/one/log?container=zz`), {
      code: 400,
      reason: 'BadRequest',
      message: 'container zz is not valid for pod one',
      details: undefined,
    });
    assert.equal((await refusal(`${PODS}/multi/log`)).message, 'a container name must be specified for pod multi, choose one of: [setup a b]');
    assert.deepEqual(await refusal(`${PODS}/nope/log`), {
      code: 404,
      reason: 'NotFound',
      message: 'pods "nope" not found',
      details: { name: 'nope', kind: 'pods' },
    });
    // kube looks the node up through a getter that names it as a pod.
    assert.deepEqual(await refusal(`${PODS}/lost/log`), {
      code: 404,
      reason: 'NotFound',
      message: 'pods "ghost" not found',
      details: { name: 'ghost', kind: 'pods' },
    });
    assert.deepEqual(await refusal(`${PODS}/addressless/log`), {
      code: 500,
      reason: undefined,
      message: 'no preferred addresses found; known addresses: []',
      details: undefined,
    });
    const unbound = await get(`${PODS}/unbound/log`);
    assert.deepEqual(unbound, { status: 204, type: '', text: '' });
    assert.equal((await refusal(`${PODS}/one/log?tailLines=abc`)).message, 'strconv.ParseInt: parsing "abc": invalid syntax');
    assert.equal(
      (await refusal(`${PODS}/one/log?limitBytes=99999999999999999999`)).message,
      'strconv.ParseInt: parsing "99999999999999999999": value out of range',
    );
    assert.equal(
      (await refusal(`${PODS}/one/log?sinceTime=yesterday`)).message,
      'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    );
    const invalid = await refusal(`${PODS}/one/log?sinceSeconds=-5&tailLines=-1&limitBytes=-1`);
    assert.equal(invalid.code, 422);
    assert.equal(
      invalid.message,
      'PodLogOptions "one" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: -1: must be greater than 0, sinceSeconds: Invalid value: -5: must be greater than 0]',
    );
    assert.equal(
      (await refusal(`${PODS}/one/log?sinceSeconds=1&sinceTime=2026-01-01T00:00:00Z`)).message,
      'PodLogOptions "one" is invalid: []: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
    );
    assert.equal((await refusal(`${PODS}/one/log?stream=Stdout`)).message, 'PodLogOptions "one" is invalid: stream: Forbidden: may not be specified');
    // kube serves the log for GET alone.
    for (const method of ['HEAD', 'POST', 'PUT', 'DELETE']) assert.equal((await fetch(`${server.url}${PODS}/unbound/log`, { method })).status, 405, method);
    assert.deepEqual(await refusal(`${PODS}/unbound/log`, 'POST'), {
      code: 405,
      reason: 'MethodNotAllowed',
      message: 'the server does not allow this method on the requested resource',
      details: {},
    });
  });

  test("a kubelet's error answers become kube's Status, and an unreachable kubelet a 500", async () => {
    assert.deepEqual(await refusal(`${PODS}/errors/log?container=err404`), {
      code: 404,
      reason: 'NotFound',
      message: 'the server could not find the requested resource ( pods/log errors)',
      details: { name: 'errors', kind: 'pods/log' },
    });
    assert.deepEqual(await refusal(`${PODS}/errors/log?container=err400`), {
      code: 400,
      reason: 'BadRequest',
      message: 'kubelet answers 400',
      details: undefined,
    });
    assert.deepEqual(await refusal(`${PODS}/errors/log?container=err500`), {
      code: 500,
      reason: 'InternalError',
      message: 'Internal error occurred: kubelet answers 500',
      details: { causes: [{ message: 'kubelet answers 500' }] },
    });
    assert.equal((await refusal(`${PODS}/errors/log?container=err403`)).message, 'kubelet answers 403 ( pods/log errors)');
    assert.equal((await refusal(`${PODS}/errors/log?container=err503`)).message, 'the server is currently unable to handle the request ( pods/log errors)');
    // The Hostname address comes first; the stand-in's certificate names localhost, so it verifies.
    assert.equal((await get(`${PODS}/by-hostname/log`)).text, 'line one\nline two\n');
    await call('PATCH', '/api/v1/nodes/named-node/status', { status: { daemonEndpoints: { kubeletEndpoint: { Port: 1 } } } }, 'application/merge-patch+json');
    try {
      assert.deepEqual(await refusal(`${PODS}/by-hostname/log`), {
        code: 500,
        reason: undefined,
        message: `Get "https://localhost:1/containerLogs/${NS}/by-hostname/app": dial tcp 127.0.0.1:1: connect: connection refused`,
        details: undefined,
      });
    } finally {
      await call(
        'PATCH',
        '/api/v1/nodes/named-node/status',
        { status: { daemonEndpoints: { kubeletEndpoint: { Port: port } } } },
        'application/merge-patch+json',
      );
    }
  });
});

describe('pods/log as a WebSocket', () => {
  const accept = (key: string): string => createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');

  test('binary.k8s.io: kube-apiserver answers 101 and sends the log in binary messages after an empty one, then closes normally', async () => {
    calls.length = 0;
    const ws = await openWebSocket(server.url, `${PODS}/one/log?container=app`, 'binary.k8s.io');
    await ws.ended;
    assert.equal(ws.status, 101);
    assert.equal(ws.headers.get('upgrade'), 'websocket');
    assert.equal(ws.headers.get('connection'), 'Upgrade');
    assert.equal(ws.headers.get('sec-websocket-accept'), accept(ws.key));
    assert.equal(ws.headers.get('sec-websocket-protocol'), 'binary.k8s.io');
    assert.deepEqual(
      ws.messages.map((m) => m.opcode),
      ws.messages.map(() => 2),
    );
    assert.equal(ws.messages[0].data.length, 0, 'the first message is empty');
    assert.equal(Buffer.concat(ws.messages.map((m) => m.data)).toString(), 'line one\nline two\n');
    assert.equal(ws.closeStatus, 1000);
    // The kubelet is asked with a plain GET, as for any log.
    assert.deepEqual(
      calls.map((c) => `${c.method} ${c.url} ${c.headers.upgrade ?? ''}`),
      [`GET /containerLogs/${NS}/one/app `],
    );
  });

  test('base64.binary.k8s.io sends base64 text messages; no protocol is binary, the empty one named', async () => {
    const b64 = await openWebSocket(server.url, `${PODS}/one/log`, 'base64.binary.k8s.io');
    await b64.ended;
    assert.equal(b64.status, 101);
    assert.equal(b64.headers.get('sec-websocket-protocol'), 'base64.binary.k8s.io');
    assert.ok(b64.messages.every((m) => m.opcode === 1));
    assert.equal(b64.messages[0].data.length, 0);
    assert.equal(b64.messages.map((m) => Buffer.from(m.data.toString(), 'base64').toString()).join(''), 'line one\nline two\n');
    // The first protocol the server knows wins.
    const chosen = await openWebSocket(server.url, `${PODS}/one/log`, 'v5.channel.k8s.io, base64.binary.k8s.io, binary.k8s.io');
    await chosen.ended;
    assert.equal(chosen.headers.get('sec-websocket-protocol'), 'base64.binary.k8s.io');
    const none = await openWebSocket(server.url, `${PODS}/one/log`);
    await none.ended;
    assert.equal(none.status, 101);
    assert.equal(none.headers.get('sec-websocket-protocol'), '');
    assert.equal(Buffer.concat(none.messages.map((m) => m.data)).toString(), 'line one\nline two\n');
  });

  test('a long log comes in messages of at most 2,048 bytes', async () => {
    const ws = await openWebSocket(server.url, `${PODS}/errors/log?container=big`, 'binary.k8s.io');
    await ws.ended;
    assert.ok(ws.messages.length >= 4);
    assert.ok(ws.messages.every((m) => m.data.length <= 2048));
    assert.equal(Buffer.concat(ws.messages.map((m) => m.data)).toString(), '0123456789'.repeat(500));
  });

  test('a followed log arrives as the kubelet writes it; the client closing ends it', async () => {
    const ws = await openWebSocket(server.url, `${PODS}/errors/log?container=follow&follow=true`, 'binary.k8s.io');
    const first = await ws.messagesArrived(2);
    assert.equal(Buffer.concat(first.map((m) => m.data)).toString(), 'first line\n');
    followRest!();
    await ws.ended;
    assert.equal(Buffer.concat(ws.messages.map((m) => m.data)).toString(), 'first line\nsecond line\n');
    assert.equal(ws.closeStatus, 1000);

    const closing = await openWebSocket(server.url, `${PODS}/errors/log?container=follow&follow=true`, 'binary.k8s.io');
    await closing.messagesArrived(2);
    // A ping is answered with a pong carrying its payload.
    closing.send(0x9, Buffer.from('hi'));
    await closing.messagesArrived(3);
    assert.deepEqual(closing.messages[2], { opcode: 0xa, data: Buffer.from('hi') });
    closing.send(0x8, Buffer.from([0x03, 0xe8]));
    await closing.ended;
    assert.equal(closing.closeStatus, 1000);
    followRest!();
  });

  test('metrics: a log is a CONNECT, long-running while it streams; a WebSocket one, whose connection is taken over, is counted with code 0 once it closes, as kube counts a hijacked connection', async () => {
    /** The sum of the samples of `metric` whose labels include every one of `labels`. */
    const sample = async (metric: string, labels: string[]): Promise<number> => {
      const res = await api(server.url, '/metrics');
      assert.equal(res.status, 200);
      let sum = 0;
      for (const line of res.text.split('\n')) {
        if (!line.startsWith(`${metric}{`)) continue;
        const close = line.lastIndexOf('}');
        const set = line.slice(metric.length + 1, close);
        if (labels.every((l) => set.includes(l))) sum += Number(line.slice(close + 1));
      }
      return sum;
    };
    const LOG = ['subresource="log"', 'verb="CONNECT"', 'resource="pods"'];
    const total = (code: string): Promise<number> => sample('apiserver_request_total', [...LOG, `code="${code}"`]);
    const streaming = (): Promise<number> => sample('apiserver_longrunning_requests', LOG);
    /** Reads the metric until it has the expected value (the server records a request as its connection closes). */
    const until = async (read: () => Promise<number>, expected: number): Promise<void> => {
      let seen = await read();
      for (let i = 0; i < 200 && seen !== expected; i++) seen = await read();
      assert.equal(seen, expected);
    };

    const plainBefore = await total('200');
    const plain = await api(server.url, `${PODS}/one/log?container=app`);
    assert.equal(plain.status, 200);
    await until(() => total('200'), plainBefore + 1);

    const hijackedBefore = await total('0');
    const idle = await streaming();
    const ws = await openWebSocket(server.url, `${PODS}/errors/log?container=follow&follow=true`, 'binary.k8s.io');
    await ws.messagesArrived(2);
    assert.equal(await streaming(), idle + 1);
    assert.equal(await total('0'), hijackedBefore);
    ws.send(0x8, Buffer.from([0x03, 0xe8]));
    await ws.ended;
    followRest!();
    await until(() => total('0'), hijackedBefore + 1);
    assert.equal(await streaming(), idle);
    assert.equal(await total('101'), 0);

    // Its audit events, as kube's for a hijacked connection: ResponseStarted and ResponseComplete with 101.
    const events = readFileSync(join(dir, 'audit.log'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { stage: string; requestURI: string; verb: string; responseStatus?: { code?: number } })
      .filter((e) => e.requestURI === `${PODS}/errors/log?container=follow&follow=true`);
    const last = events.slice(-3);
    assert.deepEqual(
      last.map((e) => [e.stage, e.verb, e.responseStatus?.code]),
      [
        ['RequestReceived', 'get', undefined],
        ['ResponseStarted', 'get', 101],
        ['ResponseComplete', 'get', 101],
      ],
    );

    // exec, spliced to the kubelet: the same.
    const execLabels = ['subresource="exec"', 'verb="CONNECT"', 'resource="pods"', 'code="0"'];
    const execBefore = await sample('apiserver_request_total', execLabels);
    const exec = await upgrade(`${PODS}/one/exec?command=ls&stdout=1&container=app`, 'ping');
    assert.equal(exec.head, '101 SPDY/3.1');
    await until(() => sample('apiserver_request_total', execLabels), execBefore + 1);
    assert.equal(await sample('apiserver_longrunning_requests', ['subresource="exec"', 'verb="CONNECT"']), 0);
  });

  test("refusals: the kubelet's and kube's errors as Status before any handshake, a bad handshake as Go's WebSocket server answers it", async () => {
    const notFound = await openWebSocket(server.url, `${PODS}/errors/log?container=err404`, 'binary.k8s.io');
    await notFound.ended;
    assert.equal(notFound.status, 404);
    assert.match(notFound.refusal, /"kind":"Status"/);
    const unbound = await openWebSocket(server.url, `${PODS}/unbound/log`, 'binary.k8s.io');
    await unbound.ended;
    assert.equal(unbound.status, 204);
    const protocol = await openWebSocket(server.url, `${PODS}/one/log`, 'v5.channel.k8s.io');
    await protocol.ended;
    assert.equal(protocol.status, 403);
    assert.equal(protocol.refusal, '');
    const noKey = await openWebSocket(server.url, `${PODS}/one/log`, 'binary.k8s.io', { 'Sec-WebSocket-Key': undefined });
    await noKey.ended;
    assert.equal(noKey.status, 400);
    assert.equal(noKey.refusal, 'mismatch challenge/response');
    const version = await openWebSocket(server.url, `${PODS}/one/log`, 'binary.k8s.io', { 'Sec-WebSocket-Version': '8' });
    await version.ended;
    assert.equal(version.status, 400);
    assert.equal(version.headers.get('sec-websocket-version'), '13');
    assert.equal(version.refusal, 'missing or bad WebSocket Version');
  });
});

describe('pods exec, attach and portforward through the kubelet', () => {
  test('an upgrade is spliced to the kubelet path with kube query, without the credentials', async () => {
    calls.length = 0;
    const exec = await upgrade(`${PODS}/one/exec?command=ls&command=-l&stdout=1&stderr=true&container=app`, 'ping');
    assert.deepEqual(exec, { head: '101 SPDY/3.1', echoed: 'echo:ping' });
    const attach = await upgrade(`${PODS}/multi/attach?container=b&stdin=1&stdout=1&tty=1`, 'tty');
    assert.deepEqual(attach, { head: '101 SPDY/3.1', echoed: 'echo:tty' });
    const forward = await upgrade(`${PODS}/one/portforward?ports=80,81`, 'data');
    assert.deepEqual(forward, { head: '101 SPDY/3.1', echoed: 'echo:data' });
    assert.deepEqual(
      calls.map((c) => `${c.method} ${c.url}`),
      [
        `POST /exec/${NS}/one/app?command=ls&command=-l&error=1&output=1`,
        `POST /attach/${NS}/multi/b?input=1&output=1&tty=1`,
        `POST /portForward/${NS}/one?port=80%2C81`,
      ],
    );
    assert.ok(
      calls.every(
        (c) => c.headers.authorization === undefined && c.headers['x-forwarded-for'] === '127.0.0.1' && c.clientCN === 'kube-apiserver-kubelet-client',
      ),
    );
  });

  test("the kubelet's refusal is passed on, and kube's refusals come first", async () => {
    await pod('refuse', { nodeName: 'kubelet-node', containers: [{ name: 'app', image: 'x' }] });
    // The stand-in refuses the pod named `refuse`: its answer reaches the client as it came.
    const refused = await upgrade(`${PODS}/refuse/exec?command=ls&stdout=1`, 'x');
    assert.deepEqual(refused, { head: '403', echoed: 'kubelet says no' });
    assert.equal((await refusal(`${PODS}/one/exec?command=ls&stdout=1`, 'POST')).message, 'Upgrade request required');
    assert.equal((await refusal(`${PODS}/unbound/exec?command=ls&stdout=1`, 'POST')).message, 'pod unbound does not have a host assigned');
    assert.equal((await refusal(`${PODS}/unbound/portforward?ports=80`, 'POST')).message, 'pod unbound does not have a host assigned');
    assert.equal((await refusal(`${PODS}/one/exec?command=ls&container=zz`, 'POST')).message, 'container zz is not valid for pod one');
    assert.equal((await refusal(`${PODS}/one/exec?command=ls`, 'PUT')).code, 405);
  });
});

describe('nodes/proxy through the kubelet', () => {
  test("the kubelet's port is reached with the kubelet client's TLS, another port as asked", async () => {
    calls.length = 0;
    const summary = await get(`/api/v1/nodes/host-node/proxy/stats/summary?x=1`);
    assert.deepEqual(summary, { status: 200, type: 'text/plain', text: 'kubelet /stats/summary?x=1' });
    // The kubelet's port named, with any scheme, is the kubelet itself.
    assert.equal((await get(`/api/v1/nodes/http:host-node:${port}/proxy/metrics`)).text, 'kubelet /metrics');
    assert.deepEqual(
      calls.map((c) => [c.url, c.headers['x-forwarded-uri'], c.clientCN]),
      [
        ['/stats/summary?x=1', '/api/v1/nodes/host-node/proxy/stats/summary', 'kube-apiserver-kubelet-client'],
        ['/metrics', `/api/v1/nodes/http:host-node:${port}/proxy/metrics`, 'kube-apiserver-kubelet-client'],
      ],
    );
    const otherPort = (other.address() as AddressInfo).port;
    assert.equal((await get(`/api/v1/nodes/host-node:${otherPort}/proxy/abc`)).text, 'other port /abc');
    assert.equal((await get(`/api/v1/nodes/http:host-node:${otherPort}/proxy/abc`)).text, 'other port /abc');
    const tlsToPlain = await refusal(`/api/v1/nodes/https:host-node:${otherPort}/proxy/abc`);
    assert.deepEqual(tlsToPlain, {
      code: 503,
      reason: 'ServiceUnavailable',
      message: 'error trying to reach service: tls: first record does not look like a TLS handshake',
      details: undefined,
    });
  });

  test('nodes/proxy is refused with kube-apiserver statuses', async () => {
    assert.deepEqual(await refusal('/api/v1/nodes/kubelet-node/proxy/metrics'), {
      code: 400,
      reason: 'BadRequest',
      message: 'address not allowed',
      details: undefined,
    });
    assert.deepEqual(await refusal('/api/v1/nodes/nope/proxy/metrics'), {
      code: 404,
      reason: 'NotFound',
      message: 'nodes "nope" not found',
      details: { name: 'nope', kind: 'nodes' },
    });
    assert.equal((await refusal('/api/v1/nodes/bare-node/proxy/metrics')).message, 'no preferred addresses found; known addresses: []');
    assert.equal((await refusal('/api/v1/nodes/a:b:c:d/proxy/metrics')).message, 'invalid node request "a:b:c:d"');
    assert.equal((await refusal('/api/v1/nodes/ftp:host-node:1/proxy/metrics')).message, 'invalid node request "ftp:host-node:1"');
  });
});
