/**
 * An object's protobuf message with its resourceVersion added or replaced (withResourceVersion, as a
 * deletion's frame is built from the removed object's message) must be byte for byte the message a
 * fresh encoding of the object at that version gives; and a watch frame built from it must be the
 * frame built by parsing and encoding the stored text. Checked over the protobuf corpus and
 * ObjectMeta's edge cases.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  decodeProtobufWatchEvent,
  encodeProtobufObject,
  encodeProtobufStoredWatchFrame,
  encodeProtobufWatchFrame,
} from '../../src/codec/protobuf/protobuf-codec.js';
import { withResourceVersion } from '../../src/codec/protobuf/version-splice.js';
import type { Obj } from '../../src/api/object-util.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const CORPUS = (
  JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'protobuf', 'objects.json'), 'utf8')) as { cases: { name: string; object: Obj }[] }
).cases.filter(
  // Lists and Status have no ObjectMeta; a CRD's own object is stored like any other.
  (c) => !['configmaplist', 'status'].includes(c.name),
);

function withVersion(obj: Obj, resourceVersion: string | undefined): Obj {
  const metadata = { ...(obj.metadata as Obj) };
  if (resourceVersion === undefined) delete metadata.resourceVersion;
  else metadata.resourceVersion = resourceVersion;
  return { ...obj, metadata };
}

/** The message of `obj` as a fresh encoding writes it: the encoded body without the envelope around it. */
function freshMessage(obj: Obj): Buffer {
  const body = encodeProtobufObject(obj);
  // magic (4) + 0x0a len typeMeta + 0x12 len raw + the empty contentEncoding and contentType (4).
  let pos = 4 + 1;
  const typeMetaLength = readVarint(body, pos);
  pos = typeMetaLength.next + typeMetaLength.value + 1;
  const raw = readVarint(body, pos);
  return body.subarray(raw.next, raw.next + raw.value);
}

function readVarint(buf: Buffer, pos: number): { value: number; next: number } {
  let value = 0;
  for (let shift = 0; ; shift += 7) {
    const b = buf[pos++] ?? 0;
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return { value, next: pos };
  }
}

/** The message of `obj` without its resourceVersion. */
function versionlessMessage(obj: Obj): Buffer {
  return freshMessage(withVersion(obj, undefined));
}

const VERSIONS = ['1', '9', '10', '4294967296', '123456789012345678901234567890'];

describe('a message with its resourceVersion added or replaced', () => {
  for (const { name, object } of CORPUS) {
    test(`${name}: equals a fresh encoding at every version length`, () => {
      const versionless = versionlessMessage(withVersion(object, '77'));
      assert.ok(versionless, 'the kind has a message');
      for (const rv of VERSIONS) {
        assert.deepEqual(withResourceVersion(versionless, rv), freshMessage(withVersion(object, rv)), `${name} at ${rv}`);
      }
    });
  }

  for (const { name, object } of CORPUS) {
    test(`${name}: a message's version replaced (a deletion's object) equals a fresh encoding at the new version`, () => {
      for (const [from, to] of [
        ['77', '78'],
        ['9', '10'],
        ['123456', '7'],
      ]) {
        assert.deepEqual(withResourceVersion(freshMessage(withVersion(object, from)), to), freshMessage(withVersion(object, to)), `${name}: ${from} -> ${to}`);
      }
    });
  }

  test('ObjectMeta whose length varint grows by a byte once the version is in', () => {
    // Sizes around 127 bytes of ObjectMeta cross the one-byte varint limit when the version is added.
    for (let pad = 80; pad < 140; pad++) {
      const obj: Obj = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'x'.repeat(pad), namespace: 'ns' }, data: { a: 'b' } };
      const versionless = versionlessMessage(obj);
      assert.ok(versionless);
      for (const rv of ['5', '12345']) {
        assert.deepEqual(withResourceVersion(versionless, rv), freshMessage(withVersion(obj, rv)), `name of ${pad}, rv ${rv}`);
        // Replaced across the limit both ways.
        assert.deepEqual(withResourceVersion(freshMessage(withVersion(obj, '1')), rv), freshMessage(withVersion(obj, rv)), `name of ${pad}, 1 -> ${rv}`);
        assert.deepEqual(withResourceVersion(freshMessage(withVersion(obj, rv)), '1'), freshMessage(withVersion(obj, '1')), `name of ${pad}, ${rv} -> 1`);
      }
    }
  });

  test('ObjectMeta with fields only below, only above, or none besides the version', () => {
    const cases: Obj[] = [
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'n', namespace: 'ns', uid: 'u-1' } },
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { generation: 3, labels: { a: 'b' }, finalizers: ['f'] } },
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: {}, data: { k: 'v' } },
      {
        kind: 'Namespace',
        apiVersion: 'v1',
        metadata: { name: 'n', creationTimestamp: '2026-12-05T01:02:03Z', annotations: { z: 'y' } },
        spec: { finalizers: ['kubernetes'] },
      },
    ];
    for (const obj of cases) {
      const versionless = versionlessMessage(obj);
      assert.ok(versionless);
      assert.deepEqual(withResourceVersion(versionless, '42'), freshMessage(withVersion(obj, '42')), JSON.stringify(obj.metadata));
    }
  });

  test('the watch frame from the shipped message is the frame of the parsed stored text', () => {
    for (const { name, object } of CORPUS) {
      const stored = withVersion(object, '9001');
      const json = JSON.stringify({ kind: stored.kind, apiVersion: stored.apiVersion, ...stored });
      const versionless = versionlessMessage(withVersion(object, undefined));
      assert.ok(versionless);
      const message = withResourceVersion(versionless, '9001');
      assert.ok(message);
      const shipped = encodeProtobufStoredWatchFrame('MODIFIED', json, message);
      assert.ok(shipped, name);
      const fresh = encodeProtobufWatchFrame('MODIFIED', JSON.parse(json) as Obj);
      assert.deepEqual(shipped, fresh, name);
      assert.equal(decodeProtobufWatchEvent(shipped.subarray(4)).type, 'MODIFIED');
    }
  });

  test('no splice into what is not an object message', () => {
    const cm: Obj = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'n', resourceVersion: '3' } };
    // A message that does not open with ObjectMeta, or is cut short.
    assert.equal(withResourceVersion(Buffer.from([0x12, 0x00]), '4'), undefined);
    const versionless = versionlessMessage(cm);
    assert.ok(versionless);
    assert.equal(withResourceVersion(versionless.subarray(0, versionless.length - 1), '4'), undefined);
    // The object given keeps its own version: only the message leaves it out.
    assert.equal((cm.metadata as Obj).resourceVersion, '3');
  });
});
