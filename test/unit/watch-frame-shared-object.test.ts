/**
 * Watch frames built from an object a selector already parsed (event-encoding.ts objectFrame's
 * `parsed`): that object is shared by every watch of the change, so building any frame from it must
 * leave it untouched and give exactly the bytes parsing the stored JSON gives.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CustomResourceFacts } from '../../src/catalog/custom-resource-facts.js';
import { encodedEvent, encodingKey, objectFrame, type WatchEncoding } from '../../src/watch/event-encoding.js';
import { cachedStoredMessage, encodeProtobufWatchFrame } from '../../src/codec/protobuf/protobuf-codec.js';
import type { ChangeEvent } from '../../src/storage/storage.js';
import type { Obj } from '../../src/api/object-util.js';
import { printerOf } from '../../src/strategy/strategies.js';

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const pod = {
  kind: 'Pod',
  apiVersion: 'v1',
  metadata: {
    name: 'web-1',
    namespace: 'default',
    uid: '6b7c1f0e-0d3a-4a55-9c1e-2f4c8e9d1a01',
    resourceVersion: '42',
    creationTimestamp: '2026-11-30T10:00:00Z',
    labels: { app: 'web' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f', uid: 'b1d2e3f4-0000-4000-8000-000000000001', controller: true }],
    managedFields: [
      {
        manager: 'kube-controller-manager',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-11-30T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': {} },
      },
    ],
  },
  spec: { nodeName: 'node-1', containers: [{ name: 'web', image: 'nginx:1.27', resources: { limits: { cpu: '500m', memory: '128Mi' } } }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-30T10:00:05Z' }] },
};

const encodings: Record<string, WatchEncoding> = {
  protobuf: { representation: 'object', protobuf: true },
  'protobuf metadata': { representation: 'PartialObjectMetadata', protobuf: true },
  'JSON metadata': { representation: 'PartialObjectMetadata', protobuf: false },
  'JSON Table': { representation: 'Table', protobuf: false },
};

test('frames from a shared parsed object equal frames from the stored JSON, and leave it unchanged', () => {
  const facts = new CustomResourceFacts();
  const json = JSON.stringify(pod);
  for (const [name, encoding] of Object.entries(encodings)) {
    const shared = deepFreeze(JSON.parse(json) as Record<string, unknown>);
    for (const type of ['ADDED', 'MODIFIED', 'DELETED'] as const) {
      const fromJson = objectFrame(facts, type, json, 'v1', encoding);
      const fromShared = objectFrame(facts, type, json, 'v1', encoding, shared);
      assert.deepEqual(Buffer.from(fromShared), Buffer.from(fromJson), `${name} ${type}`);
    }
    assert.equal(JSON.stringify(shared), json, `${name}: the shared object is unchanged`);
  }
});

test("a Table frame with the kind's own columns leaves the shared object unchanged", () => {
  const json = JSON.stringify(pod);
  const shared = deepFreeze(JSON.parse(json) as Record<string, unknown>);
  const encoding: WatchEncoding = { representation: 'Table', protobuf: false, printer: printerOf({ group: '', resource: 'pods' }) };
  // Its Age column is computed from the clock: the frames are compared by their other cells.
  const cells = (frame: string | Buffer): unknown[][] => {
    const table = (
      JSON.parse(Buffer.from(frame).toString('utf8')) as { object: { columnDefinitions: Array<{ name: string }>; rows: Array<{ cells: unknown[] }> } }
    ).object;
    const age = table.columnDefinitions.findIndex((c) => c.name === 'Age');
    assert.ok(age >= 0, 'the pod columns have an Age');
    return table.rows.map((r) => r.cells.filter((_, i) => i !== age));
  };
  const fromShared = objectFrame(new CustomResourceFacts(), 'MODIFIED', json, 'v1', encoding, shared);
  assert.deepEqual(cells(fromShared), cells(objectFrame(new CustomResourceFacts(), 'MODIFIED', json, 'v1', encoding)));
  assert.equal(JSON.stringify(shared), json);
});

test("a deletion's protobuf frame, built from the removed object's cached message, is the frame of its parsed tombstone", () => {
  const facts = new CustomResourceFacts();
  const encoding = encodings.protobuf;
  const key = encodingKey('v1', encoding);
  const removed = JSON.stringify({ ...pod, metadata: { ...pod.metadata, resourceVersion: '99' } });
  const tombstone = JSON.stringify({ ...pod, metadata: { ...pod.metadata, resourceVersion: '1000' } });
  const modified: ChangeEvent = { type: 'MODIFIED', key: 'default/web-1', resourceVersion: '99', json: removed, prevJson: JSON.stringify(pod) };
  const deleted: ChangeEvent = { type: 'DELETED', key: 'default/web-1', resourceVersion: '1000', json: tombstone, prevJson: removed };
  // The update's frame leaves the object's message in the cache; the deletion's frame starts from it.
  assert.deepEqual(encodedEvent(facts, modified, 'MODIFIED', 'Pod', 'v1', encoding, key), encodeProtobufWatchFrame('MODIFIED', JSON.parse(removed) as Obj));
  assert.ok(cachedStoredMessage(removed), 'the removed object is cached');
  assert.deepEqual(encodedEvent(facts, deleted, 'DELETED', 'Pod', 'v1', encoding, key), encodeProtobufWatchFrame('DELETED', JSON.parse(tombstone) as Obj));
  // Neither the removed version nor the deletion's stays cached: no LIST serves them again.
  assert.equal(cachedStoredMessage(removed), undefined);
  assert.equal(cachedStoredMessage(tombstone), undefined);
});
