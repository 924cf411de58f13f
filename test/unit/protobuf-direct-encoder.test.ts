import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  encodeProtobufList,
  encodeProtobufObject,
  encodeProtobufWatchFrame,
  hasProtobufMessage,
  ProtobufListEncoder,
} from '../../src/codec/protobuf/protobuf-codec.js';
import { toPartialObjectMetadata } from '../../src/codec/representations.js';
import { oracleList, oracleObject, oracleWatchFrame } from '../helpers/protobufjs-oracle.js';

/**
 * The direct encoder (JSON straight to wire bytes) writes exactly the bytes of the protobufjs
 * encoder it replaced (kept as an oracle in test/helpers), for every built-in object of the
 * fixtures and goldens and for the edge cases of the wire format: negative and large integers,
 * int64 beyond 2^53, multi-byte UTF-8, nested lengths over 127 and 16383 bytes, JSON types that do
 * not fit their field, inline structs present or empty, CRD schemas.
 */

type Obj = Record<string, unknown>;

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CORPUS_DIRS = ['test/fixtures/defaulting', 'test/fixtures/validation', 'test/fixtures/protobuf', 'test/golden/defaulting', 'test/golden/protobuf'];

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Every object with a kind and apiVersion that has a protobuf message, found anywhere in V. */
function collect(v: unknown, out: Obj[]): void {
  if (Array.isArray(v)) for (const e of v) collect(e, out);
  else if (isObj(v)) {
    if (typeof v.kind === 'string' && typeof v.apiVersion === 'string' && hasProtobufMessage(v.apiVersion, v.kind)) out.push(v);
    for (const e of Object.values(v)) collect(e, out);
  }
}

function corpus(): Obj[] {
  const out: Obj[] = [];
  for (const dir of CORPUS_DIRS) {
    for (const f of readdirSync(join(ROOT, dir))) {
      if (f.endsWith('.json')) collect(JSON.parse(readFileSync(join(ROOT, dir, f), 'utf8')), out);
    }
  }
  return out;
}

function same(obj: Obj, label: string): void {
  assert.deepEqual(encodeProtobufObject(obj), oracleObject(obj), label);
  assert.deepEqual(encodeProtobufWatchFrame('MODIFIED', obj), oracleWatchFrame('MODIFIED', obj), `${label} watch frame`);
}

test('every built-in object of the fixtures and goldens: the same bytes as protobufjs', () => {
  const objects = corpus();
  assert.ok(objects.length > 300, `corpus of ${objects.length} objects`);
  objects.forEach((o, i) => same(o, `${String(o.kind)} #${i}`));
});

test('edge cases of the wire format: the same bytes as protobufjs', () => {
  const long = 'x'.repeat(20_000);
  same(
    {
      kind: 'Pod',
      apiVersion: 'v1',
      metadata: {
        name: 'p-ünïcødé-😀',
        generation: 2 ** 40,
        deletionGracePeriodSeconds: -5,
        annotations: { long, big: 'é'.repeat(70), [`k-${'y'.repeat(200)}`]: '' },
        labels: { a: 1, b: null, c: 'ok' },
        finalizers: ['a', 3, null, 'b'],
        creationTimestamp: '2024-01-02T03:04:05.123456789+02:00',
        deletionTimestamp: 'not a time',
      },
      spec: {
        priority: -2147483649,
        terminationGracePeriodSeconds: 1e20,
        activeDeadlineSeconds: -1.7,
        containers: [
          { name: 'c', image: 'i', ports: [{ containerPort: 4294967297 }, 'junk', null], resources: {} },
          { name: 'd', livenessProbe: { httpGet: { port: 'http' } }, readinessProbe: { httpGet: { port: 8080.9 } }, resources: { limits: { cpu: 2 } } },
        ],
        volumes: [{ name: 'v' }, { name: 'w', emptyDir: {} }, { name: 'x', emptyDir: 'bad' }, { name: 'z', hostPath: { path: '/' } }],
        nodeSelector: 'not a map',
        hostNetwork: 'yes',
        securityContext: { supplementalGroups: [1, -1, 2 ** 33] },
      },
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-01-02T03:04:05Z' }] },
    },
    'pod edge cases',
  );
  same({ kind: 'Secret', apiVersion: 'v1', metadata: { name: 's' }, data: { a: 'AAEC/w==', b: '', c: '!!' }, immutable: false }, 'secret');
  same(
    {
      kind: 'HorizontalPodAutoscaler',
      apiVersion: 'autoscaling/v2',
      metadata: { name: 'h' },
      spec: { behavior: { scaleUp: { stabilizationWindowSeconds: 0, policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }] } } },
    },
    'hpa',
  );
  same(
    {
      kind: 'CustomResourceDefinition',
      apiVersion: 'apiextensions.k8s.io/v1',
      metadata: { name: 'foos.example.com' },
      spec: {
        group: 'example.com',
        names: { plural: 'foos', kind: 'Foo' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', additionalProperties: false, items: [{ type: 'string' }], default: { a: [1, 'b'] } } },
                additionalProperties: { type: 'string' },
                dependencies: { a: ['b', 1], c: { type: 'object' } },
                items: { type: 'integer', minimum: -3.5 },
                'x-kubernetes-list-type': 'map',
              },
            },
          },
        ],
      },
    },
    'crd',
  );
  same(
    {
      kind: 'SubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: {},
      spec: { user: 'u', extra: { scopes: ['a', 'b'], none: [] }, resourceAttributes: { verb: 'get' } },
    },
    'wrapped lists',
  );
  same(
    {
      kind: 'Lease',
      apiVersion: 'coordination.k8s.io/v1',
      metadata: { name: 'l' },
      spec: { renewTime: '2024-01-02T03:04:05.123456Z', leaseDurationSeconds: 15 },
    },
    'lease',
  );
});

