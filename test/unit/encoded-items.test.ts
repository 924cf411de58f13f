import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodedItemsFor, forgetItem } from '../../src/codec/protobuf/encoded-items.js';

/** The same text as a new string, as a change read from storage again is. */
function copy(text: string): string {
  return Buffer.from(text).toString();
}

/** A Pod's stored text of a few kilobytes whose middle says `phase`; every phase given has the same length. */
function pod(phase: string): string {
  return JSON.stringify({
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: { name: 'web-0', namespace: 'default', resourceVersion: '7', annotations: { note: 'x'.repeat(2000) } },
    status: { phase, conditions: [{ type: 'Ready', status: 'True' }] },
    spec: { containers: [{ name: 'web', image: 'nginx', args: ['y'.repeat(1000)] }] },
  });
}

test('versions of one object whose texts differ only in the middle are kept apart, and found from a new copy of their text', () => {
  const items = encodedItemsFor('test.encoded.Pod', '');
  const running = pod('Running');
  const pending = pod('Pending');
  assert.equal(running.length, pending.length);
  items.set(running, Buffer.from('running'));
  items.set(pending, Buffer.from('pending'));
  assert.equal(items.get(copy(running))?.toString(), 'running');
  assert.equal(items.get(copy(pending))?.toString(), 'pending');
  assert.equal(items.get(pod('Unknown')), undefined, 'a third version of the same length is not found');

  // A second set of a text already there keeps the first bytes.
  items.set(copy(running), Buffer.from('again'));
  assert.equal(items.get(running)?.toString(), 'running');

  items.delete(copy(pending));
  assert.equal(items.get(pending), undefined);
  assert.equal(items.get(running)?.toString(), 'running', 'deleting one version keeps the other');
  items.delete(running);
  assert.equal(items.get(running), undefined);
  items.clear();
});

test('short texts are found and forgotten like long ones', () => {
  const items = encodedItemsFor('test.encoded.ConfigMap', '');
  const small = '{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}';
  items.set(small, Buffer.from([1, 2, 3]));
  assert.deepEqual(items.get(copy(small)), Buffer.from([1, 2, 3]));
  items.delete(copy(small));
  assert.equal(items.get(small), undefined);
});

test('forgetItem drops a text in every view of its message, and nowhere else', () => {
  const whole = encodedItemsFor('test.forget.Pod', '');
  const metadata = encodedItemsFor('test.forget.Pod', 'metadata');
  const other = encodedItemsFor('test.forget.Node', '');
  const text = pod('Running');
  for (const c of [whole, metadata, other]) c.set(text, Buffer.from('bytes'));
  forgetItem('test.forget.Pod', copy(text));
  assert.equal(whole.get(text), undefined);
  assert.equal(metadata.get(text), undefined);
  assert.equal(other.get(text)?.toString(), 'bytes', 'another message keeps its entry');
  other.clear();
});

test('an item costing more than a sixteenth of the budget is not kept', () => {
  const items = encodedItemsFor('test.encoded.Huge', '');
  const huge = JSON.stringify({ kind: 'ConfigMap', data: { v: 'z'.repeat(9 * 1024 * 1024) } });
  items.set(huge, Buffer.from('huge'));
  assert.equal(items.get(huge), undefined);
});
