import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRejections, rejectionsBetween } from '../../bench/control-plane/rejections.js';

const line = (schema: string, level: string, reason: string, n: number): string =>
  `apiserver_flowcontrol_rejected_requests_total{flow_schema="${schema}",priority_level="${level}",reason="${reason}"} ${n}`;

describe('bench APF rejections from the rejected-requests counter', () => {
  test('summed per level and reason; a later scrape minus an earlier one keeps what grew', () => {
    const before = parseRejections(
      [line('kube-scheduler', 'workload-high', 'queue-full', 3), line('service-accounts', 'workload-low', 'time-out', 1)].join('\n'),
    );
    const after = parseRejections(
      [
        '# TYPE apiserver_flowcontrol_rejected_requests_total counter',
        line('kube-scheduler', 'workload-high', 'queue-full', 10),
        line('kube-controller-manager', 'workload-high', 'queue-full', 5),
        line('service-accounts', 'workload-low', 'time-out', 1),
        'apiserver_flowcontrol_dispatched_requests_total{flow_schema="x",priority_level="y"} 99',
      ].join('\n'),
    );
    assert.deepEqual(Object.fromEntries(after), { 'workload-high queue-full': 15, 'workload-low time-out': 1 });
    assert.deepEqual(Object.fromEntries(rejectionsBetween(before, after)), { 'workload-high queue-full': 12 });
  });
});
