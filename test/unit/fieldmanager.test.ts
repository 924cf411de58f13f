/** The field-set library of src/fieldmanager/: path elements, fieldsV1, comparison, entries and the Update pipeline. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeFieldsV1, fieldsV1ToSet, FieldsV1Error, setToFieldsV1 } from '../../src/fieldmanager/fields-v1.js';
import { FieldSet } from '../../src/fieldmanager/field-set.js';
import { deserializePathElement, fieldElement as f, keyElement, serializePathElement } from '../../src/fieldmanager/path-element.js';
import { compareObjects } from '../../src/fieldmanager/compare-objects.js';
import { smdTypeOf } from '../../src/fieldmanager/smd-type.js';
import { schemaForKind } from '../../src/schema/openapi-schema.js';
import { decodeManagedFields, encodeManagedFields } from '../../src/fieldmanager/managed-fields.js';
import { updateManagedFields } from '../../src/fieldmanager/update-managed-fields.js';
import { managerOrUserAgent } from '../../src/fieldmanager/manager-name.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Records an update of `live` into `next` by `manager` (v1, no schema, at 00:01:00). */
function recordUntypedUpdate(live: Record<string, unknown>, next: Record<string, unknown>, manager: string): void {
  updateManagedFields(live, next, {
    manager,
    apiVersion: 'v1',
    subresource: '',
    type: smdTypeOf(undefined),
    resetFields: undefined,
    now: '2026-01-01T00:01:00Z',
    sent: undefined,
  });
}

test('every fieldsV1 kube-apiserver wrote in the goldens decodes and re-encodes byte for byte', () => {
  let count = 0;
  for (const file of ['configmaps.json', 'deployments.json', 'pods.json', 'services.json']) {
    const golden = JSON.parse(readFileSync(join(root, 'test', 'golden', 'managedfields', file), 'utf8')) as {
      sequences: { steps: { managedFields: { fieldsV1: unknown }[] }[] }[];
    };
    for (const seq of golden.sequences)
      for (const step of seq.steps)
        for (const e of step.managedFields) {
          assert.equal(JSON.stringify(setToFieldsV1(fieldsV1ToSet(e.fieldsV1))), JSON.stringify(e.fieldsV1));
          count++;
        }
  }
  assert.ok(count > 50);
});

test('fieldsV1 is canonical only when it is exactly what encoding its set writes', () => {
  const canonical = {
    'f:metadata': { 'f:labels': { '.': {}, 'f:a': {}, 'f:b': {} } },
    'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {} } } },
  };
  assert.equal(decodeFieldsV1(canonical).canonical, true);
  assert.equal(JSON.stringify(setToFieldsV1(decodeFieldsV1(canonical).set)), JSON.stringify(canonical));
  const written = [
    { 'f:spec': {}, 'f:metadata': {} }, // keys out of order
    { 'f:labels': { 'f:a': {}, '.': {} } }, // "." not first
    { 'f:labels': { '.': {} } }, // a lone "." is written {}
    { 'f:labels': { '.': { x: {} }, 'f:a': {} } }, // "." holding something
    { '.': {}, 'f:a': {} }, // "." at the root
    { 'f:ports': { 'k:{"protocol":"TCP","port":80}': {} } }, // key fields not in kube's order
    { 'f:a': {}, 'z:unknown': {} }, // an unknown element type, skipped
  ];
  for (const fields of written) {
    const { set, canonical: isCanonical } = decodeFieldsV1(fields);
    assert.equal(isCanonical, false, JSON.stringify(fields));
    assert.notEqual(JSON.stringify(setToFieldsV1(set)), JSON.stringify(fields), JSON.stringify(fields));
  }
});

test('a key reads the same every time it is met, short or long, spelled canonically or not', () => {
  const long = `f:${'x'.repeat(300)}`;
  const fields = { [long]: {}, 'f:ports': { 'k:{"protocol":"TCP","port":80}': {}, 'k:{"port":81,"protocol":"TCP"}': {} } };
  const first = decodeFieldsV1(fields);
  for (let i = 0; i < 3; i++) {
    const again = decodeFieldsV1(fields);
    assert.equal(again.canonical, false);
    assert.equal(JSON.stringify(setToFieldsV1(again.set)), JSON.stringify(setToFieldsV1(first.set)));
  }
  assert.deepEqual(Object.keys(setToFieldsV1(first.set)['f:ports']), ['k:{"port":80,"protocol":"TCP"}', 'k:{"port":81,"protocol":"TCP"}']);
  assert.deepEqual(Object.keys(setToFieldsV1(first.set)), ['f:ports', long]);
});

