/**
 * API response compression as kube-apiserver 1.36 answers (checked against it): gzip, and only gzip,
 * for answers of 128 KiB or more in every media type, when `Accept-Encoding` holds the exact token
 * `gzip`; `Vary: Accept-Encoding` on them (only on them); small answers, other encodings and watches uncompressed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startTestServer, type TestServer } from '../helpers/capstan.js';

let server: TestServer;
const NS = 'compression';
const COUNT = 200;

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** GET `path` with the given headers; the body as the server sent it (never decompressed). */
function rawGet(path: string, headers: Record<string, string>, untilBytes?: number): Promise<RawResponse> {
  return rawRequest('GET', path, headers, undefined, untilBytes);
}

/** A request with the given method, headers and body; the answer's body as sent (never decompressed). */
function rawRequest(method: string, path: string, headers: Record<string, string>, body?: string, untilBytes?: number): Promise<RawResponse> {
  const url = new URL(path, server.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      const done = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
      res.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        bytes += chunk.length;
        if (untilBytes !== undefined && bytes >= untilBytes) {
          done();
          req.destroy();
        }
      });
      res.on('end', done);
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

before(async () => {
  server = await startTestServer();
  const post = (path: string, body: unknown): Promise<Response> =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal((await post('/api/v1/namespaces', { metadata: { name: NS } })).status, 201);
  for (let i = 0; i < COUNT; i += 20) {
    const batch = Array.from({ length: 20 }, (_, j) =>
      post(`/api/v1/namespaces/${NS}/configmaps`, { metadata: { name: `cm-${i + j}` }, data: { d: 'x'.repeat(1024) } }),
    );
    for (const res of await Promise.all(batch)) assert.equal(res.status, 201);
  }
});
after(async () => {
  await server.stop();
});

const LIST = `/api/v1/namespaces/${NS}/configmaps`;

test('a large JSON list is gzipped when the client accepts gzip, with Vary', async () => {
  const res = await rawGet(LIST, { accept: 'application/json', 'accept-encoding': 'gzip' });
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-encoding'], 'gzip');
  assert.match(String(res.headers.vary), /Accept-Encoding/);
  const list = JSON.parse(gunzipSync(res.body).toString()) as { kind: string; items: unknown[] };
  assert.equal(list.kind, 'ConfigMapList');
  assert.equal(list.items.length, COUNT);
  // The same list uncompressed is several times larger: level 1 still compresses repetitive data well.
  const plain = await rawGet(LIST, { accept: 'application/json' });
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.ok(plain.body.length > 128 * 1024 && res.body.length * 4 < plain.body.length, `${res.body.length} of ${plain.body.length} bytes`);
});

test('a large protobuf list is gzipped too', async () => {
  const res = await rawGet(LIST, { accept: 'application/vnd.kubernetes.protobuf', 'accept-encoding': 'gzip' });
  assert.equal(res.status, 200);
  assert.equal(res.headers['content-encoding'], 'gzip');
  assert.equal(res.headers['content-type'], 'application/vnd.kubernetes.protobuf');
  const body = gunzipSync(res.body);
  assert.deepEqual([...body.subarray(0, 4)], [0x6b, 0x38, 0x73, 0x00]);
});

test('only the exact token gzip turns compression on', async () => {
  for (const acceptEncoding of ['deflate', 'br', 'gzip;q=1', 'identity', 'deflate, br']) {
    const res = await rawGet(LIST, { accept: 'application/json', 'accept-encoding': acceptEncoding });
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-encoding'], undefined, acceptEncoding);
    assert.equal((JSON.parse(res.body.toString()) as { items: unknown[] }).items.length, COUNT, acceptEncoding);
  }
  const mixed = await rawGet(LIST, { accept: 'application/json', 'accept-encoding': 'br, deflate, gzip' });
  assert.equal(mixed.headers['content-encoding'], 'gzip');
});

test('small answers and watches are not compressed', async () => {
  const one = await rawGet(`${LIST}/cm-0`, { accept: 'application/json', 'accept-encoding': 'gzip' });
  assert.equal(one.status, 200);
  assert.equal(one.headers['content-encoding'], undefined);
  assert.equal(one.headers.vary, undefined);
  assert.equal((JSON.parse(one.body.toString()) as { metadata: { name: string } }).metadata.name, 'cm-0');
  // A watch from 0 replays every object at once (well over the threshold) and stays open.
  const watch = await rawGet(`${LIST}?watch=1&resourceVersion=0`, { accept: 'application/json', 'accept-encoding': 'gzip' }, 128 * 1024);
  assert.equal(watch.status, 200);
  assert.equal(watch.headers['content-encoding'], undefined);
  assert.match(watch.body.toString(), /^\{"type":"ADDED","object":\{/);
});

test('one large object is gzipped in the answer to the write that stored it and to a GET; small answers beside it are not', async () => {
  const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { d: 'y'.repeat(200 * 1024) } };
  const headers = { accept: 'application/json', 'accept-encoding': 'gzip', 'content-type': 'application/json' };
  const created = await rawRequest('POST', LIST, headers, JSON.stringify(big));
  assert.equal(created.status, 201);
  assert.equal(created.headers['content-encoding'], 'gzip');
  assert.match(String(created.headers.vary), /Accept-Encoding/);
  const stored = JSON.parse(gunzipSync(created.body).toString()) as { metadata: { resourceVersion: string }; data: { d: string } };
  assert.equal(stored.data.d.length, 200 * 1024);
  const read = await rawGet(`${LIST}/big`, { accept: 'application/json', 'accept-encoding': 'gzip' });
  assert.equal(read.headers['content-encoding'], 'gzip');
  assert.equal(
    (JSON.parse(gunzipSync(read.body).toString()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion,
    stored.metadata.resourceVersion,
  );
  // A small write's answer and an error's Status, to the same kind of client: as they are, no Vary.
  const small = await rawRequest('POST', LIST, headers, JSON.stringify({ metadata: { name: 'small' }, data: { d: 'z' } }));
  assert.equal(small.status, 201);
  assert.equal(small.headers['content-encoding'], undefined);
  assert.equal(small.headers.vary, undefined);
  assert.equal((JSON.parse(small.body.toString()) as { metadata: { name: string } }).metadata.name, 'small');
  const conflict = await rawRequest('POST', LIST, headers, JSON.stringify({ metadata: { name: 'small' } }));
  assert.equal(conflict.status, 409);
  assert.equal(conflict.headers['content-encoding'], undefined);
  assert.equal((JSON.parse(conflict.body.toString()) as { reason: string }).reason, 'AlreadyExists');
  // Deleting it answers a small Status (kube returns a ConfigMap's deletion as one): not compressed.
  const deleted = await rawRequest('DELETE', `${LIST}/big`, { accept: 'application/json', 'accept-encoding': 'gzip' });
  assert.equal(deleted.status, 200);
  assert.equal(deleted.headers['content-encoding'], undefined);
  assert.equal((JSON.parse(deleted.body.toString()) as { kind: string; status: string }).status, 'Success');
});
