/**
 * `uidOf` of src/controllers/garbage-collector-monitors.ts reads an object's own uid from stored JSON
 * without parsing it when the uid comes first, and parses it when owner references (which hold
 * other objects' uids) come before it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { uidOf } from '../../src/controllers/garbage-collector-monitors.js';

test('the uid of canonical stored JSON, with owner references after it', () => {
  const json = JSON.stringify({ metadata: { name: 'a', uid: 'own-uid', ownerReferences: [{ uid: 'owner-uid' }] }, spec: { uid: 'x' } });
  assert.equal(uidOf(json), 'own-uid');
});

test('owner references before the uid: the object is parsed', () => {
  const json = JSON.stringify({ metadata: { ownerReferences: [{ kind: 'ReplicaSet', uid: 'owner-uid' }], name: 'a', uid: 'own-uid' } });
  assert.equal(uidOf(json), 'own-uid');
});

test('no uid at all is the empty string', () => {
  assert.equal(uidOf(JSON.stringify({ metadata: { name: 'a' } })), '');
  assert.equal(uidOf(JSON.stringify({ metadata: { name: 'a', ownerReferences: [{ uid: 'owner-uid' }] } })), '');
});