test('lists, streamed item by item: the same bytes as protobufjs, small and over many buffers', () => {
  const pods = corpus().filter((o) => o.kind === 'Pod');
  assert.ok(pods.length > 3);
  const items = Array.from({ length: 3000 }, (_, i) => pods[i % pods.length] ?? {});
  const meta = { resourceVersion: '12345', continue: 'abc', remainingItemCount: 7 };
  for (const n of [0, 1, 3000]) {
    const some = items.slice(0, n);
    assert.deepEqual(encodeProtobufList('PodList', 'v1', meta, some), oracleList('PodList', 'v1', meta, some), `${n} pods`);
  }
  const e = new ProtobufListEncoder('PodList', 'v1', meta);
  for (const i of items) e.add(i);
  // Pieces far smaller than the list, so that items are gathered across many of them.
  const chunks = [...e.chunks(16 * 1024)];
  assert.ok(chunks.length > 3, `${chunks.length} chunks`);
  assert.deepEqual(Buffer.concat(chunks), oracleList('PodList', 'v1', meta, items));
});

/** A PodList of stored texts, encoded item by item, is the oracle's list of their objects. */
function assertStoredPodList(texts: string[], meta: Obj): void {
  const e = new ProtobufListEncoder('PodList', 'v1', meta);
  for (const t of texts) e.addStored(t);
  const objects = texts.map((t) => JSON.parse(t) as Obj);
  assert.deepEqual(Buffer.concat([...e.chunks()]), oracleList('PodList', 'v1', meta, objects));
}

test('a watch frame of a stored text and a LIST of it share one encoding of the object, byte for byte', () => {
  const pods = corpus().filter((o) => o.kind === 'Pod');
  const texts = pods.map((p, i) => JSON.stringify({ ...p, metadata: { ...(p.metadata as Obj), name: `shared-${i}` } }));
  const meta = { resourceVersion: '10' };
  for (const t of texts) {
    const obj = JSON.parse(t) as Obj;
    assert.deepEqual(encodeProtobufWatchFrame('ADDED', obj, t), oracleWatchFrame('ADDED', obj), 'frame that encodes');
    assert.deepEqual(encodeProtobufWatchFrame('DELETED', obj, t), oracleWatchFrame('DELETED', obj), 'frame from the cache');
  }
  assertStoredPodList(texts, meta);
  // The text is the whole identity of an encoding: what a frame encoded for a text is what a LIST of
  // that text sends, and the other way round.
  const [first, second] = pods.map((p) => ({ ...p, metadata: { ...(p.metadata as Obj), name: 'other' } }));
  assert.ok(first !== undefined && second !== undefined);
  encodeProtobufWatchFrame('MODIFIED', first, 'text-a');
  const list = new ProtobufListEncoder('PodList', 'v1', meta);
  list.addStored('text-a');
  assert.deepEqual(Buffer.concat([...list.chunks()]), oracleList('PodList', 'v1', meta, [first]));
  const listed = new ProtobufListEncoder('PodList', 'v1', meta);
  listed.addStored(JSON.stringify(second));
  assert.deepEqual(encodeProtobufWatchFrame('DELETED', first, JSON.stringify(second)), oracleWatchFrame('DELETED', second));
});

test('stored items: the same bytes on the first LIST and from the item cache on the next, whole and metadata-only', () => {
  const pods = corpus().filter((o) => o.kind === 'Pod');
  const texts = pods.map((p, i) => JSON.stringify({ ...p, metadata: { ...(p.metadata as Obj), name: `cached-${i}` } }));
  const meta = { resourceVersion: '9' };
  const view = { name: 'PartialObjectMetadata', project: toPartialObjectMetadata };
  const whole = oracleList(
    'PodList',
    'v1',
    meta,
    texts.map((t) => JSON.parse(t) as Obj),
  );
  const partial = oracleList(
    'PartialObjectMetadataList',
    'meta.k8s.io/v1',
    meta,
    texts.map((t) => toPartialObjectMetadata(JSON.parse(t) as Obj)),
  );
  for (const pass of ['first', 'cached']) {
    const e = new ProtobufListEncoder('PodList', 'v1', meta);
    for (const t of texts) e.addStored(t);
    assert.deepEqual(Buffer.concat([...e.chunks()]), whole, `${pass} whole`);
    const m = new ProtobufListEncoder('PartialObjectMetadataList', 'meta.k8s.io/v1', meta);
    for (const t of texts) m.addStored(t, view);
    assert.deepEqual(Buffer.concat([...m.chunks()]), partial, `${pass} metadata-only`);
  }
  // A changed object is another text: never served from the cache.
  const changed = texts.map((t) => t.replace('"cached-', '"changed-'));
  assertStoredPodList(changed, meta);
});
