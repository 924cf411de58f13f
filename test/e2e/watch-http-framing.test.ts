/**
 * The bytes of a watch response on a raw HTTP/1.1 keep-alive connection: a valid chunked body
 * (every chunk's size matches its data, the stream ends with the last chunk `0\r\n\r\n`) for JSON
 * and Protobuf watches, events in order, and the same connection then serves the next request:
 * the watch leaves nothing behind on the socket.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';

let server: TestServer;
const JSON_HEADERS = { 'content-type': 'application/json' };

before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.stop();
});

/** Reads from `socket` until `done(bytes)` says the bytes so far are complete. */
function readUntil(socket: Socket, done: (bytes: Buffer) => boolean, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let bytes = Buffer.alloc(0);
    const timer = setTimeout(() => finish(new Error(`timed out; got ${bytes.length} bytes: ${bytes.toString('latin1').slice(0, 300)}`)), timeoutMs);
    const onData = (chunk: Buffer): void => {
      bytes = Buffer.concat([bytes, chunk]);
      if (done(bytes)) finish();
    };
    const onClose = (): void => finish(new Error(`connection closed after ${bytes.length} bytes`));
    const finish = (err?: Error): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      if (err) reject(err);
      else resolve(bytes);
    };
    socket.on('data', onData);
    socket.on('close', onClose);
  });
}

interface ChunkedResponse {
  head: string;
  chunks: Buffer[];
  /** Bytes after the last chunk (must be none: the connection is clean for the next request). */
  rest: Buffer;
}

/** Parses a complete chunked response; undefined while incomplete; throws on a framing error. */
function parseChunked(bytes: Buffer): ChunkedResponse | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = bytes.subarray(0, headEnd).toString('latin1');
  assert.match(head, /\r\ntransfer-encoding: chunked/i);
  const chunks: Buffer[] = [];
  let at = headEnd + 4;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return undefined;
    const sizeText = bytes.subarray(at, lineEnd).toString('latin1');
    assert.match(sizeText, /^[0-9a-f]+$/, `chunk size line "${sizeText}"`);
    const size = parseInt(sizeText, 16);
    const dataStart = lineEnd + 2;
    if (bytes.length < dataStart + size + 2) return undefined;
    assert.equal(bytes.subarray(dataStart + size, dataStart + size + 2).toString('latin1'), '\r\n', 'chunk data ends with CRLF');
    at = dataStart + size + 2;
    if (size === 0) return { head, chunks, rest: bytes.subarray(at) };
    chunks.push(bytes.subarray(dataStart, dataStart + size));
  }
}

function completeResponse(bytes: Buffer): boolean {
  return parseChunked(bytes) !== undefined;
}

async function createConfigMaps(ns: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await api(server.url, `/api/v1/namespaces/${ns}/configmaps`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ metadata: { name: `cm-${i}` }, data: { i: String(i), pad: 'x'.repeat(i * 100) } }),
    });
    assert.equal(r.status, 201, r.text);
  }
}

/** A new namespace, the resourceVersion its ConfigMaps' watches start from, and the server's port. */
async function freshNamespace(prefix: string): Promise<{ ns: string; from: string; port: string }> {
  const ns = uniqueName(prefix);
  const made = await api(server.url, '/api/v1/namespaces', { method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ metadata: { name: ns } }) });
  assert.equal(made.status, 201, made.text);
  const listed = await api(server.url, `/api/v1/namespaces/${ns}/configmaps`);
  return { ns, from: String(listed.body.metadata.resourceVersion), port: new URL(server.url).port };
}

