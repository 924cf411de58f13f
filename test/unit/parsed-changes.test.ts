/**
 * A change's objects are parsed once per process and shared by its readers (watch selectors and
 * frames, the node authorizer's graph): the same object for the same change, undefined for an
 * object that does not decode, and a fresh parse once the change is no longer recent. Collections
 * (the in-server controllers' informers) read the same parse.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventDecodes, parsedIfRecent, parsedObject, parsedObjects } from '../../src/storage/parsed-changes.js';
import type { ChangeEvent } from '../../src/storage/storage.js';
import { MemoryStorage } from '../../src/storage/memory-storage.js';
import { WatchedCollection, type CollectionChange } from '../../src/storage/watched-collection.js';

function change(rv: number, json: string, prevJson?: string): ChangeEvent {
  return prevJson === undefined
    ? { type: 'MODIFIED', key: `default/p${rv}`, resourceVersion: String(rv), json }
    : { type: 'MODIFIED', key: `default/p${rv}`, resourceVersion: String(rv), json, prevJson };
}

test('every reader of a change gets the one parse of its object', () => {
  const e = change(1, '{"metadata":{"name":"a","resourceVersion":"1"},"spec":{"nodeName":"n1"}}', '{"metadata":{"name":"a"},"spec":{}}');
  assert.equal(parsedIfRecent(e), undefined, 'nothing parsed before a reader asks');
  const first = parsedObject(e);
  assert.deepEqual(first, { metadata: { name: 'a', resourceVersion: '1' }, spec: { nodeName: 'n1' } });
  assert.equal(parsedObject(e), first);
  assert.equal(parsedIfRecent(e), first);
  const both = parsedObjects(e);
  assert.equal(both.current, first);
  assert.deepEqual(both.previous, { metadata: { name: 'a' }, spec: {} });
  assert.equal(parsedObjects(e).previous, both.previous);
  assert.equal(eventDecodes(e), true);
});

test('an object that is not JSON, or has no metadata, does not decode', () => {
  for (const json of ['{"metadata":', '[1,2]', '{"kind":"Pod"}']) {
    const e = change(2, json);
    assert.equal(parsedObject(e), undefined, json);
    assert.equal(eventDecodes(e), false, json);
  }
});

test('a change read again after thousands of others is parsed again, to an equal object', () => {
  const e = change(3, '{"metadata":{"name":"old"}}');
  const first = parsedObject(e);
  for (let i = 0; i < 5000; i++) parsedObject(change(10 + i, `{"metadata":{"name":"x${i}"}}`));
  assert.equal(parsedIfRecent(e), undefined);
  const again = parsedObject(e);
  assert.notEqual(again, first);
  assert.deepEqual(again, first);
});

test("a change's previous object is its key's last parse when the texts are equal, and a parse of its own otherwise", () => {
  const v1 = '{"metadata":{"name":"k","resourceVersion":"101"},"spec":{"nodeName":"n1"}}';
  const v2 = '{"metadata":{"name":"k","resourceVersion":"102"},"spec":{"nodeName":"n2"}}';
  const v3 = '{"metadata":{"name":"k","resourceVersion":"103"},"spec":{"nodeName":"n3"}}';
  const key = 'default/reused';
  const created: ChangeEvent = { type: 'ADDED', key, resourceVersion: '101', json: v1 };
  // Texts read from a stream are other strings with the same characters.
  const modified: ChangeEvent = { type: 'MODIFIED', key, resourceVersion: '102', json: v2, prevJson: [v1].join('') };
  const deleted: ChangeEvent = { type: 'DELETED', key, resourceVersion: '103', json: v3, prevJson: v2 };
  const first = parsedObject(created);
  assert.equal(parsedObjects(modified).previous, first, 'the previous object of an update is the parse of the change before it');
  const second = parsedObject(modified);
  assert.equal(parsedObjects(deleted).previous, second);

  // The previous text differs from the key's last parse (a change this process did not read): its own parse.
  const other: ChangeEvent = { type: 'MODIFIED', key, resourceVersion: '105', json: v3, prevJson: v1.replace('101', '104') };
  const previous = parsedObjects(other).previous;
  assert.notEqual(previous, parsedObject(deleted));
  assert.deepEqual(previous, { metadata: { name: 'k', resourceVersion: '104' }, spec: { nodeName: 'n1' } });

  // Asked for only after the key's next change was read: still the parse it replaced.
  const a: ChangeEvent = { type: 'MODIFIED', key, resourceVersion: '106', json: v1, prevJson: v3 };
  const b: ChangeEvent = { type: 'MODIFIED', key, resourceVersion: '107', json: v2, prevJson: v1 };
  const aCurrent = parsedObject(a);
  parsedObject(b);
  assert.equal(parsedObjects(b).previous, aCurrent);
  assert.equal(parsedObjects(a).previous, parsedObject(other));
});

test('collections following one type hold the one parse of each change, and its own parse of the listed state', async () => {
  const storage = new MemoryStorage({ historyMs: 60_000 });
  await storage.create('pods', 'default/a', { metadata: { name: 'a', namespace: 'default' }, spec: { nodeName: 'n1' } });
  const abort = new AbortController();
  const seen: (Record<string, unknown> | undefined)[][] = [[], []];
  const collections = [0, 1].map(
    (i) =>
      new WatchedCollection(
        storage,
        'pods',
        (c) => seen[i].push(c.current),
        abort.signal,
        (err) => {
          throw err;
        },
      ),
  );
  try {
    for (const c of collections) await c.start();
    assert.notEqual(collections[0].get('default/a'), collections[1].get('default/a'), 'a listed object is each collection’s own');
    const stored = await storage.get('pods', 'default/a');
    await storage.update('pods', 'default/a', { metadata: { name: 'a', namespace: 'default' }, spec: { nodeName: 'n2' } }, stored?.resourceVersion ?? '');
    await storage.create('pods', 'default/b', { metadata: { name: 'b', namespace: 'default' } });
    for (const key of ['default/a', 'default/b']) {
      const held = collections[0].get(key);
      assert.ok(held !== undefined, key);
      assert.equal(collections[1].get(key), held, `${key}: one object for both collections`);
    }
    assert.deepEqual((collections[0].get('default/a') as { spec: unknown }).spec, { nodeName: 'n2' });
    assert.equal(seen[0].length, 3);
    assert.deepEqual(seen[0], seen[1]);
    assert.equal(seen[0][1], seen[1][1], 'the change reported to both is one object');
  } finally {
    abort.abort();
  }
});

test('a collection parses a change only when it is read, and says what its texts mention without parsing', async () => {
  const storage = new MemoryStorage({ historyMs: 60_000 });
  const abort = new AbortController();
  const changes: CollectionChange[] = [];
  const collection = new WatchedCollection(
    storage,
    'pods',
    (c) => changes.push(c),
    abort.signal,
    (err) => {
      throw err;
    },
  );
  const events: ChangeEvent[] = [];
  try {
    await collection.start();
    await storage.watch('pods', '1', (e) => events.push(e), abort.signal);
    await storage.create('pods', 'default/a', {
      metadata: { name: 'a', namespace: 'default' },
      spec: { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] },
    });
    await storage.create('pods', 'other/b', { metadata: { name: 'b', namespace: 'other' }, spec: {} });
    assert.equal(changes.length, 2);
    assert.equal(events.length, 2);
    for (const e of events) assert.equal(parsedIfRecent(e), undefined, `${e.key}: not parsed before anyone reads it`);
    assert.equal(changes[0].mentions('"persistentVolumeClaim"'), true);
    assert.equal(changes[1].mentions('"persistentVolumeClaim"'), false);
    assert.equal(changes[1].mentions('"other"'), true);
    assert.equal(collection.hasNamespace('other'), true);
    assert.equal(collection.hasNamespace('elsewhere'), false);
    const read = changes[0].current;
    assert.deepEqual((read as { spec: unknown }).spec, { volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'c' } }] });
    assert.equal(parsedIfRecent(events[0]), read, 'the read is the process’s one parse of the change');
    assert.equal(collection.get('default/a'), read);
    assert.equal(changes[0].current, read);
    assert.equal(parsedIfRecent(events[1]), undefined, 'the other change is still unparsed');
    assert.deepEqual([...collection.inNamespace('other')], [{ metadata: { name: 'b', namespace: 'other', resourceVersion: '3' }, spec: {} }]);
    await storage.delete('pods', 'other/b');
    assert.equal(changes.length, 3);
    assert.equal(changes[2].removed, true);
    assert.equal(changes[0].removed, false);
    assert.equal(changes[2].current, undefined);
    assert.deepEqual(changes[2].previous, { metadata: { name: 'b', namespace: 'other', resourceVersion: '3' }, spec: {} });
    assert.equal(collection.hasNamespace('other'), false);
  } finally {
    abort.abort();
  }
});