test('an update writes every entry canonically, also one it does not touch whose stored fieldsV1 was not', () => {
  const stored = (fieldsV1: unknown): Record<string, unknown>[] => [
    { manager: 'creator', operation: 'Update', apiVersion: 'v1', time: '2026-01-01T00:00:00Z', fieldsType: 'FieldsV1', fieldsV1 },
  ];
  const update = (fieldsV1: unknown): unknown => {
    const live = { metadata: { uid: 'u', managedFields: stored(fieldsV1) }, data: { a: '1', b: '2' } };
    const next: Record<string, unknown> = { metadata: { uid: 'u', managedFields: stored(fieldsV1) }, data: { a: '1', b: '2', c: '3' } };
    recordUntypedUpdate(live, next, 'writer');
    return (next.metadata as { managedFields: { manager: string; fieldsV1: unknown }[] }).managedFields.map((e) => [e.manager, e.fieldsV1]);
  };
  const expected = [
    ['creator', { 'f:data': { '.': {}, 'f:a': {}, 'f:b': {} } }],
    ['writer', { 'f:data': { 'f:c': {} } }],
  ];
  assert.equal(JSON.stringify(update({ 'f:data': { '.': {}, 'f:a': {}, 'f:b': {} } })), JSON.stringify(expected));
  assert.equal(JSON.stringify(update({ 'f:data': { 'f:b': {}, 'f:a': {}, '.': {} } })), JSON.stringify(expected));
});

test('path elements: kube key order and JSON, values, indexes, fields raw', () => {
  assert.equal(
    serializePathElement(
      keyElement([
        ['protocol', 'TCP'],
        ['containerPort', 80],
      ]),
    ),
    'k:{"containerPort":80,"protocol":"TCP"}',
  );
  assert.equal(serializePathElement({ kind: 'value', value: 'a<b' }), 'v:"a\\u003cb"');
  assert.equal(serializePathElement({ kind: 'index', index: 3 }), 'i:3');
  assert.equal(serializePathElement(f('app.kubernetes.io/name')), 'f:app.kubernetes.io/name');
  assert.deepEqual(
    deserializePathElement('k:{"b":1,"a":"x"}'),
    keyElement([
      ['a', 'x'],
      ['b', 1],
    ]),
  );
  assert.throws(() => deserializePathElement('k:{bad'));
});

test('fieldsV1: fields before keys before values, "." first for a member with children, unknown element types skipped', () => {
  const s = FieldSet.of(
    [f('spec'), f('ports'), keyElement([['port', 80]])],
    [f('spec'), f('ports'), keyElement([['port', 80]]), f('port')],
    [f('spec'), f('ports')],
    [f('metadata'), f('finalizers'), { kind: 'value', value: 'b' }],
    [f('metadata'), f('finalizers'), { kind: 'value', value: 'a' }],
  );
  assert.equal(
    JSON.stringify(setToFieldsV1(s)),
    '{"f:metadata":{"f:finalizers":{"v:\\"a\\"":{},"v:\\"b\\"":{}}},"f:spec":{"f:ports":{".":{},"k:{\\"port\\":80}":{".":{},"f:port":{}}}}}',
  );
  assert.ok(fieldsV1ToSet({ 'f:a': {}, 'x:future': { 'f:b': {} } }).equals(FieldSet.of([f('a')])));
  assert.throws(() => fieldsV1ToSet({ 'k:{': {} }), FieldsV1Error);
  assert.throws(() => fieldsV1ToSet({ 'f:a': 1 }), FieldsV1Error);
});

test('set algebra: difference keeps children of a removed member, recursive difference drops them', () => {
  const s = FieldSet.of([f('status')], [f('status'), f('phase')], [f('spec'), f('x')]);
  const status = FieldSet.of([f('status')]);
  assert.ok(s.difference(status).equals(FieldSet.of([f('status'), f('phase')], [f('spec'), f('x')])));
  assert.ok(s.recursiveDifference(status).equals(FieldSet.of([f('spec'), f('x')])));
  assert.ok(s.intersection(FieldSet.of([f('spec'), f('x')], [f('other')])).equals(FieldSet.of([f('spec'), f('x')])));
});

/** A set of random paths over a small alphabet of fields, keys, values and indexes (so sets overlap). */
function randomSet(next: () => number): FieldSet {
  const elements = [
    f('a'),
    f('b'),
    f('spec'),
    f('status'),
    keyElement([['name', 'c']]),
    { kind: 'value' as const, value: 'x' },
    { kind: 'index' as const, index: 0 },
  ];
  const set = new FieldSet();
  const paths = Math.floor(next() * 12);
  for (let i = 0; i < paths; i++) {
    const depth = 1 + Math.floor(next() * 4);
    set.insert(Array.from({ length: depth }, () => elements[Math.floor(next() * elements.length)]));
  }
  return set;
}

test('set algebra in place (remove, removeRecursively) leaves what difference and recursiveDifference return; equals and covers agree with them', () => {
  let seed = 7;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  for (let i = 0; i < 2000; i++) {
    const a = randomSet(next);
    const b = randomSet(next);
    const text = (s: FieldSet): string => JSON.stringify(setToFieldsV1(s));
    const inPlace = a.clone();
    inPlace.remove(b);
    assert.equal(text(inPlace), text(a.difference(b)));
    const recursive = a.clone();
    recursive.removeRecursively(b);
    assert.equal(text(recursive), text(a.recursiveDifference(b)));
    assert.equal(a.covers(b), b.difference(a).empty());
    assert.equal(a.equals(b), text(a) === text(b));
    assert.ok(a.equals(a.clone()));
  }
});

