/**
 * The list that holds a priority level's executing requests: members in the order they joined,
 * removable from anywhere through the node `add` returned, a removed node cleared and ignored when
 * removed again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemberList } from '../../src/flowcontrol/member-list.js';

test('members are listed in the order they joined, whichever leave', () => {
  const list = new MemberList<string>();
  const a = list.add('a');
  const b = list.add('b');
  const c = list.add('c');
  const d = list.add('d');
  assert.deepEqual([...list], ['a', 'b', 'c', 'd']);
  list.remove(b);
  assert.deepEqual([...list], ['a', 'c', 'd']);
  list.remove(a);
  list.remove(d);
  assert.deepEqual([...list], ['c']);
  assert.equal(list.size, 1);
  list.add('e');
  assert.deepEqual([...list], ['c', 'e']);
  list.remove(c);
  assert.equal(list.first?.value, 'e');
});

test('a removed node points at nothing and a second removal changes nothing', () => {
  const list = new MemberList<number>();
  const nodes = [1, 2, 3].map((n) => list.add(n));
  assert.equal(list.remove(nodes[1]), true);
  assert.equal(nodes[1].prev, undefined);
  assert.equal(nodes[1].next, undefined);
  assert.equal(list.remove(nodes[1]), false);
  assert.equal(list.size, 2);
  assert.deepEqual([...list], [1, 3]);
  list.remove(nodes[0]);
  list.remove(nodes[2]);
  list.remove(nodes[2]);
  assert.equal(list.size, 0);
  assert.equal(list.first, undefined);
  assert.deepEqual([...list], []);
  // The only member, removed: the list is empty, and adding starts it again.
  const only = list.add(9);
  list.remove(only);
  list.remove(only);
  assert.equal(list.size, 0);
  list.add(10);
  assert.deepEqual([...list], [10]);
});

test('walking from first through next sees every member once', () => {
  const list = new MemberList<number>();
  const nodes = Array.from({ length: 100 }, (_, i) => list.add(i));
  for (let i = 0; i < 100; i += 3) list.remove(nodes[i]);
  const walked: number[] = [];
  for (let n = list.first; n !== undefined; n = n.next) walked.push(n.value);
  assert.deepEqual(walked, [...list]);
  assert.equal(walked.length, list.size);
  assert.ok(walked.every((v) => v % 3 !== 0));
});
