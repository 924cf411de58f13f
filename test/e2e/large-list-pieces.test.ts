/**
 * Large LISTs are encoded and written in pieces, the event loop serving other requests between
 * them (src/codec/paced-writes.ts). The pieces must add up to the bytes the one-write encoders make:
 * for every representation (JSON compact and pretty, Table, PartialObjectMetadataList, YAML,
 * Protobuf, CBOR) a list of more items than one turn encodes and more bytes than one piece is
 * compared with the whole-body encoding of the same list, alone and with several large LISTs and a
 * GET interleaving.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { startTestServer, uniqueName, type TestServer } from '../helpers/capstan.js';
import { toYaml } from '../../src/codec/yaml-writer.js';
import { encodeProtobufList } from '../../src/codec/protobuf/protobuf-codec.js';
import { decodeCbor } from '../../src/codec/cbor/cbor-decoder.js';

type Obj = Record<string, unknown>;

const COUNT = 300; // more than ITEMS_PER_TURN (256)
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const PARTIAL = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io';
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

describe('large lists written in pieces', () => {
  let srv: TestServer;
  let path: string;
  let plain: { text: string; value: Obj };

  const get = async (query: string, accept = 'application/json'): Promise<Buffer> => {
    const res = await fetch(`${srv.url}${path}${query}`, { headers: { accept } });
    const body = Buffer.from(await res.arrayBuffer());
    assert.equal(res.status, 200, `${accept} ${query}: ${body.toString().slice(0, 300)}`);
    return body;
  };
  const compact = (text: string): string => `${JSON.stringify(JSON.parse(text))}\n`;
  const indented = (text: string): string => `${JSON.stringify(JSON.parse(text), null, 2)}\n`;

  before(async () => {
    srv = await startTestServer({ featureGates: { CBORServingAndStorage: true, APIResponseCompression: true } });
    const ns = uniqueName('pieces');
    const post = async (p: string, body: unknown): Promise<void> => {
      const res = await fetch(`${srv.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(res.status, 201, await res.text());
    };
    await post('/api/v1/namespaces', { metadata: { name: ns } });
    path = `/api/v1/namespaces/${ns}/configmaps`;
    // 300 items of ~1 KiB: several pieces of 64 KiB; a quote, a line break and non-ASCII text in each.
    for (let i = 0; i < COUNT; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          post(path, {
            metadata: { name: `cm-${String(i + j).padStart(3, '0')}`, labels: { n: String(i + j) } },
            data: { v: `"q"\nline ü ${'x'.repeat(800)}` },
          }),
        ),
      );
    }
    const text = (await get('')).toString();
    plain = { text, value: JSON.parse(text) as Obj };
    assert.equal((plain.value.items as unknown[]).length, COUNT);
    assert.ok(text.length > 4 * 64 * 1024);
  });
  after(() => srv.stop());

  test('JSON, pretty JSON, Table and PartialObjectMetadataList: the bytes of one JSON.stringify', async () => {
    assert.equal(plain.text, compact(plain.text));
    const pretty = (await get('?pretty=true')).toString();
    assert.equal(pretty, `${JSON.stringify(plain.value, null, 2)}\n`);

    const table = (await get('', TABLE)).toString();
    assert.equal(table, compact(table));
    const rows = (JSON.parse(table) as { rows: { cells: unknown[]; object: Obj }[] }).rows;
    assert.equal(rows.length, COUNT);
    assert.deepEqual(
      rows.map((r) => r.cells[0]),
      (plain.value.items as { metadata: { name: string } }[]).map((i) => i.metadata.name),
    );
    assert.equal(rows[0].object.kind, 'PartialObjectMetadata');
    const prettyTable = (await get('?pretty=true', TABLE)).toString();
    assert.equal(prettyTable, indented(prettyTable));
    assert.equal((JSON.parse(prettyTable) as { rows: unknown[] }).rows.length, COUNT);

    const partial = (await get('', PARTIAL)).toString();
    assert.equal(partial, compact(partial));
    const partialValue = JSON.parse(partial) as { kind: string; items: { metadata: unknown }[] };
    assert.equal(partialValue.kind, 'PartialObjectMetadataList');
    assert.deepEqual(
      partialValue.items.map((i) => i.metadata),
      (plain.value.items as { metadata: unknown }[]).map((i) => i.metadata),
    );
  });

  test('YAML, Protobuf and CBOR: the bytes of the whole-body encoders', async () => {
    assert.equal((await get('', 'application/yaml')).toString(), toYaml(plain.value));
    const items = plain.value.items as Obj[];
    assert.deepEqual(await get('', PROTOBUF), encodeProtobufList('ConfigMapList', 'v1', plain.value.metadata as Obj, items));
    assert.deepEqual(decodeCbor(await get('', 'application/cbor'), { maxDepth: 1000 }), plain.value);
  });

  test('several large LISTs at once and a GET between them: each answer whole and unchanged', async () => {
    const kinds = [PROTOBUF, 'application/yaml', TABLE, 'application/json', PROTOBUF, 'application/yaml'];
    const alone = await Promise.all(kinds.map((k) => get('?pretty=true', k)));
    const together = Promise.all(kinds.map((k) => get('?pretty=true', k)));
    const one = await fetch(`${srv.url}${path}/cm-007`);
    assert.equal(one.status, 200);
    assert.equal(((await one.json()) as { metadata: { name: string } }).metadata.name, 'cm-007');
    const answers = await together;
    answers.forEach((body, i) => {
      // Table cells hold ages that may tick between the two reads; their shape and rows do not.
      if (kinds[i] === TABLE) assert.equal((JSON.parse(body.toString()) as { rows: unknown[] }).rows.length, COUNT);
      else assert.deepEqual(body, alone[i], kinds[i]);
    });
  });

  test('a gzip LIST read slowly: the whole list, and one drain listener on the compressing stream however many pieces wait', async () => {
    // Every wait of a piece used to add a 'drain' listener the compression middleware moves onto its
    // gzip stream, where it stayed: with the limit at 2, the third wait warned.
    const warnings: Error[] = [];
    const onWarning = (w: Error): void => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w);
    };
    const limit = EventEmitter.defaultMaxListeners;
    EventEmitter.defaultMaxListeners = 2;
    process.on('warning', onWarning);
    try {
      const body = await new Promise<Buffer>((resolve, reject) => {
        const req = request(`${srv.url}${path}`, { headers: { 'accept-encoding': 'gzip', accept: 'application/json' } }, (res) => {
          assert.equal(res.statusCode, 200);
          assert.equal(res.headers['content-encoding'], 'gzip');
          const chunks: Buffer[] = [];
          // Read one chunk a turn, so that the server's pieces wait for the socket.
          res.pause();
          const readSome = (): void => {
            const chunk = res.read() as Buffer | null;
            if (chunk !== null) chunks.push(chunk);
            if (!res.readableEnded) setImmediate(readSome);
          };
          res.on('end', () => resolve(Buffer.concat(chunks)));
          res.on('error', reject);
          readSome();
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(gunzipSync(body).toString(), plain.text);
      // A warning is emitted on the next turn after the listener that passes the limit.
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(
        warnings.filter((w) => (w as Error & { type?: unknown }).type === 'drain').map((w) => w.message),
        [],
      );
    } finally {
      process.off('warning', onWarning);
      EventEmitter.defaultMaxListeners = limit;
    }
  });
});