test('a writer that owns what it owned before keeps its entry as stored, written canonically', () => {
  const entry = (fieldsV1: unknown, time: string): Record<string, unknown> => ({
    manager: 'renewer',
    operation: 'Update',
    apiVersion: 'v1',
    time,
    fieldsType: 'FieldsV1',
    fieldsV1,
  });
  const renew = (fieldsV1: unknown): Record<string, unknown>[] => {
    const live = { metadata: { uid: 'u', managedFields: [entry(fieldsV1, '2026-01-01T00:00:00Z')] }, spec: { holder: 'n', renewTime: 't1' } };
    const next: Record<string, unknown> = {
      metadata: { uid: 'u', managedFields: [entry(fieldsV1, '2026-01-01T00:00:00Z')] },
      spec: { holder: 'n', renewTime: 't2' },
    };
    recordUntypedUpdate(live, next, 'renewer');
    return (next.metadata as { managedFields: Record<string, unknown>[] }).managedFields;
  };
  const canonical = { 'f:spec': { '.': {}, 'f:holder': {}, 'f:renewTime': {} } };
  assert.deepEqual(renew(canonical), [entry(canonical, '2026-01-01T00:01:00Z')]);
  assert.equal(JSON.stringify(renew({ 'f:spec': { 'f:renewTime': {}, 'f:holder': {}, '.': {} } })), JSON.stringify([entry(canonical, '2026-01-01T00:01:00Z')]));
  // A field it did not own before is added to its entry.
  const fewer = renew({ 'f:spec': { 'f:holder': {} } });
  assert.equal(JSON.stringify(fewer[0].fieldsV1), JSON.stringify({ 'f:spec': { 'f:holder': {}, 'f:renewTime': {} } }));
});

test('comparison under the schema: set lists by value, list maps by key, atomic selectors as one leaf', () => {
  const type = smdTypeOf(schemaForKind('apps', 'v1', 'Deployment'));
  const live = { metadata: { finalizers: ['a'] }, spec: { selector: { matchLabels: { x: '1' } }, template: { spec: { containers: null } } } };
  const next = {
    metadata: { finalizers: ['a', 'b'] },
    spec: { selector: { matchLabels: { x: '2' } }, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
  };
  const cmp = compareObjects(live, next, type);
  assert.deepEqual(setToFieldsV1(cmp.added), {
    'f:metadata': { 'f:finalizers': { 'v:"b"': {} } },
    'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } },
  });
  assert.deepEqual(setToFieldsV1(cmp.modified), { 'f:spec': { 'f:selector': {} } });
  assert.ok(cmp.removed.empty());
});

test('entries sort by operation, time, manager; more than ten Update managers merge the oldest into ancient-changes', () => {
  const entries = Array.from({ length: 12 }, (_, i) => ({
    manager: `m${String(11 - i).padStart(2, '0')}`,
    operation: 'Update',
    apiVersion: 'v1',
    time: `2026-01-01T00:00:${String(11 - i).padStart(2, '0')}Z`,
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:data': { [`f:k${11 - i}`]: {} } },
  }));
  const encoded = encodeManagedFields(decodeManagedFields(entries)) ?? [];
  assert.deepEqual(
    encoded.map((e) => e.manager),
    entries.map((e) => e.manager).reverse(),
  );
  const obj: Record<string, unknown> = { metadata: { uid: 'u', managedFields: entries }, data: { new: 'x' } };
  recordUntypedUpdate({ metadata: { uid: 'u', managedFields: entries } }, obj, 'z');
  const mf = (obj.metadata as { managedFields: { manager: string; time: string; fieldsV1: unknown }[] }).managedFields;
  assert.deepEqual(
    mf.map((e) => e.manager),
    ['ancient-changes', 'm04', 'm05', 'm06', 'm07', 'm08', 'm09', 'm10', 'm11', 'z'],
  );
  assert.deepEqual(mf[0], {
    manager: 'ancient-changes',
    operation: 'Update',
    apiVersion: 'v1',
    time: '2026-01-01T00:00:03Z',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:data': { 'f:k0': {}, 'f:k1': {}, 'f:k2': {}, 'f:k3': {} } },
  });
});

test('manager names come from fieldManager, else the User-Agent before its first slash, printable and at most 128 bytes', () => {
  assert.equal(managerOrUserAgent('mine', 'kubectl/v1.36'), 'mine');
  assert.equal(managerOrUserAgent('', 'kubectl/v1.36.0 (linux/amd64) kubernetes/abc'), 'kubectl');
  assert.equal(managerOrUserAgent('', 'Go-http-client/1.1'), 'Go-http-client');
  assert.equal(managerOrUserAgent('', 'a\u0001b'), 'ab');
  assert.equal(managerOrUserAgent('', 'x'.repeat(200)), 'x'.repeat(128));
  assert.equal(managerOrUserAgent('', undefined), '');
});
