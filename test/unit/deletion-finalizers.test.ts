/**
 * The finalizers DELETE puts on an object for garbage collection, against kube's generic store
 * (deletionFinalizersForGarbageCollection): options first, then existing finalizers, then the
 * type's default; and the `--controllers` name rules of kube-controller-manager.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultGarbageCollectionPolicy, deletionFinalizers } from '../../src/rest/deletion-finalizers.js';
import { GARBAGE_COLLECTOR, isControllerEnabled, validateControllerList } from '../../src/controllers/controller-names.js';

const cm = { group: '', version: 'v1', resource: 'configmaps' };
const rc = { group: '', version: 'v1', resource: 'replicationcontrollers' };
const job = { group: 'batch', version: 'v1', resource: 'jobs' };
const rs = { group: 'apps', version: 'v1', resource: 'replicasets' };
const events = { group: 'events.k8s.io', version: 'v1', resource: 'events' };

test('type defaults: core/v1 ReplicationControllers and batch/v1 Jobs orphan, events take no part, the rest delete dependents', () => {
  assert.equal(defaultGarbageCollectionPolicy(rc), 'OrphanDependents');
  assert.equal(defaultGarbageCollectionPolicy(job), 'OrphanDependents');
  assert.equal(defaultGarbageCollectionPolicy(rs), 'DeleteDependents');
  assert.equal(defaultGarbageCollectionPolicy(cm), 'DeleteDependents');
  assert.equal(defaultGarbageCollectionPolicy({ group: '', version: 'v1', resource: 'events' }), 'Unsupported');
  assert.equal(defaultGarbageCollectionPolicy(events), 'Unsupported');
});

test('explicit options win over existing finalizers, which win over the default', () => {
  assert.deepEqual(deletionFinalizers(cm, [], {}), { changed: false, finalizers: [] });
  assert.deepEqual(deletionFinalizers(cm, ['a'], { propagationPolicy: 'Foreground' }), { changed: true, finalizers: ['a', 'foregroundDeletion'] });
  assert.deepEqual(deletionFinalizers(cm, [], { propagationPolicy: 'Orphan' }), { changed: true, finalizers: ['orphan'] });
  assert.deepEqual(deletionFinalizers(cm, [], { orphanDependents: true }), { changed: true, finalizers: ['orphan'] });
  assert.deepEqual(deletionFinalizers(rc, [], {}), { changed: true, finalizers: ['orphan'] });
  assert.deepEqual(deletionFinalizers(rc, [], { orphanDependents: false }), { changed: false, finalizers: [] });
  assert.deepEqual(deletionFinalizers(rc, [], { propagationPolicy: 'Background' }), { changed: false, finalizers: [] });
  // An existing finalizer stands for the policy chosen before.
  assert.deepEqual(deletionFinalizers(rc, ['foregroundDeletion'], {}), { changed: false, finalizers: ['foregroundDeletion'] });
  assert.deepEqual(deletionFinalizers(cm, ['orphan', 'x'], {}), { changed: false, finalizers: ['orphan', 'x'] });
  // A new policy replaces the old finalizer; Background removes both.
  assert.deepEqual(deletionFinalizers(cm, ['orphan', 'x'], { propagationPolicy: 'Foreground' }), { changed: true, finalizers: ['x', 'foregroundDeletion'] });
  assert.deepEqual(deletionFinalizers(cm, ['foregroundDeletion', 'x'], { propagationPolicy: 'Background' }), { changed: true, finalizers: ['x'] });
  // Events never get collector finalizers.
  assert.deepEqual(deletionFinalizers(events, [], { propagationPolicy: 'Foreground' }), { changed: false, finalizers: [] });
});

test('--controllers: first explicit name or -name decides, * enables, aliases count, unknown names are refused', () => {
  assert.equal(isControllerEnabled(GARBAGE_COLLECTOR, ['*']), true);
  assert.equal(isControllerEnabled(GARBAGE_COLLECTOR, []), false);
  assert.equal(isControllerEnabled(GARBAGE_COLLECTOR, ['*', '-garbage-collector']), false);
  assert.equal(isControllerEnabled(GARBAGE_COLLECTOR, ['-garbagecollector', '*']), false);
  assert.equal(isControllerEnabled(GARBAGE_COLLECTOR, ['garbage-collector-controller']), true);
  assert.doesNotThrow(() => validateControllerList(['*', '-garbage-collector-controller']));
  assert.throws(() => validateControllerList(['-nope']), { message: '"nope" is not in the list of known controllers' });
});
