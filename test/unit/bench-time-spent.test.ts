import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseQueueWaitBuckets, parseRedisCommandBuckets } from '../../bench/control-plane/time-spent.js';
import { countOf, quantileOf, subtractBuckets } from '../../bench/control-plane/request-latency.js';

const bucket = (schema: string, level: string, execute: string, le: string, n: number): string =>
  `apiserver_flowcontrol_request_wait_duration_seconds_bucket{execute="${execute}",flow_schema="${schema}",priority_level="${level}",le="${le}"} ${n}`;

describe('bench APF queue wait from the request-wait histogram', () => {
  test('executed requests summed per priority level; rejected ones and other series left out', () => {
    const text = [
      '# TYPE apiserver_flowcontrol_request_wait_duration_seconds histogram',
      bucket('kube-controller-manager', 'workload-high', 'true', '0.005', 60),
      bucket('kube-controller-manager', 'workload-high', 'true', '0.25', 90),
      bucket('kube-controller-manager', 'workload-high', 'true', '+Inf', 100),
      bucket('kube-scheduler', 'workload-high', 'true', '0.005', 40),
      bucket('kube-scheduler', 'workload-high', 'true', '0.25', 100),
      bucket('kube-scheduler', 'workload-high', 'true', '+Inf', 100),
      bucket('kube-scheduler', 'workload-high', 'false', '+Inf', 7),
      bucket('exempt', 'exempt', 'true', '+Inf', 5),
      'apiserver_flowcontrol_request_wait_duration_seconds_sum{execute="true",flow_schema="exempt",priority_level="exempt"} 0',
      'apiserver_request_duration_seconds_bucket{verb="GET",scope="resource",le="+Inf"} 9',
    ].join('\n');
    const waits = parseQueueWaitBuckets(text);
    assert.deepEqual([...waits.keys()].sort(), ['exempt', 'workload-high']);
    const high = waits.get('workload-high');
    assert.ok(high);
    assert.equal(countOf(high), 200);
    assert.deepEqual(Object.fromEntries(high), { '0.005': 100, '0.25': 190, Infinity: 200 });
    // Half of the 200 waited at most 5 ms: the median is at that bound.
    assert.equal(quantileOf(high, 0.5), 0.005);
  });

  test('a later scrape minus an earlier one is what waited between them', () => {
    const before = parseQueueWaitBuckets([bucket('s', 'workload-low', 'true', '0.005', 10), bucket('s', 'workload-low', 'true', '+Inf', 10)].join('\n'));
    const after = parseQueueWaitBuckets([bucket('s', 'workload-low', 'true', '0.005', 10), bucket('s', 'workload-low', 'true', '+Inf', 30)].join('\n'));
    const delta = subtractBuckets(after, before).get('workload-low');
    assert.ok(delta);
    assert.equal(countOf(delta), 20);
    // All 20 waited longer than 5 ms: the highest finite bound is reported.
    assert.equal(quantileOf(delta, 0.99), 0.005);
  });

  test("Capstan's Redis command time per command; a server without the series has none", () => {
    const text = [
      'capstan_redis_request_duration_seconds_bucket{command="create-5.lua",le="0.001"} 30',
      'capstan_redis_request_duration_seconds_bucket{command="create-5.lua",le="+Inf"} 40',
      'capstan_redis_request_duration_seconds_bucket{command="HGET",le="0.001"} 5',
      'capstan_redis_request_duration_seconds_bucket{command="HGET",le="+Inf"} 5',
      'capstan_redis_request_duration_seconds_count{command="HGET"} 5',
    ].join('\n');
    const byCommand = parseRedisCommandBuckets(text);
    assert.deepEqual([...byCommand.keys()].sort(), ['HGET', 'create-5.lua']);
    assert.equal(countOf(byCommand.get('create-5.lua') ?? new Map()), 40);
    assert.equal(parseRedisCommandBuckets(bucket('s', 'workload-low', 'true', '+Inf', 3)).size, 0);
  });
});
