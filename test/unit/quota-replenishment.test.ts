/**
 * Which changes of counted objects make the resourcequota controller recount (kube's QuotaMonitor
 * and its update filter): deletions and updates that change usage or scope, never creations, which
 * admission charged already (a recount racing an admitted create would let the next create overspend).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayReleaseQuota } from '../../src/controllers/resource-quota-controller.js';
import type { ChangeEvent } from '../../src/storage/storage.js';

const pod = (phase: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', labels: { a: 'b' } },
  spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '100m' } } }], ...extra },
  status: { phase },
});

function change(type: ChangeEvent['type'], after: unknown, before?: unknown): ChangeEvent {
  return { type, key: 'ns/p', resourceVersion: '5', json: JSON.stringify(after), prevJson: before === undefined ? undefined : JSON.stringify(before) };
}

test('creations never recount; deletions always do', () => {
  const now = Date.now();
  assert.equal(mayReleaseQuota('pods', change('ADDED', pod('Pending')), now), false);
  assert.equal(mayReleaseQuota('secrets', change('ADDED', { metadata: { name: 's' } }), now), false);
  assert.equal(mayReleaseQuota('pods', change('DELETED', pod('Running'), pod('Running')), now), true);
  assert.equal(mayReleaseQuota('secrets', change('DELETED', { metadata: { name: 's' } }), now), true);
});

test('updates recount when they change usage or scope, not otherwise', () => {
  const now = Date.now();
  // Scheduled, running, relabelled: the same usage.
  assert.equal(mayReleaseQuota('pods', change('MODIFIED', pod('Running'), pod('Pending')), now), false);
  const relabelled = pod('Running');
  (relabelled.metadata as { labels: Record<string, string> }).labels = { a: 'c' };
  assert.equal(mayReleaseQuota('pods', change('MODIFIED', relabelled, pod('Running')), now), false);
  assert.equal(mayReleaseQuota('secrets', change('MODIFIED', { metadata: { name: 's' }, data: { x: 'eQ==' } }, { metadata: { name: 's' } }), now), false);
  // Terminal: the pod no longer counts.
  assert.equal(mayReleaseQuota('pods', change('MODIFIED', pod('Succeeded'), pod('Running')), now), true);
  assert.equal(mayReleaseQuota('pods', change('MODIFIED', pod('Failed'), pod('Running')), now), true);
  // Into the Terminating scope.
  assert.equal(mayReleaseQuota('pods', change('MODIFIED', pod('Running', { activeDeadlineSeconds: 30 }), pod('Running')), now), true);
  // A service changing type changes services.nodeports / services.loadbalancers.
  const service = (type: string): unknown => ({ metadata: { name: 's' }, spec: { type, ports: [{ port: 80 }] } });
  assert.equal(mayReleaseQuota('services', change('MODIFIED', service('ClusterIP'), service('NodePort')), now), true);
  assert.equal(mayReleaseQuota('services', change('MODIFIED', service('ClusterIP'), service('ClusterIP')), now), false);
  // Without the previous state: recount.
  assert.equal(mayReleaseQuota('pods', change('MODIFIED', pod('Running')), now), true);
});
