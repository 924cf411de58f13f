/**
 * Protobuf watch frames and LISTs share the encoding of an object version: a change a protobuf
 * watch received is not encoded again by the next protobuf LIST, and the version a change replaced
 * or removed leaves the cache (`capstan_protobuf_item_cache_bytes`), so watched churn does not fill
 * it with dead versions.
 */
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { after, before, test } from 'node:test';
import { api, startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { decodeProtobufObject, decodeProtobufWatchEvent } from '../../src/codec/protobuf/protobuf-codec.js';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const COUNT = 20;
let server: TestServer;

before(async () => {
  server = await startTestServer();
});
after(async () => {
  await server.stop();
});

/** The cache's size as /metrics reports it (0 before the gauge's first report). */
async function cacheBytes(): Promise<number> {
  const r = await api(server.url, '/metrics');
  assert.equal(r.status, 200);
  const line = r.text.split('\n').find((l) => l.startsWith('capstan_protobuf_item_cache_bytes '));
  return line === undefined ? 0 : Number(line.split(' ')[1]);
}

/** A protobuf watch collecting "TYPE name" of each event; `until(n)` resolves once n arrived. */
function protobufWatch(path: string): Promise<{ events: string[]; until: (n: number) => Promise<void>; stop: () => void }> {
  return new Promise((resolve, reject) => {
    const events: string[] = [];
    const waiters: Array<() => void> = [];
    const req = request(`${server.url}${path}`, { headers: { accept: `${PROTOBUF};stream=watch` } }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) {
        reject(new Error(`watch: HTTP ${String(res.statusCode)}`));
        return;
      }
      let buffered = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        while (buffered.length >= 4 && buffered.length >= 4 + buffered.readUInt32BE(0)) {
          const size = buffered.readUInt32BE(0);
          const event = decodeProtobufWatchEvent(buffered.subarray(4, 4 + size));
          buffered = buffered.subarray(4 + size);
          events.push(`${event.type} ${String((event.object.metadata as { name?: unknown }).name)}`);
        }
        for (const wake of waiters.splice(0)) wake();
      });
      resolve({
        events,
        until: async (n) => {
          while (events.length < n) await new Promise<void>((r) => waiters.push(r));
        },
        stop: () => req.destroy(),
      });
    });
    req.on('error', (err) => {
      if (!req.destroyed) reject(err);
    });
    req.end();
  });
}

async function send(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const r = await api(server.url, path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: r.body };
}

test("a protobuf watch's encodings serve the next protobuf LIST, and replaced or removed versions leave the cache", async () => {
  const ns = uniqueName('pbcache');
  assert.equal((await send('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const watch = await protobufWatch(`${path}?watch=1`);
  const empty = await cacheBytes();
  const names = Array.from({ length: COUNT }, (_, i) => `cm-${i}`);
  for (const name of names) assert.equal((await send('POST', path, { metadata: { name }, data: { text: 'x'.repeat(1024) } })).status, 201);
  await watch.until(COUNT);
  const watched = await cacheBytes();
  assert.ok(watched - empty > COUNT * 1024, `the watch's ${COUNT} encodings are kept: ${watched - empty} bytes`);

  const list = await fetch(`${server.url}${path}`, { headers: { accept: PROTOBUF } });
  assert.equal(list.status, 200);
  const items = (decodeProtobufObject(new Uint8Array(await list.arrayBuffer())).object.items ?? []) as { metadata: { name: string } }[];
  assert.deepEqual(items.map((i) => i.metadata.name).sort(), [...names].sort());
  assert.equal(await cacheBytes(), watched, 'the LIST found every item encoded');

  for (const name of names) {
    const current = await send('GET', `${path}/${name}`);
    assert.equal((await send('PUT', `${path}/${name}`, { ...current.body, data: { text: 'y'.repeat(1024) } })).status, 200);
  }
  await watch.until(2 * COUNT);
  const updated = await cacheBytes();
  // Without forgetting the replaced versions the cache would hold both, about twice as much.
  assert.ok(Math.abs(updated - watched) < (watched - empty) / 4, `replaced versions left: ${watched} bytes before the updates, ${updated} after`);

  for (const name of names) assert.equal((await send('DELETE', `${path}/${name}`)).status, 200);
  await watch.until(3 * COUNT);
  assert.equal(await cacheBytes(), empty, 'the deleted objects left the cache');
  assert.deepEqual(
    watch.events.slice(2 * COUNT),
    names.map((n) => `DELETED ${n}`),
  );
  watch.stop();
});

test('with a protobuf watch open, protobuf write responses and GETs carry the object as JSON reads it', async () => {
  const ns = uniqueName('pbresp');
  assert.equal((await send('POST', '/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  const path = `/api/v1/namespaces/${ns}/configmaps`;
  const watch = await protobufWatch(`${path}?watch=1`);
  const asProtobuf = async (method: string, url: string, body?: unknown): Promise<{ status: number; object: Record<string, unknown> }> => {
    const r = await fetch(`${server.url}${url}`, {
      method,
      headers: { accept: PROTOBUF, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    assert.equal(r.headers.get('content-type'), PROTOBUF);
    return { status: r.status, object: decodeProtobufObject(new Uint8Array(await r.arrayBuffer())).object };
  };
  const created = await asProtobuf('POST', path, { metadata: { name: 'one' }, data: { a: '1' } });
  assert.equal(created.status, 201);
  assert.deepEqual(created.object, (await send('GET', `${path}/one`)).body);
  const replaced = await asProtobuf('PUT', `${path}/one`, { ...created.object, data: { a: '2' } });
  assert.equal(replaced.status, 200);
  assert.deepEqual(replaced.object, (await send('GET', `${path}/one`)).body);
  assert.equal((replaced.object.data as Record<string, string>).a, '2');
  await watch.until(2);
  const read = await asProtobuf('GET', `${path}/one`);
  assert.equal(read.status, 200);
  assert.deepEqual(read.object, replaced.object);
  assert.deepEqual(watch.events, ['ADDED one', 'MODIFIED one']);
  watch.stop();
});