test('JSON and Protobuf watches are well-formed chunked bodies, and the connection is reused afterwards', async () => {
  const { ns, from, port } = await freshNamespace('frame');
  const socket = connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  try {
    const request = (path: string, accept: string): void => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: capstan\r\nAccept: ${accept}\r\nConnection: keep-alive\r\n\r\n`);
    };
    // Changes made while the watch is open arrive as live events, several per chunk or one each.
    request(`/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${from}&timeoutSeconds=2`, 'application/json');
    const writes = createConfigMaps(ns, 20);
    const json = parseChunked(await readUntil(socket, completeResponse));
    await writes;
    assert.ok(json);
    assert.match(json.head, /^HTTP\/1\.1 200 /);
    assert.equal(json.rest.length, 0);
    const lines = Buffer.concat(json.chunks)
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '');
    const events = lines.map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string; resourceVersion: string } } });
    // The watch ends after 2 s whatever the machine's speed: the creates it saw are the first ones, in order
    // (all 20 on an idle machine; the Protobuf replay below checks every one).
    assert.ok(events.length >= 1, 'at least the first create arrived live');
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.object.metadata.name}`),
      Array.from({ length: events.length }, (_, i) => `ADDED cm-${i}`),
    );
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    assert.ok(
      rvs.every((rv, i) => i === 0 || rv > rvs[i - 1]),
      'resourceVersions increase',
    );

    // The same connection: a Protobuf watch replaying those changes from `from`.
    request(`/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${from}&timeoutSeconds=1`, 'application/vnd.kubernetes.protobuf;stream=watch');
    const pb = parseChunked(await readUntil(socket, completeResponse));
    assert.ok(pb);
    assert.match(pb.head, /^HTTP\/1\.1 200 /);
    assert.match(pb.head, /content-type: application\/vnd\.kubernetes\.protobuf;stream=watch/i);
    // Length-delimited frames: a 4-byte big-endian size, then that many bytes; 20 of them.
    const body = Buffer.concat(pb.chunks);
    let frames = 0;
    for (let at = 0; at < body.length; frames++) {
      const size = body.readUInt32BE(at);
      at += 4 + size;
      assert.ok(at <= body.length, 'frame within the body');
    }
    assert.equal(frames, 20);

    // And a plain GET after both watches.
    request(`/api/v1/namespaces/${ns}/configmaps/cm-3`, 'application/json');
    const plain = await readUntil(socket, (b) => {
      const headEnd = b.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(b.toString('latin1'))?.[1];
      if (length === undefined) return completeResponse(b);
      return headEnd >= 0 && b.length >= headEnd + 4 + Number(length);
    });
    assert.match(plain.toString('latin1'), /^HTTP\/1\.1 200 /);
    assert.match(plain.toString('utf8'), /"name":"cm-3"/);
  } finally {
    socket.destroy();
  }
});

test('watchers sharing a change get the same well-framed UTF-8 bytes, whatever the characters', async () => {
  const { ns, from, port } = await freshNamespace('frame-utf8');
  const data = ['grüße', '日本語のテキスト', 'emoji 🚀 and ü', 'plain'];
  const sockets: Socket[] = [];
  try {
    const bodies: Array<Promise<Buffer>> = [];
    for (let w = 0; w < 3; w++) {
      const socket = connect(Number(port), '127.0.0.1');
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      bodies.push(readUntil(socket, (bytes) => eventLines(bytes).length >= data.length, 60_000));
      socket.write(`GET /api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${from} HTTP/1.1\r\nHost: capstan\r\nAccept: application/json\r\n\r\n`);
    }
    for (const [i, text] of data.entries()) {
      const r = await api(server.url, `/api/v1/namespaces/${ns}/configmaps`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ metadata: { name: `cm-${i}` }, data: { text } }),
      });
      assert.equal(r.status, 201, r.text);
    }
    const received: string[][] = [];
    for (const body of bodies) {
      const lines = eventLines(await body);
      received.push(lines.map((l) => JSON.stringify((JSON.parse(l) as { object: { data: unknown } }).object.data)));
    }
    const expected = data.map((text) => JSON.stringify({ text }));
    for (const events of received) assert.deepEqual(events, expected);
  } finally {
    for (const s of sockets) s.destroy();
  }
});

/**
 * The complete event lines of a chunked watch body so far. Each chunk's declared size must be its
 * byte length (the CRLF after the data is checked) and its data whole UTF-8 lines.
 */
function eventLines(bytes: Buffer): string[] {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return [];
  assert.match(bytes.subarray(0, headEnd).toString('latin1'), /^HTTP\/1\.1 200 [^]*\r\ntransfer-encoding: chunked/i);
  const lines: string[] = [];
  for (let at = headEnd + 4; ;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    if (lineEnd < 0) return lines;
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    const dataStart = lineEnd + 2;
    if (bytes.length < dataStart + size + 2) return lines;
    assert.equal(bytes.subarray(dataStart + size, dataStart + size + 2).toString('latin1'), '\r\n', 'chunk data ends with CRLF');
    const text = bytes.subarray(dataStart, dataStart + size).toString('utf8');
    assert.ok(text.endsWith('\n'), 'a chunk holds whole events');
    lines.push(...text.split('\n').filter((l) => l !== ''));
    at = dataStart + size + 2;
  }
}
