/**
 * CBOR over HTTP, with CBORServingAndStorage on and off. Every expected status, Content-Type and
 * message was read from kube-apiserver 1.36 started with and without
 * `--feature-gates=CBORServingAndStorage=true` (kube writes CBOR maps in a shuffled key order, so
 * bodies are compared decoded; Capstan writes the deterministic order of test/golden/cbor).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/capstan.js';
import { encodeCbor, fieldsOf } from '../../src/codec/cbor/cbor-encoder.js';
import { decodeCbor, decodeCborSequenceItem } from '../../src/codec/cbor/cbor-decoder.js';
import { KNOWN_GATES } from '../../src/api/feature-gates.js';

type Obj = Record<string, unknown>;

let on: TestServer;
let off: TestServer;

before(async () => {
  [on, off] = await Promise.all([startTestServer({ featureGates: { ...KNOWN_GATES, CBORServingAndStorage: true } }), startTestServer()]);
});

after(async () => {
  await Promise.all([on.stop(), off.stop()]);
});

interface Answer {
  status: number;
  type: string;
  body: Buffer;
}

async function call(srv: TestServer, method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Answer> {
  const r = await fetch(srv.url + path, { method, headers, body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body) });
  return { status: r.status, type: r.headers.get('content-type') ?? '', body: Buffer.from(await r.arrayBuffer()) };
}

const cbor = (value: Obj): Buffer => encodeCbor(value, fieldsOf(value));
const decoded = (a: Answer): Obj => decodeCbor(a.body, { maxDepth: 1000 }) as Obj;
const json = (a: Answer): Obj => JSON.parse(a.body.toString('utf8')) as Obj;
const NS = '/api/v1/namespaces/default/configmaps';
const NOT_ACCEPTABLE_ON =
  'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor';

describe('CBORServingAndStorage on', { concurrency: true }, () => {
  test('create from CBOR, read back as CBOR byte for byte with the encoder, binaryData tagged 22', async () => {
    const obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cbor-bin' }, data: { a: 'x' }, binaryData: { b: 'AAH/' } };
    const created = await call(on, 'POST', NS, { 'content-type': 'application/cbor' }, cbor(obj));
    assert.equal(created.status, 201, created.body.toString());
    assert.equal(created.type, 'application/json');
    const asJson = json(await call(on, 'GET', `${NS}/cbor-bin`, { accept: 'application/json' }));
    const got = await call(on, 'GET', `${NS}/cbor-bin`, { accept: 'application/cbor' });
    assert.equal(got.status, 200);
    assert.equal(got.type, 'application/cbor');
    assert.deepEqual(decoded(got), asJson);
    assert.equal(got.body.toString('hex'), cbor(asJson).toString('hex'));
    assert.ok(got.body.includes(Buffer.from('d6430001ff', 'hex')), 'binaryData is a tag-22 byte string');
  });

  test('lists item by item, quality values, PartialObjectMetadataList; no Table and no cbor-seq', async () => {
    for (const n of ['cbor-l1', 'cbor-l2', 'cbor-l3']) {
      const r = await call(on, 'POST', NS, { 'content-type': 'application/json' }, JSON.stringify({ metadata: { name: n, labels: { set: 'l' } } }));
      assert.equal(r.status, 201);
    }
    const list = await call(on, 'GET', `${NS}?labelSelector=set%3Dl`, { accept: 'application/cbor;q=0.9, application/json;q=0.5' });
    assert.equal(list.type, 'application/cbor');
    const value = decoded(list);
    assert.equal(value.kind, 'ConfigMapList');
    assert.deepEqual(
      (value.items as Obj[]).map((i) => (i.metadata as Obj).name),
      ['cbor-l1', 'cbor-l2', 'cbor-l3'],
    );
    assert.deepEqual(
      value,
      json(
        await call(on, 'GET', `${NS}?labelSelector=set%3Dl&resourceVersion=${String((value.metadata as Obj).resourceVersion)}&resourceVersionMatch=Exact`, {}),
      ),
    );
    const meta = await call(on, 'GET', `${NS}?labelSelector=set%3Dl`, { accept: 'application/cbor;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' });
    assert.equal(meta.type, 'application/cbor');
    assert.equal(decoded(meta).kind, 'PartialObjectMetadataList');
    const none = decoded(
      await call(on, 'GET', `${NS}?labelSelector=set%3Dnone`, { accept: 'application/cbor;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' }),
    );
    assert.equal(none.items, null);
    for (const accept of ['application/cbor;as=Table;g=meta.k8s.io;v=v1', 'application/cbor-seq']) {
      const r = await call(on, 'GET', NS, { accept });
      assert.equal(r.status, 406);
      assert.equal(r.type, 'application/json');
      assert.equal(json(r).message, NOT_ACCEPTABLE_ON);
    }
  });

  test('errors are CBOR Status objects when CBOR is preferred', async () => {
    const r = await call(on, 'GET', `${NS}/cbor-nope`, { accept: 'application/cbor' });
    assert.equal(r.status, 404);
    assert.equal(r.type, 'application/cbor');
    assert.deepEqual(decoded(r), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "cbor-nope" not found',
      reason: 'NotFound',
      details: { name: 'cbor-nope', kind: 'configmaps' },
      code: 404,
    });
  });

  test('malformed and unknown-field CBOR bodies answer 400 in kube words', async () => {
    const bad = await call(on, 'POST', NS, { 'content-type': 'application/cbor' }, Buffer.from('d9d9f7a2446b696e64', 'hex'));
    assert.equal(bad.status, 400);
    assert.equal(
      json(bad).message,
      'the object provided is unrecognized (must be of type ConfigMap): unable to determine group/version/kind: unexpected EOF (d9d9f7a2446b696e64)',
    );
    const obj = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'cbor-strict' }, bogus: 1 };
    const strict = await call(on, 'POST', `${NS}?fieldValidation=Strict&dryRun=All`, { 'content-type': 'application/cbor' }, cbor(obj));
    assert.equal(strict.status, 400);
    // Keys in encoded order: kind, bogus, metadata, apiVersion: the unknown field is element 1.
    assert.equal(
      json(strict).message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: cbor: found unknown field at map element index 1',
    );
    const nullDoc = await call(on, 'POST', NS, { 'content-type': 'application/cbor' }, Buffer.from('d9d9f7f6', 'hex'));
    assert.equal(nullDoc.status, 422);
    assert.equal(json(nullDoc).message, 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required');
  });

  test('apply-patch+cbor applies like apply-patch+yaml; merge-patch+cbor is 415', async () => {
    const applied = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cbor-apply' }, data: { k: 'v' } };
    const r = await call(
      on,
      'PATCH',
      `${NS}/cbor-apply?fieldManager=m`,
      { 'content-type': 'application/apply-patch+cbor', accept: 'application/cbor' },
      cbor(applied),
    );
    assert.equal(r.status, 201, r.body.toString());
    const value = decoded(r);
    assert.deepEqual(value.data, { k: 'v' });
    assert.equal(((value.metadata as Obj).managedFields as Obj[])[0]?.operation, 'Apply');
    const bad = await call(
      on,
      'PATCH',
      `${NS}/cbor-apply?fieldManager=m`,
      { 'content-type': 'application/apply-patch+cbor' },
      Buffer.from('d9d9f7a2446b696e64', 'hex'),
    );
    assert.equal(bad.status, 400);
    assert.equal(json(bad).message, 'error decoding YAML: unexpected EOF');
    const merge = await call(on, 'PATCH', `${NS}/cbor-apply`, { 'content-type': 'application/merge-patch+cbor' }, cbor({}));
    assert.equal(merge.status, 415);
    assert.deepEqual(json(merge), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: '415: Unsupported Media Type',
      reason: 'UnsupportedMediaType',
      details: {},
      code: 415,
    });
  });

  test('DeleteOptions in CBOR', async () => {
    const created = await call(on, 'POST', NS, { 'content-type': 'application/json' }, JSON.stringify({ metadata: { name: 'cbor-del' } }));
    assert.equal(created.status, 201);
    const r = await call(on, 'DELETE', `${NS}/cbor-del`, { 'content-type': 'application/cbor' }, cbor({ gracePeriodSeconds: 0 }));
    assert.equal(r.status, 200, r.body.toString());
    assert.equal(json(r).status, 'Success');
  });

  test('watches are application/cbor-seq streams of WatchEvents', async () => {
    const ac = new AbortController();
    const r = await fetch(`${on.url}${NS}?watch=true&labelSelector=set%3Dw`, { headers: { accept: 'application/cbor' }, signal: ac.signal });
    assert.equal(r.headers.get('content-type'), 'application/cbor-seq');
    const created = await call(on, 'POST', NS, { 'content-type': 'application/json' }, JSON.stringify({ metadata: { name: 'cbor-w', labels: { set: 'w' } } }));
    assert.equal(created.status, 201);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    let buf = Buffer.alloc(0);
    let event: { value: unknown; next: number } | undefined;
    while (event === undefined) {
      const chunk = await reader.read();
      assert.ok(!chunk.done, 'stream ended before an event');
      buf = Buffer.concat([buf, chunk.value]);
      event = decodeCborSequenceItem(buf, 0, { maxDepth: 1000 });
    }
    ac.abort();
    const e = event.value as { type: string; object: Obj };
    assert.equal(e.type, 'ADDED');
    assert.equal((e.object.metadata as Obj).name, 'cbor-w');
    assert.equal(e.object.kind, 'ConfigMap');
  });
});

describe('CBORServingAndStorage off (the default): kube-apiserver 1.36 answers', { concurrency: true }, () => {
  const LIST_TYPES =
    'application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch';
  const restful406 = (types: string): Obj => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `406: Not Acceptable\n\nAvailable representations: ${types}`,
    reason: 'NotAcceptable',
    details: {},
    code: 406,
  });

  test('Accept application/cbor is go-restful 406, indented', async () => {
    const list = await call(off, 'GET', NS, { accept: 'application/cbor' });
    assert.equal(list.status, 406);
    assert.equal(list.body.toString(), JSON.stringify(restful406(LIST_TYPES), null, 2));
    const watch = await call(off, 'GET', `${NS}?watch=true`, { accept: 'application/cbor-seq' });
    assert.deepEqual(json(watch), restful406(LIST_TYPES));
    const one = await call(off, 'GET', `${NS}/x`, { accept: 'application/cbor' });
    assert.deepEqual(json(one), restful406('application/json, application/yaml, application/vnd.kubernetes.protobuf'));
    const fallback = await call(off, 'GET', NS, { accept: 'application/cbor;q=0.9, application/json;q=0.5' });
    assert.equal(fallback.status, 200);
    assert.equal(fallback.type, 'application/json');
  });

  test('CBOR bodies are 415', async () => {
    const post = await call(off, 'POST', NS, { 'content-type': 'application/cbor' }, cbor({ metadata: { name: 'x' } }));
    assert.equal(post.status, 415);
    assert.equal(
      json(post).message,
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf',
    );
    const apply = await call(off, 'PATCH', `${NS}/x?fieldManager=m`, { 'content-type': 'application/apply-patch+cbor' }, cbor({}));
    assert.equal(apply.status, 415);
    assert.equal(json(apply).message, '415: Unsupported Media Type');
  });
});
